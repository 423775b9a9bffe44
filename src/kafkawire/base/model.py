"""The public data model, shaped like confluent-kafka's so that switching is a change of import.

`Message`, `TopicPartition`, `ThrottleEvent` and the cluster metadata classes (`kafkawire.base.cluster_metadata`,
re-exported here) copy confluent-kafka's
observable behaviour (accessors, which attributes are writable, equality, hashing, ordering, reprs);
`tests/unit/base/test_model.py` compares them with the installed confluent-kafka. `RecordMetadata`,
the Java client's result of a send, is in `kafkawire.base.record_metadata`.
"""

from __future__ import annotations

import operator
from typing import Any

from ..core import share_acks
from ..core.kafka_error import KafkaError
from ..native import native
from .cluster_metadata import (
    BrokerMetadata,
    ClusterMetadata,
    PartitionMetadata,
    TopicMetadata,
    broker_name,
    cluster_metadata_from,
)
from .message_fields import Headers, MessageFields

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "OFFSET_STORED",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_NOT_AVAILABLE",
    "BrokerMetadata",
    "ClusterMetadata",
    "ConsumerGroupMetadata",
    "Headers",
    "Message",
    "PartitionMetadata",
    "ThrottleEvent",
    "TopicMetadata",
    "TopicPartition",
    "broker_name",
    "cluster_metadata_from",
]

# Timestamp types, as returned first in `Message.timestamp()` (librdkafka's values).
TIMESTAMP_NOT_AVAILABLE = 0
TIMESTAMP_CREATE_TIME = 1
TIMESTAMP_LOG_APPEND_TIME = 2

# Logical offsets (librdkafka's values).
OFFSET_BEGINNING = -2
OFFSET_END = -1
OFFSET_STORED = -1000
OFFSET_INVALID = -1001


_INT32 = (-(2**31), 2**31 - 1)
_track = native.track if native is not None else None  # see Message's setters
_INT64 = (-(2**63), 2**63 - 1)


def _checked_int(value: Any, bounds: tuple[int, int]) -> int:
    """An int that fits the wire field, rejecting what librdkafka would reject (str, None, overflow)."""
    number = operator.index(value)
    if not bounds[0] <= number <= bounds[1]:
        raise OverflowError(f"{number} does not fit in a {'32' if bounds is _INT32 else '64'}-bit signed integer")
    return number


def _optional_int(value: Any, bounds: tuple[int, int]) -> int | None:
    return None if value is None else _checked_int(value, bounds)


def _c_string(value: str) -> str:
    """A string librdkafka takes as a C string: a NUL inside would cut it short on the way (the
    broker would keep ``'xyz'`` of ``'xyz\\x00abc'``), and a lone surrogate has no UTF-8. Refused
    here, as confluent-kafka's constructor refuses them (ValueError, UnicodeEncodeError)."""
    if "\x00" in value:
        raise ValueError("embedded null character")
    if not value.isascii():
        value.encode("utf-8")
    return value


def _non_negative(value: int | None) -> int | None:
    """confluent-kafka reports negative partitions, offsets and epochs ("unknown" sentinels) as None."""
    return value if value is not None and value >= 0 else None


_INT16 = (-(2**15), 2**15 - 1)


def _check_error(error: Any) -> KafkaError | None:
    if error is not None and not isinstance(error, KafkaError):
        raise TypeError(f"error must be a KafkaError or None, not {type(error).__name__}")
    return error


def _short_repr(data: object) -> str:
    """Keys and values can be megabytes; a repr should stay one readable line."""
    text = repr(data)
    if len(text) <= 80 or not isinstance(data, (bytes, bytearray, str)):
        return text
    return f"{text[:64]}...({len(data)} {'chars' if isinstance(data, str) else 'bytes'})"


