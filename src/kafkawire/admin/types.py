"""The admin API's values, named and shaped as in ``confluent_kafka.admin`` so code keeps working.

Enum values are librdkafka's (what confluent-kafka exposes); where the wire uses other numbers
(a ConfigResource's type) the mapping lives here, next to the enum, so the client never guesses.
"""

from __future__ import annotations

import enum
import functools
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from ..base import model
from ..core.kafka_error import KafkaError, c_int

__all__ = [
    "AlterConfigOpType",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSource",
    "DeletedRecords",
    "DescribeClusterResult",
    "IsolationLevel",
    "ListOffsetsResultInfo",
    "NewPartitions",
    "NewTopic",
    "Node",
    "OffsetSpec",
    "ResourceType",
]

_MAX_PARTITIONS = 100_000  # librdkafka's limit for num_partitions / new_total_count
_MAX_REPLICATION = 10_000


class _Ordered(enum.Enum):
    """confluent-kafka's enums sort by value; so do these."""

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return bool(self.value < other.value)


class ResourceType(_Ordered):
    """A Kafka resource's type (librdkafka's numbering, which is also the ACL protocol's)."""

    UNKNOWN = model.RESOURCE_UNKNOWN
    ANY = model.RESOURCE_ANY
    TOPIC = model.RESOURCE_TOPIC
    GROUP = model.RESOURCE_GROUP
    BROKER = model.RESOURCE_BROKER
    TRANSACTIONAL_ID = model.RESOURCE_TRANSACTIONAL_ID


# The config APIs number resource types differently from the ACL numbering above.
CONFIG_WIRE_TYPE: dict[ResourceType, int] = {ResourceType.TOPIC: 2, ResourceType.BROKER: 4, ResourceType.GROUP: 32}


class ConfigSource(_Ordered):
    """Where a configuration value comes from, as ``describe_configs()`` reports it (Kafka's codes)."""

    UNKNOWN_CONFIG = model.CONFIG_SOURCE_UNKNOWN_CONFIG
    DYNAMIC_TOPIC_CONFIG = model.CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG
    DYNAMIC_BROKER_CONFIG = model.CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG
    DYNAMIC_DEFAULT_BROKER_CONFIG = model.CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG
    STATIC_BROKER_CONFIG = model.CONFIG_SOURCE_STATIC_BROKER_CONFIG
    DEFAULT_CONFIG = model.CONFIG_SOURCE_DEFAULT_CONFIG
    GROUP_CONFIG = model.CONFIG_SOURCE_GROUP_CONFIG

    @classmethod
    def from_wire(cls, code: int) -> ConfigSource:
        """Kafka sources librdkafka has no name for (broker logger, client metrics) read as UNKNOWN."""
        try:
            return cls(code)
        except ValueError:
            return cls.UNKNOWN_CONFIG


class AlterConfigOpType(_Ordered):
    """An ``incremental_alter_configs()`` operation; the values are the wire's ``config_operation``."""

    SET = model.ALTER_CONFIG_OP_TYPE_SET
    DELETE = model.ALTER_CONFIG_OP_TYPE_DELETE
    APPEND = model.ALTER_CONFIG_OP_TYPE_APPEND
    SUBTRACT = model.ALTER_CONFIG_OP_TYPE_SUBTRACT


class IsolationLevel(_Ordered):
    READ_UNCOMMITTED = model.ISOLATION_LEVEL_READ_UNCOMMITTED
    READ_COMMITTED = model.ISOLATION_LEVEL_READ_COMMITTED


def _int_arg(value: Any, what: str) -> int:
    """An int as the C extension takes it: bools and ints, never str or float; 32 bits."""
    try:
        return c_int(value)
    except TypeError:
        raise TypeError(f"{what}: '{type(value).__name__}' object cannot be interpreted as an integer") from None


_NOT_GIVEN: Any = object()  # (an argument left out, told from None given)


def _check_assignment(assignment: Any, what: str) -> list[list[int]] | None:
    if assignment is None:
        return None
    if not isinstance(assignment, list) or not all(isinstance(r, list) for r in assignment):
        raise ValueError(f"{what}: replica_assignment must be a list of int lists")
    return [[_int_arg(b, what) for b in replicas] for replicas in assignment]


