"""The clients Apache Kafka's system tests (kafkatest) drive, at confluent-kafka's module path:
``python -m kafkawire.kafkatest.verifiable_producer`` and ``...verifiable_consumer`` take the
Java verifiable clients' arguments and report what they do as JSON lines on stdout."""
