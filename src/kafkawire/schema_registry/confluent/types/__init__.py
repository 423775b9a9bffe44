"""``confluent/types/*.proto``: the older path of the Schema Registry's Protobuf types, kept for
schemas that import it."""
