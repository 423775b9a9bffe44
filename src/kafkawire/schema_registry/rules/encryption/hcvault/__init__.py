"""HashiCorp Vault transit driver (extra ``kafkawire[kms-hcvault]``)."""
