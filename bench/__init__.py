"""kafkawire's producer benchmark against confluent-kafka, aiokafka and kafka-python (bench/README.md)."""
