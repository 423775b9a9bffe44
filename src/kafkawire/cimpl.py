"""confluent-kafka's ``confluent_kafka.cimpl`` module path: the names its C extension defines that
kafkawire has, so code importing them from there (quixstreams takes NewTopic from it; the share
consumer's exception classes, Message) renames 1:1."""

from . import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    OFFSET_STORED,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
    Uuid,
    consistent,
    fnv1a,
    libversion,
    murmur2,
    version,
)
from .admin import NewPartitions, NewTopic
from .base.model import Message, TopicPartition
from .consumer.consumer import Consumer
from .core.kafka_error import ConcurrentModificationException, IllegalStateException, KafkaError, KafkaException
from .producer import Producer
from .share_consumer.share_consumer import ShareConsumer

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "OFFSET_STORED",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_NOT_AVAILABLE",
    "ConcurrentModificationException",
    "Consumer",
    "IllegalStateException",
    "KafkaError",
    "KafkaException",
    "Message",
    "NewPartitions",
    "NewTopic",
    "Producer",
    "ShareConsumer",
    "TopicPartition",
    "Uuid",
    "consistent",
    "fnv1a",
    "libversion",
    "murmur2",
    "version",
]
