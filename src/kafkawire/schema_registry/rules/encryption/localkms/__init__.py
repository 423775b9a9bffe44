"""The local KMS: a KEK derived from a secret, for tests and development."""
