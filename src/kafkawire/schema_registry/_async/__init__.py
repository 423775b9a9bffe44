"""The asyncio face of the Schema Registry client (confluent-kafka keeps the same layout)."""
