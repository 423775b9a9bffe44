"""The admin client: ``from kafkawire.admin import AdminClient, NewTopic`` as with ``confluent_kafka.admin``."""

from typing import TYPE_CHECKING

from .._lazy_names import lazy_names
from ..base.model import (
    OFFSET_INVALID,
    BrokerMetadata,
    ClusterMetadata,
    PartitionMetadata,
    TopicMetadata,
    TopicPartition,
)
from ..core.kafka_error import KafkaError, KafkaException
from .acl_types import AclBinding, AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType
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
from .topic_types import Uuid as Uuid  # (as confluent-kafka's _topic module, which the alias maps here)
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

# OffsetSpec's subclasses, as confluent-kafka's _listoffsets module (the alias maps it here) has them
from .types import EarliestSpec as EarliestSpec
from .types import LatestSpec as LatestSpec
from .types import MaxTimestampSpec as MaxTimestampSpec
from .types import TimestampSpec as TimestampSpec

if TYPE_CHECKING:
    from .client import AdminClient, create_topic_if_missing

# (lazy: the value types alone, as the package face's ConsumerGroupState, do not import the client;
# confluent-kafka's admin modules, which the alias maps here, also give the _util helpers)
__getattr__, __dir__ = lazy_names(
    __name__,
    globals(),
    {".client": "AdminClient create_topic_if_missing", ".._util": "ConversionUtil ValidationUtil"},
)

# confluent_kafka.admin's names for values it imports from the top-level package
_ConsumerGroupState = ConsumerGroupState
_ConsumerGroupTopicPartitions = ConsumerGroupTopicPartitions
_ConsumerGroupType = ConsumerGroupType
_ElectionType = ElectionType
_IsolationLevel = IsolationLevel
_TopicCollection = TopicCollection
_TopicPartition = TopicPartition

# confluent_kafka.admin's module-level constants: librdkafka's enum values as plain ints
CONFIG_SOURCE_UNKNOWN_CONFIG = ConfigSource.UNKNOWN_CONFIG.value
CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG = ConfigSource.DYNAMIC_TOPIC_CONFIG.value
CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG = ConfigSource.DYNAMIC_BROKER_CONFIG.value
CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
CONFIG_SOURCE_STATIC_BROKER_CONFIG = ConfigSource.STATIC_BROKER_CONFIG.value
CONFIG_SOURCE_DEFAULT_CONFIG = ConfigSource.DEFAULT_CONFIG.value
CONFIG_SOURCE_GROUP_CONFIG = ConfigSource.GROUP_CONFIG.value
RESOURCE_UNKNOWN = ResourceType.UNKNOWN.value
RESOURCE_ANY = ResourceType.ANY.value
RESOURCE_TOPIC = ResourceType.TOPIC.value
RESOURCE_GROUP = ResourceType.GROUP.value
RESOURCE_BROKER = ResourceType.BROKER.value
RESOURCE_TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID.value


__all__ = [
    "CONFIG_SOURCE_DEFAULT_CONFIG",
    "CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG",
    "CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG",
    "CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG",
    "CONFIG_SOURCE_GROUP_CONFIG",
    "CONFIG_SOURCE_STATIC_BROKER_CONFIG",
    "CONFIG_SOURCE_UNKNOWN_CONFIG",
    "OFFSET_INVALID",
    "RESOURCE_ANY",
    "RESOURCE_BROKER",
    "RESOURCE_GROUP",
    "RESOURCE_TOPIC",
    "RESOURCE_TRANSACTIONAL_ID",
    "RESOURCE_UNKNOWN",
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
