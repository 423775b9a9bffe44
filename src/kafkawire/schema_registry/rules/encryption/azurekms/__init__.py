"""Azure Key Vault driver (extra ``kafkawire[kms-azure]``)."""