@functools.total_ordering
class NewTopic:
    """A topic for ``create_topics()``: a partition count and replication factor, or explicit replicas.

    ``-1`` asks for the broker's default. Ranges are checked by ``create_topics()``, as librdkafka does.
    """

    def __init__(
        self,
        topic: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        replica_assignment: list[list[int]] | None = None,
        config: Mapping[str, str] | None = _NOT_GIVEN,
    ) -> None:
        if not isinstance(topic, str):
            raise TypeError(f"argument 1 must be str, not {type(topic).__name__}")
        if config is _NOT_GIVEN:
            config = None
        elif not isinstance(config, Mapping):  # (None given is refused too, as the C extension does)
            raise TypeError("config must be a dict of strings")
        self.topic = topic
        self.num_partitions = _int_arg(num_partitions, "num_partitions")
        self.replication_factor = _int_arg(replication_factor, "replication_factor")
        self.replica_assignment = replica_assignment
        self.config: dict[str, str] | None = None if config is None else dict(config)

    def _key(self) -> tuple[str, int]:
        return (self.topic, self.num_partitions)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NewTopic):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: NewTopic) -> bool:
        if not isinstance(other, NewTopic):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.num_partitions == -1:
            return f"NewTopic(topic={self.topic})"
        return f"NewTopic(topic={self.topic},num_partitions={self.num_partitions})"

    __str__ = __repr__


@functools.total_ordering
class NewPartitions:
    """Grow ``topic`` to ``new_total_count`` partitions; the assignment lists only the new ones' replicas."""

    def __init__(self, topic: str, new_total_count: int, replica_assignment: list[list[int]] | None = None) -> None:
        if not isinstance(topic, str):
            raise TypeError(f"argument 1 must be str, not {type(topic).__name__}")
        self.topic = topic
        self.new_total_count = _int_arg(new_total_count, "new_total_count")
        self.replica_assignment = replica_assignment

    def _key(self) -> tuple[str, int]:
        return (self.topic, self.new_total_count)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NewPartitions):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: NewPartitions) -> bool:
        if not isinstance(other, NewPartitions):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"NewPartitions(topic={self.topic},new_total_count={self.new_total_count})"

    __str__ = __repr__


class ConfigEntry:
    """One configuration property: what ``describe_configs()`` returns, and what
    ``incremental_alter_configs()`` takes (with ``incremental_operation`` set)."""

    def __init__(
        self,
        name: str,
        value: str | None,
        source: ConfigSource = ConfigSource.UNKNOWN_CONFIG,
        is_read_only: bool = False,
        is_default: bool = False,
        is_sensitive: bool = False,
        is_synonym: bool = False,
        synonyms: Mapping[str, ConfigEntry] | None = None,
        incremental_operation: AlterConfigOpType | None = None,
    ) -> None:
        self.name = name
        self.value = value
        self.source = source
        self.is_read_only = bool(is_read_only)
        self.is_default = bool(is_default)
        self.is_sensitive = bool(is_sensitive)
        self.is_synonym = bool(is_synonym)
        self.synonyms: dict[str, ConfigEntry] = dict(synonyms or {})
        self.incremental_operation = incremental_operation

    def __repr__(self) -> str:
        return f'ConfigEntry({self.name}="{self.value}")'

    def __str__(self) -> str:
        return f'{self.name}="{self.value}"'


