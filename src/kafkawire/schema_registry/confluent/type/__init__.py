"""``confluent/type/*.proto``: the Schema Registry's well-known Protobuf types (``confluent.type.Decimal``)."""
