"""Topic values of the admin API, named and shaped as in ``confluent_kafka`` (``TopicCollection``,
``TopicPartitionInfo``, ``ElectionType`` are top-level there) and ``confluent_kafka.admin``."""

from __future__ import annotations

import base64
import struct
import uuid
from typing import Any

from ..base import model
from .types import Node, _Ordered

__all__ = ["ElectionType", "TopicCollection", "TopicDescription", "TopicPartitionInfo", "Uuid"]

_INT64 = struct.Struct(">q")


class Uuid:
    """A Kafka id (topic ids) as confluent-kafka's ``Uuid``: two signed 64-bit halves, shown as
    librdkafka shows it (16 bytes in standard base64 without padding; Java's is URL-safe)."""

    def __init__(self, most_significant_bits: int, least_significant_bits: int) -> None:
        for bits in (most_significant_bits, least_significant_bits):
            if not isinstance(bits, int):  # (a bool is an int: 0 or 1, as the C extension reads it)
                raise TypeError(f"'{type(bits).__name__}' object cannot be interpreted as an integer")
            if not -(2**63) <= bits < 2**63:
                raise OverflowError("int too big to convert")
        self._bits = (int(most_significant_bits), int(least_significant_bits))

    @classmethod
    def from_uuid(cls, value: uuid.UUID) -> Uuid:
        high, low = struct.unpack(">qq", value.bytes)
        return cls(high, low)

    def get_most_significant_bits(self) -> int:
        return self._bits[0]

    def get_least_significant_bits(self) -> int:
        return self._bits[1]

    def __str__(self) -> str:
        raw = _INT64.pack(self._bits[0]) + _INT64.pack(self._bits[1])
        return base64.b64encode(raw).decode().rstrip("=")

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Uuid) and self._bits == other._bits

    def __hash__(self) -> int:
        return hash(self._bits)


class TopicCollection:
    """Topics named for ``describe_topics()``; the names are checked by the call."""

    def __init__(self, topic_names: list[str]) -> None:
        self.topic_names = topic_names

    def __repr__(self) -> str:
        return f"TopicCollection({self.topic_names!r})"


class TopicPartitionInfo:
    """A partition as ``describe_topics()`` reports it: its id, leader, replicas and in-sync replicas."""

    def __init__(self, id: int, leader: Node | None, replicas: list[Node], isr: list[Node]) -> None:
        self.id = id
        self.leader = leader
        self.replicas = replicas
        self.isr = isr

    def __repr__(self) -> str:
        return f"TopicPartitionInfo(id={self.id}, leader={self.leader}, replicas={self.replicas}, isr={self.isr})"


class TopicDescription:
    """A topic's id (all zero from brokers before Kafka 2.8), internal flag, partitions, and the
    operations the caller may perform on it (asked for with ``include_authorized_operations``)."""

    def __init__(
        self,
        name: str,
        topic_id: Uuid,
        is_internal: bool,
        partitions: list[TopicPartitionInfo],
        authorized_operations: list[Any] | None = None,
    ) -> None:
        self.name = name
        self.topic_id = topic_id
        self.is_internal = is_internal
        self.partitions = partitions
        self.authorized_operations = None if authorized_operations is None else list(authorized_operations)

    def __repr__(self) -> str:
        return f"TopicDescription({self.name!r}, partitions={len(self.partitions)})"


class ElectionType(_Ordered):
    """``elect_leaders()``'s kind of election; the values are Kafka's wire numbers."""

    PREFERRED = model.ELECTION_TYPE_PREFERRED
    UNCLEAN = model.ELECTION_TYPE_UNCLEAN
