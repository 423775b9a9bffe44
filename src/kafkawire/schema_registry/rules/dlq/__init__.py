"""The dead-letter-queue rule action (``onFailure: DLQ``)."""
