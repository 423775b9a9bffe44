"""AWS KMS driver (extra ``kafkawire[kms-aws]``)."""
