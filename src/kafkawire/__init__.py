"""kafkawire: a Kafka client in Python that speaks the wire protocol itself."""

__version__ = "0.1.0"
