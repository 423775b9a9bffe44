"""`model.Message`'s base: its eleven fields as slots and their accessors.

With the C extension built the base is ``_native.MessageFields`` (an accessor called per consumed
record then costs no Python frame, as confluent-kafka's C `Message`); `_MessageFields` here is its
pure-Python twin. Everything with a rule (constructor, setters, pickling, equality) is `Message`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

from ..core.kafka_error import KafkaError
from ..native import native

Headers: TypeAlias = Mapping[str, str | bytes | None] | Sequence[tuple[str, str | bytes | None]]
"""Message headers: a list of (key, value) pairs (keys may repeat) or a dict, as confluent-kafka accepts."""


class _MessageFields:
    """Message's fields and their accessors: the twin of ``_native.MessageFields``, its base when
    the C extension is built (an accessor called per consumed record then costs no Python frame)."""

    __slots__ = (
        "_delivery_count",
        "_error",
        "_headers",
        "_key",
        "_latency",
        "_leader_epoch",
        "_offset",
        "_partition",
        "_timestamp",
        "_topic",
        "_value",
    )
    _topic: str | None
    _partition: int | None
    _offset: int | None
    _key: bytes | None
    _value: bytes | None
    _headers: Headers | None
    _timestamp: tuple[int, int]
    _error: KafkaError | None
    _latency: float | None
    _leader_epoch: int | None
    _delivery_count: int | None

    def topic(self) -> str | None:
        return self._topic

    def partition(self) -> int | None:
        return self._partition

    def offset(self) -> int | None:
        return self._offset

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> Headers | None:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        """``(type, ms since epoch)``; ignore the ms when the type is TIMESTAMP_NOT_AVAILABLE."""
        return self._timestamp

    def latency(self) -> float | None:
        """Seconds from produce() to the broker's acknowledgement, or None when unknown."""
        return self._latency

    def error(self) -> KafkaError | None:
        return self._error

    def leader_epoch(self) -> int | None:
        return self._leader_epoch

    def delivery_count(self) -> int | None:
        """Share-group delivery count; None outside share consumers (so always for the producer)."""
        return self._delivery_count


if TYPE_CHECKING or native is None:  # noqa: SIM108 (a base class mypy reads must come from an if-block)
    MessageFields = _MessageFields
else:
    MessageFields = native.MessageFields
