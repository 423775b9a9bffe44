"""kafkawire: a Kafka client in Python that speaks the wire protocol itself.

``from kafkawire import Producer`` is meant as a drop-in for ``from confluent_kafka import Producer``.
"""

from typing import TYPE_CHECKING

from ._lazy_names import lazy_names
from ._version import __version__, version

if TYPE_CHECKING:
    from .admin.group_types import ConsumerGroupState, ConsumerGroupTopicPartitions, ConsumerGroupType
    from .admin.topic_types import ElectionType, TopicCollection, TopicPartitionInfo, Uuid
    from .admin.types import IsolationLevel, Node
    from .app.alias import install_as_confluent_kafka
    from .base.messages import Messages
    from .base.model import (
        OFFSET_BEGINNING,
        OFFSET_END,
        OFFSET_INVALID,
        OFFSET_STORED,
        TIMESTAMP_CREATE_TIME,
        TIMESTAMP_LOG_APPEND_TIME,
        TIMESTAMP_NOT_AVAILABLE,
        BrokerMetadata,
        ClusterMetadata,
        ConsumerGroupMetadata,
        Message,
        PartitionMetadata,
        ThrottleEvent,
        TopicMetadata,
        TopicPartition,
    )
    from .base.partitioning import consistent, fnv1a, murmur2
    from .base.record_metadata import RecordMetadata
    from .client.librdkafka_release import libversion
    from .consumer.consumer import Consumer
    from .core.kafka_error import ConcurrentModificationException, IllegalStateException, KafkaError, KafkaException
    from .core.share_acks import AcknowledgeType
    from .deserializing_consumer import DeserializingConsumer
    from .deserializing_share_consumer import DeserializingShareConsumer
    from .producer.aio import AIOProducer
    from .producer.producer import Producer
    from .producer.producer_record import ProducerRecord
    from .producer.sync import SyncProducer
    from .serializing_producer import SerializingProducer
    from .share_consumer.share_consumer import ShareConsumer

# Each name's module is imported when the name is first used (_lazy_names.py): a program that
# makes a Producer does not import the consumers, the admin client or the asyncio faces.
__getattr__, __dir__ = lazy_names(
    __name__,
    globals(),
    {
        ".admin.group_types": "ConsumerGroupState ConsumerGroupTopicPartitions ConsumerGroupType",
        ".admin.topic_types": "ElectionType TopicCollection TopicPartitionInfo Uuid",
        ".admin.types": "IsolationLevel Node",
        ".app.alias": "install_as_confluent_kafka",
        ".base.messages": "Messages",
        ".base.model": "OFFSET_BEGINNING OFFSET_END OFFSET_INVALID OFFSET_STORED TIMESTAMP_CREATE_TIME TIMESTAMP_LOG_APPEND_TIME TIMESTAMP_NOT_AVAILABLE BrokerMetadata ClusterMetadata ConsumerGroupMetadata Message PartitionMetadata ThrottleEvent TopicMetadata TopicPartition",
        ".base.partitioning": "consistent fnv1a murmur2",
        ".base.record_metadata": "RecordMetadata",
        ".client.librdkafka_release": "libversion",
        ".consumer.consumer": "Consumer",
        ".core.kafka_error": "ConcurrentModificationException IllegalStateException KafkaError KafkaException",
        ".core.share_acks": "AcknowledgeType",
        ".deserializing_consumer": "DeserializingConsumer",
        ".deserializing_share_consumer": "DeserializingShareConsumer",
        ".producer.aio": "AIOProducer",
        ".producer.producer_record": "ProducerRecord",
        ".producer.producer": "Producer",
        ".producer.sync": "SyncProducer",
        ".serializing_producer": "SerializingProducer",
        ".share_consumer.share_consumer": "ShareConsumer",
    },
)

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "OFFSET_STORED",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_NOT_AVAILABLE",
    "AIOProducer",
    "AcknowledgeType",
    "BrokerMetadata",
    "ClusterMetadata",
    "ConcurrentModificationException",
    "Consumer",
    "ConsumerGroupMetadata",
    "ConsumerGroupState",
    "ConsumerGroupTopicPartitions",
    "ConsumerGroupType",
    "DeserializingConsumer",
    "DeserializingShareConsumer",
    "ElectionType",
    "IllegalStateException",
    "IsolationLevel",
    "KafkaError",
    "KafkaException",
    "Message",
    "Messages",
    "Node",
    "PartitionMetadata",
    "Producer",
    "ProducerRecord",
    "RecordMetadata",
    "SerializingProducer",
    "ShareConsumer",
    "SyncProducer",
    "ThrottleEvent",
    "TopicCollection",
    "TopicMetadata",
    "TopicPartition",
    "TopicPartitionInfo",
    "Uuid",
    "__version__",
    "consistent",
    "fnv1a",
    "install_as_confluent_kafka",
    "libversion",
    "murmur2",
    "version",
]
