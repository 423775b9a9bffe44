"""Field and payload encryption (the ENCRYPT and ENCRYPT_PAYLOAD rules), DEK registry and KMS drivers."""