@functools.total_ordering
class ConfigResource:
    """A resource with configuration (a topic, a broker, a group): the key of the config calls' futures.

    Equality and hashing use the type and name only, so a result dict can be indexed with a fresh
    ``ConfigResource`` naming the same thing.
    """

    Type = ResourceType

    def __init__(
        self,
        restype: ResourceType | str | int,
        name: str,
        set_config: Mapping[str, str] | None = None,
        described_configs: Mapping[str, ConfigEntry] | None = None,
        error: KafkaError | None = None,
        incremental_configs: Iterable[ConfigEntry] | None = None,
    ) -> None:
        if name is None:
            raise ValueError("ConfigResource needs a name (a str), not None")
        if isinstance(restype, str):
            try:
                restype = ResourceType[restype.upper()]
            except KeyError:
                raise ValueError(f"restype {restype!r} names no ConfigResource.Type") from None
        elif isinstance(restype, int):
            restype = ResourceType(restype)
        self.restype: ResourceType = restype
        self.restype_int = restype.value
        self.name = name
        self.set_config_dict: dict[str, str] = dict(set_config or {})
        self.incremental_configs: list[ConfigEntry] = list(incremental_configs or [])
        self.configs = None if described_configs is None else dict(described_configs)
        self.error = error

    def set_config(self, name: str, value: str, overwrite: bool = True) -> None:
        """Set a value for ``alter_configs()``.

        Beware: ``alter_configs()`` resets every dynamic key not set here to its default; prefer
        ``add_incremental_config()`` with ``incremental_alter_configs()``, which leaves them alone.
        """
        if not overwrite and name in self.set_config_dict:
            return
        self.set_config_dict[name] = value

    def add_incremental_config(self, config_entry: ConfigEntry) -> None:
        """Queue one change (its ``incremental_operation``) for ``incremental_alter_configs()``."""
        self.incremental_configs.append(config_entry)

    def __len__(self) -> int:
        return len(self.set_config_dict)

    def __hash__(self) -> int:
        return hash((self.restype, self.name))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfigResource):
            return NotImplemented
        return self.restype == other.restype and self.name == other.name

    def __lt__(self, other: ConfigResource) -> bool:
        if not isinstance(other, ConfigResource):
            return NotImplemented
        return (self.restype.value, self.name) < (other.restype.value, other.name)

    def __repr__(self) -> str:
        if self.error is not None:
            return f"ConfigResource({self.restype},{self.name},{self.error!r})"
        return f"ConfigResource({self.restype},{self.name})"


class OffsetSpec(ABC):
    """Which offset of a partition ``list_offsets()`` looks up, shaped as confluent-kafka's
    ``_listoffsets`` module: the factories give instances of the four subclasses (the earliest,
    latest and max-timestamp specs one object each, so they compare by identity, as there), and
    ``OffsetSpec(n)`` picks the subclass for ``n`` (librdkafka's -1/-2/-3, else a timestamp in ms).
    ``_value`` is what goes on the wire."""

    _by_value: ClassVar[dict[int, OffsetSpec]] = {}

    @property
    @abstractmethod
    def _value(self) -> int: ...

    def __new__(cls, index: int) -> Any:
        # Constructed directly: the one spec for a negative value (KeyError for an unknown one),
        # else a timestamp's.
        if index < 0:
            return cls._by_value[index]
        return TimestampSpec(index)

    @classmethod
    def earliest(cls) -> EarliestSpec:
        return _EARLIEST

    @classmethod
    def latest(cls) -> LatestSpec:
        return _LATEST

    @classmethod
    def max_timestamp(cls) -> MaxTimestampSpec:
        return _MAX_TIMESTAMP

    @classmethod
    def for_timestamp(cls, timestamp: int) -> TimestampSpec:
        """The first offset whose timestamp is at or after ``timestamp`` (ms since the epoch)."""
        return TimestampSpec(timestamp)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, OffsetSpec):
            return NotImplemented
        return bool(self._value < other._value)


class TimestampSpec(OffsetSpec):
    """The earliest offset whose timestamp is at or after ``timestamp`` (ms)."""

    def __new__(cls, _timestamp: int) -> Any:
        return object.__new__(cls)

    def __init__(self, timestamp: int) -> None:
        self.timestamp = timestamp

    @property
    def _value(self) -> int:
        return self.timestamp


class MaxTimestampSpec(OffsetSpec):
    """The offset of the record with the largest timestamp (KIP-734), which need not be the last."""

    def __new__(cls) -> Any:
        return object.__new__(cls)

    @property
    def _value(self) -> int:
        return model.OFFSET_SPEC_MAX_TIMESTAMP


