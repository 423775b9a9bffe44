"""The admin API's consumer-group values, named and shaped as in ``confluent_kafka.admin``."""

from __future__ import annotations

from typing import Any

from ..base import model
from ..base.model import BrokerMetadata, TopicPartition
from ..core.kafka_error import KafkaError
from .types import Node, _Ordered

__all__ = [
    "ConsumerGroupDescription",
    "ConsumerGroupListing",
    "ConsumerGroupState",
    "ConsumerGroupTopicPartitions",
    "ConsumerGroupType",
    "GroupMember",
    "GroupMetadata",
    "ListConsumerGroupsResult",
    "MemberAssignment",
    "MemberDescription",
]


class ConsumerGroupState(_Ordered):
    UNKNOWN = model.CONSUMER_GROUP_STATE_UNKNOWN
    UNKOWN = model.CONSUMER_GROUP_STATE_UNKNOWN  # confluent-kafka's deprecated misspelling, kept as an alias
    PREPARING_REBALANCING = model.CONSUMER_GROUP_STATE_PREPARING_REBALANCE
    COMPLETING_REBALANCING = model.CONSUMER_GROUP_STATE_COMPLETING_REBALANCE
    STABLE = model.CONSUMER_GROUP_STATE_STABLE
    DEAD = model.CONSUMER_GROUP_STATE_DEAD
    EMPTY = model.CONSUMER_GROUP_STATE_EMPTY

    @classmethod
    def from_wire(cls, name: str | None) -> ConsumerGroupState:
        """Kafka names states in CamelCase ("PreparingRebalance"); anything else is UNKNOWN."""
        return _STATE_BY_WIRE_NAME.get((name or "").lower(), cls.UNKNOWN)

    def wire_name(self) -> str:
        return _WIRE_NAME_BY_STATE[self]


_WIRE_NAME_BY_STATE = {
    ConsumerGroupState.UNKNOWN: "Unknown",
    ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
    ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    ConsumerGroupState.STABLE: "Stable",
    ConsumerGroupState.DEAD: "Dead",
    ConsumerGroupState.EMPTY: "Empty",
}
_STATE_BY_WIRE_NAME = {name.lower(): state for state, name in _WIRE_NAME_BY_STATE.items()}


class ConsumerGroupType(_Ordered):
    """Classic (JoinGroup) or KIP-848 consumer group; Kafka names them "classic" and "consumer"."""

    UNKNOWN = model.CONSUMER_GROUP_TYPE_UNKNOWN
    CONSUMER = model.CONSUMER_GROUP_TYPE_CONSUMER
    CLASSIC = model.CONSUMER_GROUP_TYPE_CLASSIC

    @classmethod
    def from_wire(cls, name: str | None) -> ConsumerGroupType:
        return {"consumer": cls.CONSUMER, "classic": cls.CLASSIC}.get((name or "").lower(), cls.UNKNOWN)

    def wire_name(self) -> str:
        return self.name.lower()


class ConsumerGroupTopicPartitions:
    """A group and some of its partitions: what the group-offset calls take and answer (offsets and
    per-partition errors on the `TopicPartition`s). None partitions: every partition (list only)."""

    def __init__(self, group_id: str, topic_partitions: list[TopicPartition] | None = None) -> None:
        self.group_id = group_id
        self.topic_partitions = topic_partitions

    def __repr__(self) -> str:
        return f"ConsumerGroupTopicPartitions({self.group_id!r}, {self.topic_partitions!r})"


class GroupMember:
    """A member of a group, as ``list_groups()`` reports it; metadata and assignment stay raw bytes."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.client_id: str | None = None
        self.client_host: str | None = None
        self.metadata: bytes | None = None
        self.assignment: bytes | None = None


class GroupMetadata:
    """A group as ``list_groups()`` reports it (the legacy, librdkafka-shaped listing)."""

    def __init__(self) -> None:
        self.broker: BrokerMetadata | None = None
        self.id: str | None = None
        self.error: KafkaError | None = None
        self.state: str | None = None
        self.protocol_type: str | None = None
        self.protocol: str | None = None
        self.members: list[GroupMember] = []

    def __repr__(self) -> str:
        # confluent-kafka's repr: tests compare it with theirs
        if self.error is not None:
            return f"GroupMetadata({self.id}, {self.error})"
        return f"GroupMetadata({self.id})"

    def __str__(self) -> str:
        return str(self.id)


class ConsumerGroupListing:
    def __init__(
        self,
        group_id: str,
        is_simple_consumer_group: bool,
        state: ConsumerGroupState | None = None,
        type: ConsumerGroupType | None = None,
    ) -> None:
        self.group_id = group_id
        self.is_simple_consumer_group = is_simple_consumer_group
        self.state = state
        self.type = type

    def __repr__(self) -> str:
        return f"ConsumerGroupListing({self.group_id!r}, state={self.state})"


class ListConsumerGroupsResult:
    """Every group the brokers answered for (``valid``), and the brokers that failed (``errors``)."""

    def __init__(self, valid: list[ConsumerGroupListing] | None = None, errors: list[Exception] | None = None) -> None:
        self.valid = valid or []
        self.errors = errors or []


class MemberAssignment:
    def __init__(self, topic_partitions: list[TopicPartition] | None = None) -> None:
        self.topic_partitions = topic_partitions or []


class MemberDescription:
    def __init__(
        self,
        member_id: str,
        client_id: str,
        host: str,
        assignment: MemberAssignment,
        group_instance_id: str | None = None,
        target_assignment: MemberAssignment | None = None,
    ) -> None:
        self.member_id = member_id
        self.client_id = client_id
        self.host = host
        self.assignment = assignment
        self.target_assignment = target_assignment
        self.group_instance_id = group_instance_id


class ConsumerGroupDescription:
    def __init__(
        self,
        group_id: str,
        is_simple_consumer_group: bool,
        members: list[MemberDescription],
        partition_assignor: str,
        state: ConsumerGroupState,
        coordinator: Node | None,
        authorized_operations: list[Any] | None = None,
        type: ConsumerGroupType = ConsumerGroupType.UNKNOWN,
    ) -> None:
        self.group_id = group_id
        self.is_simple_consumer_group = is_simple_consumer_group
        self.members = members
        self.partition_assignor = partition_assignor
        self.state = state
        self.type = type
        self.coordinator = coordinator
        # confluent-kafka's: none allowed reads as None, as when they were not asked for
        self.authorized_operations = authorized_operations or None

    def __repr__(self) -> str:
        return f"ConsumerGroupDescription({self.group_id!r}, state={self.state}, members={len(self.members)})"
