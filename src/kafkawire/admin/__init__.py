"""The admin client: ``from kafkawire.admin import AdminClient, NewTopic`` as with ``confluent_kafka.admin``."""

from ..errors import KafkaError, KafkaException
from ..model import BrokerMetadata, ClusterMetadata, PartitionMetadata, TopicMetadata, TopicPartition
from .acl_types import AclBinding, AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType
from .client import AdminClient, create_topic_if_missing
from .group_types import (
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    GroupMember,
    GroupMetadata,
    ListConsumerGroupsResult,
    MemberAssignment,
    MemberDescription,
)
from .scram_types import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialAlteration,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)
from .topic_types import ElectionType, TopicCollection, TopicDescription, TopicPartitionInfo
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

# confluent_kafka.admin's names for values it imports from the top-level package
_ConsumerGroupState = ConsumerGroupState
_ConsumerGroupTopicPartitions = ConsumerGroupTopicPartitions
_ConsumerGroupType = ConsumerGroupType
_ElectionType = ElectionType
_IsolationLevel = IsolationLevel
_TopicCollection = TopicCollection
_TopicPartition = TopicPartition

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
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
    "ConsumerGroupTopicPartitions",
    "ConsumerGroupType",
    "DeletedRecords",
    "DescribeClusterResult",
    "ElectionType",
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
    "ResourcePatternType",
    "ResourceType",
    "ScramCredentialInfo",
    "ScramMechanism",
    "TopicCollection",
    "TopicDescription",
    "TopicMetadata",
    "TopicPartition",
    "TopicPartitionInfo",
    "UserScramCredentialAlteration",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
    "UserScramCredentialsDescription",
    "create_topic_if_missing",
]