class LatestSpec(OffsetSpec):
    """The partition's end offset."""

    def __new__(cls) -> Any:
        return object.__new__(cls)

    @property
    def _value(self) -> int:
        return model.OFFSET_SPEC_LATEST


class EarliestSpec(OffsetSpec):
    """The partition's log start offset."""

    def __new__(cls) -> Any:
        return object.__new__(cls)

    @property
    def _value(self) -> int:
        return model.OFFSET_SPEC_EARLIEST


_EARLIEST: EarliestSpec = EarliestSpec()
_LATEST: LatestSpec = LatestSpec()
_MAX_TIMESTAMP: MaxTimestampSpec = MaxTimestampSpec()
OffsetSpec._by_value.update({spec._value: spec for spec in (_EARLIEST, _LATEST, _MAX_TIMESTAMP)})


class ListOffsetsResultInfo:
    """A partition's answer to ``list_offsets()``; ``timestamp`` is -1 for earliest/latest."""

    def __init__(self, offset: int, timestamp: int, leader_epoch: int | None) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.leader_epoch = None if leader_epoch is None or leader_epoch < 0 else leader_epoch

    def __repr__(self) -> str:
        return (
            f"ListOffsetsResultInfo(offset={self.offset}, timestamp={self.timestamp}, leader_epoch={self.leader_epoch})"
        )


class DeletedRecords:
    """A partition's new log start offset after ``delete_records()``."""

    def __init__(self, low_watermark: int) -> None:
        self.low_watermark = low_watermark

    def __repr__(self) -> str:
        return f"DeletedRecords(low_watermark={self.low_watermark})"


class Node:
    """A broker as the admin results name it (confluent-kafka's ``Node``)."""

    def __init__(self, id: int, host: str, port: int, rack: str | None = None) -> None:
        self.id = id
        self.id_string = str(id)
        self.host = host
        self.port = port
        self.rack = rack

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Node):
            return NotImplemented
        return (self.id, self.host, self.port, self.rack) == (other.id, other.host, other.port, other.rack)

    def __hash__(self) -> int:
        return hash((self.id, self.host, self.port))

    def __repr__(self) -> str:
        return f"Node({self.id}, {self.host}:{self.port}, rack={self.rack})"


class DescribeClusterResult:
    def __init__(
        self,
        controller: Node | None,
        nodes: list[Node],
        cluster_id: str | None = None,
        authorized_operations: list[Any] | None = None,
    ) -> None:
        self.cluster_id = cluster_id
        self.controller = controller
        self.nodes = nodes
        self.authorized_operations = authorized_operations


def check_new_topic(t: NewTopic) -> None:
    """librdkafka's checks on a NewTopic, raised at the call (ValueError) as confluent-kafka does."""
    if not (t.num_partitions == -1 or 1 <= t.num_partitions <= _MAX_PARTITIONS):
        raise ValueError(
            f"Invalid NewTopic({t.topic}): num_partitions out of expected range 1..{_MAX_PARTITIONS} or -1 for broker default"
        )
    if not -1 <= t.replication_factor <= _MAX_REPLICATION:
        raise ValueError(
            f"Invalid NewTopic({t.topic}): replication_factor out of expected range -1..{_MAX_REPLICATION}"
        )
    if t.replica_assignment is not None:
        if t.replication_factor != -1:
            raise ValueError("replication_factor and replica_assignment are mutually exclusive")
        assignment = _check_assignment(t.replica_assignment, t.topic)
        if assignment is None or (t.num_partitions != -1 and len(assignment) != t.num_partitions):
            raise ValueError("replica_assignment must be a list of int lists with an outer size of num_partitions")
    for key in t.config or {}:
        if not isinstance(key, str):
            raise TypeError("config must be a dict of strings")


def check_new_partitions(p: NewPartitions) -> None:
    if not 1 <= p.new_total_count <= _MAX_PARTITIONS:
        raise ValueError(f"Invalid NewPartitions({p.topic}): new_total_cnt out of expected range 1..{_MAX_PARTITIONS}")
    _check_assignment(p.replica_assignment, p.topic)
