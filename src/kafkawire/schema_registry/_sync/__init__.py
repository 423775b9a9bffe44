"""The synchronous Schema Registry client and serdes (confluent-kafka keeps the same layout)."""