class Message(MessageFields):
    """One produced (or consumed) message, or an event when `error()` is not None.

    Accessors, setters, the constructor's arguments and pickling mirror confluent-kafka's
    `Message`; like it, the fields hold whatever they are given (tests build messages of mocks).
    """

    __slots__ = ()

    def __init__(
        self,
        topic: str | None = None,
        partition: int | None = None,
        offset: int | None = None,
        key: bytes | None = None,
        value: bytes | None = None,
        headers: Headers | None = None,
        error: KafkaError | None = None,
        timestamp: tuple[int, int] | None = None,
        latency: float | None = None,
        leader_epoch: int | None = None,
        delivery_count: int | None = None,
    ) -> None:
        self._topic = topic
        self._partition = _non_negative(_optional_int(partition, _INT32))
        self._offset = _non_negative(_optional_int(offset, _INT64))
        self._key = key
        self._value = value
        self._headers = headers
        self._timestamp = self._check_timestamp(timestamp)
        self._error = error
        self._latency = None if latency is None or latency < 0 else float(latency)
        self._leader_epoch = _non_negative(_optional_int(leader_epoch, _INT32))
        count = _optional_int(delivery_count, _INT16)
        self._delivery_count = count if count is not None and count > 0 else None

    @staticmethod
    def _check_timestamp(timestamp: Any) -> tuple[int, int]:
        if timestamp is None:
            return (TIMESTAMP_NOT_AVAILABLE, 0)
        if not isinstance(timestamp, tuple) or len(timestamp) != 2:
            raise TypeError("timestamp must be a tuple of (int, int)")
        try:
            return (_checked_int(timestamp[0], _INT32), _checked_int(timestamp[1], _INT64))
        except TypeError:
            raise TypeError("timestamp must be a tuple of (int, int)") from None

    def deserialized_key(self) -> Any:
        """The same object as `key()`; confluent's serializing clients put the deserialized key here."""
        return self._key

    def deserialized_value(self) -> Any:
        return self._value

    # The setters take any object, so a consumed message the C decoder left untracked by the
    # cycle collector (its fields cannot form a cycle) is tracked again first.

    def set_key(self, key: Any) -> None:
        if _track is not None:
            _track(self)
        self._key = key

    def set_value(self, value: Any) -> None:
        if _track is not None:
            _track(self)
        self._value = value

    def set_headers(self, headers: Any) -> None:
        if _track is not None:
            _track(self)
        self._headers = headers

    def set_topic(self, topic: Any) -> None:
        if _track is not None:
            _track(self)
        self._topic = topic

    def set_error(self, error: KafkaError | None) -> None:
        if _track is not None:
            _track(self)
        self._error = error

    def __len__(self) -> int:
        """The value's length (0 without one), as confluent-kafka: ``len()`` of whatever is stored."""
        return 0 if self._value is None else len(self._value)

    def _identity(self) -> tuple[Any, ...]:
        # confluent-kafka compares everything but latency (and delivery count).
        return (
            self._topic,
            self._partition,
            self._offset,
            self._key,
            self._value,
            self._headers,
            self._error,
            self._timestamp,
            self._leader_epoch,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return self._identity() == other._identity()

    # Defining __eq__ leaves __hash__ = None: messages are mutable and unhashable, as in confluent-kafka.

    def __reduce__(self) -> tuple[Any, ...]:
        """confluent-kafka's pickled form: "unknown" as its C sentinels (-1, OFFSET_INVALID, -1.0)."""
        return (
            type(self),
            (
                self._topic,
                -1 if self._partition is None else self._partition,
                OFFSET_INVALID if self._offset is None else self._offset,
                self._key,
                self._value,
                self._headers,
                self._error,
                self._timestamp,
                -1.0 if self._latency is None else self._latency,
                -1 if self._leader_epoch is None else self._leader_epoch,
                -1 if self._delivery_count is None else self._delivery_count,
            ),
        )

    def __repr__(self) -> str:
        parts = [
            f"topic={self._topic!r}",
            f"partition={self._partition!r}",
            f"offset={self._offset!r}",
            f"key={_short_repr(self._key)}",
            f"value={_short_repr(self._value)}",
        ]
        if self._headers is not None:
            parts.append(f"headers={self._headers!r}")
        parts.append(f"timestamp={self._timestamp!r}")
        if self._latency is not None:
            parts.append(f"latency={self._latency!r}")
        if self._leader_epoch is not None:
            parts.append(f"leader_epoch={self._leader_epoch!r}")
        parts.append(f"error={self._error!r}")
        return f"Message({', '.join(parts)})"


def _topic_partition(
    topic: str, partition: int, offset: int, metadata: str | None, leader_epoch: int | None, error: KafkaError | None
) -> TopicPartition:
    """Unpickling helper: `error` is keyword-only in the constructor."""
    return TopicPartition(topic, partition, offset, metadata, leader_epoch, error=error)


class TopicPartition:
    """A topic's partition, with an offset and the outcome of an operation on it.

    Like confluent-kafka: equality and hashing use topic and partition only, ordering is by
    (topic, partition), only ``partition`` and ``offset`` are writable, and a negative
    ``leader_epoch`` reads as None. ``error`` is set by the client through the keyword-only
    constructor argument (confluent-kafka's constructor has none).
    """

    __slots__ = ("_error", "_leader_epoch", "_metadata", "_offset", "_partition", "_topic")

    def __init__(
        self,
        topic: str,
        partition: int = -1,
        offset: int = OFFSET_INVALID,
        metadata: str | None = None,
        leader_epoch: int | None = None,
        *,
        error: KafkaError | None = None,
    ) -> None:
        if not isinstance(topic, str):
            raise TypeError(f"topic must be str, not {type(topic).__name__}")
        if metadata is not None and not isinstance(metadata, str):
            raise TypeError(f"metadata must be str, not {type(metadata).__name__}")
        self._topic = _c_string(topic)
        self._partition = _checked_int(partition, _INT32)
        self._offset = _checked_int(offset, _INT64)
        self._metadata = metadata if metadata is None else _c_string(metadata)
        self._leader_epoch = _non_negative(_optional_int(leader_epoch, _INT32))
        self._error = _check_error(error)

    @property
    def topic(self) -> str:
        return self._topic

    @property
    def partition(self) -> int:
        return self._partition

    @partition.setter
    def partition(self, value: int) -> None:
        self._partition = _checked_int(value, _INT32)

    @property
    def offset(self) -> int:
        """An absolute offset (>= 0) or a logical one: OFFSET_BEGINNING, OFFSET_END, OFFSET_STORED, OFFSET_INVALID."""
        return self._offset

    @offset.setter
    def offset(self, value: int) -> None:
        self._offset = _checked_int(value, _INT64)

    @property
    def metadata(self) -> str | None:
        """Application metadata committed with the offset."""
        return self._metadata

    @property
    def leader_epoch(self) -> int | None:
        return self._leader_epoch

    @property
    def error(self) -> KafkaError | None:
        return self._error

    def _key(self) -> tuple[str, int]:
        return (self._topic, self._partition)

    def __eq__(self, other: object) -> bool:
        # confluent-kafka raises NotImplementedError for foreign types; answering False is kinder.
        if not isinstance(other, TopicPartition):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        # The same value as confluent-kafka's (hash(topic) ^ partition), so mixed dicts behave alike.
        return hash(self._topic) ^ self._partition

    def __lt__(self, other: TopicPartition) -> bool:
        if not isinstance(other, TopicPartition):
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: TopicPartition) -> bool:
        if not isinstance(other, TopicPartition):
            return NotImplemented
        return self._key() <= other._key()

    def __gt__(self, other: TopicPartition) -> bool:
        if not isinstance(other, TopicPartition):
            return NotImplemented
        return self._key() > other._key()

    def __ge__(self, other: TopicPartition) -> bool:
        if not isinstance(other, TopicPartition):
            return NotImplemented
        return self._key() >= other._key()

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _topic_partition,
            (self._topic, self._partition, self._offset, self._metadata, self._leader_epoch, self._error),
        )

    def __repr__(self) -> str:
        return (
            f"TopicPartition{{topic={self._topic},partition={self._partition},offset={self._offset},"
            f"leader_epoch={self._leader_epoch},error={self._error!r}}}"
        )

    __str__ = __repr__


