"""Google Cloud KMS driver (extra ``kafkawire[kms-gcp]``)."""
