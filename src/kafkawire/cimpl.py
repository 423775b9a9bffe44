"""confluent-kafka's ``confluent_kafka.cimpl`` module path: the names its C extension defines, so
code importing them from there (the share consumer's exception classes, Message) renames 1:1."""

from .consumer.consumer import Consumer
from .consumer.share_consumer import ShareConsumer
from .errors import ConcurrentModificationException, IllegalStateException, KafkaError, KafkaException
from .model import Message, TopicPartition
from .producer import Producer

__all__ = [
    "ConcurrentModificationException",
    "Consumer",
    "IllegalStateException",
    "KafkaError",
    "KafkaException",
    "Message",
    "Producer",
    "ShareConsumer",
    "TopicPartition",
]