class ConsumerGroupMetadata:
    """A consumer group's identity, for ``send_offsets_to_transaction`` (KIP-447: the generation and
    member let the group coordinator fence a zombie); the Consumer hands it out."""

    def __init__(
        self, group_id: str, generation_id: int = -1, member_id: str = "", group_instance_id: str | None = None
    ) -> None:
        if not isinstance(group_id, str) or not group_id:
            raise TypeError("group_id must be a non-empty str")
        self.group_id = group_id
        self.generation_id = generation_id
        self.member_id = member_id
        self.group_instance_id = group_instance_id

    def __repr__(self) -> str:
        return (
            f"ConsumerGroupMetadata(group_id={self.group_id!r}, generation_id={self.generation_id}, "
            f"member_id={self.member_id!r}, group_instance_id={self.group_instance_id!r})"
        )


class ThrottleEvent:
    """A broker delayed a request (quota); passed to the ``throttle_cb`` callback."""

    def __init__(self, broker_name: str, broker_id: int, throttle_time: float) -> None:
        self.broker_name = broker_name
        self.broker_id = broker_id
        self.throttle_time = throttle_time
        """Seconds the broker held the request back."""

    def __str__(self) -> str:
        # confluent-kafka's str(): its tests compare it
        return f"{self.broker_name}/{self.broker_id} throttled for {int(self.throttle_time * 1000)} ms"

    def __repr__(self) -> str:
        return (
            f"ThrottleEvent(broker_name={self.broker_name!r}, broker_id={self.broker_id!r}, "
            f"throttle_time={self.throttle_time!r})"
        )


def throttle_event(host: str, port: int, node_id: int, throttle_ms: int) -> ThrottleEvent:
    """What throttle_cb gets: librdkafka names the broker ``host:port`` here (its node name), not
    ``host:port/id`` as elsewhere (checked against confluent-kafka on a quota-limited Kafka 2.3)."""
    return ThrottleEvent(f"{host}:{port}", node_id, throttle_ms / 1000)


def error_event(
    error: KafkaError, topic: str | None = None, partition: int | None = None, offset: int | None = None
) -> Message:
    """An error event as poll()/consume() hand it over: librdkafka puts the error's text in the message's
    payload, so ``value()`` is that text (programs test ``if not msg`` or log ``msg.value()``)."""
    return Message(topic, partition, offset, value=error.str().encode(), error=error)


