"""The admin client: ``from kafkawire.admin import AdminClient, NewTopic`` as with ``confluent_kafka.admin``."""

from ..errors import KafkaError, KafkaException
from ..model import BrokerMetadata, ClusterMetadata, PartitionMetadata, TopicMetadata, TopicPartition
from .client import AdminClient, create_topic_if_missing
from .group_types import (
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ConsumerGroupState,
    GroupMember,
    GroupMetadata,
    ListConsumerGroupsResult,
    MemberAssignment,
    MemberDescription,
)
from .types import (
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    DeletedRecords,
    DescribeClusterResult,
    IsolationLevel,
    ListOffsetsResultInfo,
    NewPartitions,
    NewTopic,
    Node,
    OffsetSpec,
    ResourceType,
)

__all__ = [
    "AdminClient",
    "AlterConfigOpType",
    "BrokerMetadata",
    "ClusterMetadata",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSource",
    "ConsumerGroupDescription",
    "ConsumerGroupListing",
    "ConsumerGroupState",
    "DeletedRecords",
    "DescribeClusterResult",
    "GroupMember",
    "GroupMetadata",
    "IsolationLevel",
    "KafkaError",
    "KafkaException",
    "ListConsumerGroupsResult",
    "ListOffsetsResultInfo",
    "MemberAssignment",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "Node",
    "OffsetSpec",
    "PartitionMetadata",
    "ResourceType",
    "TopicMetadata",
    "TopicPartition",
    "create_topic_if_missing",
]
