"""The public values every face shares: the data model (messages, topic partitions, cluster
metadata), the option table, the keyed partitioners, debug contexts. Above core/ (KafkaError is there)."""