# librdkafka's enum values as confluent_kafka.cimpl exports them (plain ints, librdkafka's names
# without RD_KAFKA_): kafkawire.cimpl gives them by these names and the admin enums take their
# members' values from them, as confluent-kafka's do. For the ACL and SCRAM enums this numbering is
# also Kafka's wire numbering.
# rd_kafka_AclOperation_t
ACL_OPERATION_UNKNOWN = 0
ACL_OPERATION_ANY = 1
ACL_OPERATION_ALL = 2
ACL_OPERATION_READ = 3
ACL_OPERATION_WRITE = 4
ACL_OPERATION_CREATE = 5
ACL_OPERATION_DELETE = 6
ACL_OPERATION_ALTER = 7
ACL_OPERATION_DESCRIBE = 8
ACL_OPERATION_CLUSTER_ACTION = 9
ACL_OPERATION_DESCRIBE_CONFIGS = 10
ACL_OPERATION_ALTER_CONFIGS = 11
ACL_OPERATION_IDEMPOTENT_WRITE = 12

# rd_kafka_AclPermissionType_t
ACL_PERMISSION_TYPE_UNKNOWN = 0
ACL_PERMISSION_TYPE_ANY = 1
ACL_PERMISSION_TYPE_DENY = 2
ACL_PERMISSION_TYPE_ALLOW = 3

# rd_kafka_AlterConfigOpType_t (the IncrementalAlterConfigs wire's config_operation)
ALTER_CONFIG_OP_TYPE_SET = 0
ALTER_CONFIG_OP_TYPE_DELETE = 1
ALTER_CONFIG_OP_TYPE_APPEND = 2
ALTER_CONFIG_OP_TYPE_SUBTRACT = 3

# rd_kafka_ConfigSource_t
CONFIG_SOURCE_UNKNOWN_CONFIG = 0
CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG = 1
CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG = 2
CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG = 3
CONFIG_SOURCE_STATIC_BROKER_CONFIG = 4
CONFIG_SOURCE_DEFAULT_CONFIG = 5
CONFIG_SOURCE_GROUP_CONFIG = 8

# rd_kafka_consumer_group_state_t
CONSUMER_GROUP_STATE_UNKNOWN = 0
CONSUMER_GROUP_STATE_PREPARING_REBALANCE = 1
CONSUMER_GROUP_STATE_COMPLETING_REBALANCE = 2
CONSUMER_GROUP_STATE_STABLE = 3
CONSUMER_GROUP_STATE_DEAD = 4
CONSUMER_GROUP_STATE_EMPTY = 5

# rd_kafka_consumer_group_type_t
CONSUMER_GROUP_TYPE_UNKNOWN = 0
CONSUMER_GROUP_TYPE_CONSUMER = 1
CONSUMER_GROUP_TYPE_CLASSIC = 2

# rd_kafka_ElectionType_t
ELECTION_TYPE_PREFERRED = 0
ELECTION_TYPE_UNCLEAN = 1

# rd_kafka_IsolationLevel_t
ISOLATION_LEVEL_READ_UNCOMMITTED = 0
ISOLATION_LEVEL_READ_COMMITTED = 1

# rd_kafka_OffsetSpec_t: what ListOffsets sends instead of a timestamp
OFFSET_SPEC_MAX_TIMESTAMP = -3
OFFSET_SPEC_EARLIEST = -2
OFFSET_SPEC_LATEST = -1

# rd_kafka_ResourceType_t
RESOURCE_UNKNOWN = 0
RESOURCE_ANY = 1
RESOURCE_TOPIC = 2
RESOURCE_GROUP = 3
RESOURCE_BROKER = 4
RESOURCE_TRANSACTIONAL_ID = 5

# rd_kafka_ResourcePatternType_t
RESOURCE_PATTERN_UNKNOWN = 0
RESOURCE_PATTERN_ANY = 1
RESOURCE_PATTERN_MATCH = 2
RESOURCE_PATTERN_LITERAL = 3
RESOURCE_PATTERN_PREFIXED = 4

# rd_kafka_ScramMechanism_t
SCRAM_MECHANISM_UNKNOWN = 0
SCRAM_MECHANISM_SHA_256 = 1
SCRAM_MECHANISM_SHA_512 = 2

# rd_kafka_share_AcknowledgeType_t: the ShareAcknowledge wire's acknowledge types
SHARE_ACKNOWLEDGE_TYPE_ACCEPT = share_acks.ACCEPT
SHARE_ACKNOWLEDGE_TYPE_RELEASE = share_acks.RELEASE
SHARE_ACKNOWLEDGE_TYPE_REJECT = share_acks.REJECT
