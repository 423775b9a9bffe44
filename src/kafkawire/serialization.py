"""Serializers and deserializers for keys and values (confluent_kafka.serialization's API).

The framework: a `Serializer` turns an object into bytes, a `Deserializer` bytes into an object,
each told through a `SerializationContext` which topic and which part of the record (key or value)
it works on. The numeric and string ones here use Kafka's Java client encodings (big-endian), so
bytes they write read back with any Kafka client. The Schema Registry ones live in
``kafkawire.schema_registry`` (an optional extra).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from enum import Enum
from typing import Any

from .core.kafka_error import KafkaException

__all__ = [
    "Deserializer",
    "DoubleDeserializer",
    "DoubleSerializer",
    "IntegerDeserializer",
    "IntegerSerializer",
    "MessageField",
    "SerializationContext",
    "SerializationError",
    "Serializer",
    "StringDeserializer",
    "StringSerializer",
]


class MessageField(str, Enum):
    """Which part of a record a (de)serializer is working on; subject name strategies read it."""

    NONE = "none"
    KEY = "key"
    VALUE = "value"

    def __str__(self) -> str:
        return str(self.value)


class SerializationContext:
    """What a (de)serializer may need to know about the record: its topic, key or value, headers.

    Serializers that carry the schema id in a header append to ``headers``.
    """

    __slots__ = ("field", "headers", "topic")

    def __init__(self, topic: str, field: MessageField, headers: Any = None) -> None:
        self.topic = topic
        self.field = field
        self.headers = headers

    def __repr__(self) -> str:
        return f"SerializationContext(topic={self.topic!r}, field={self.field!s})"


class SerializationError(KafkaException):
    """A (de)serializer could not convert an object or a payload."""


class Serializer:
    """Base of every serializer: ``serializer(obj, ctx) -> bytes | None`` (None stays None)."""

    __slots__: list[str] = []

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
        raise NotImplementedError

    def set_cluster_id_resolver(self, resolver: Callable[[], Any]) -> None:
        """Told how to learn the Kafka cluster id; serializers that do not need it ignore it."""

    def close(self) -> None:
        """Releases what the serializer holds (nothing here)."""


class Deserializer:
    """Base of every deserializer: ``deserializer(data, ctx) -> object`` (None stays None)."""

    __slots__: list[str] = []

    def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> Any:
        raise NotImplementedError

    def set_cluster_id_resolver(self, resolver: Callable[[], Any]) -> None:
        """Told how to learn the Kafka cluster id; deserializers that do not need it ignore it."""

    def close(self) -> None:
        """Releases what the deserializer holds (nothing here)."""


# Seconds a serde waits for the cluster id its client learns (confluent-kafka's wait).
CLUSTER_ID_TIMEOUT = 60.0


def offer_cluster_id(cluster_id: Callable[..., str | None], serdes: tuple[Any, ...]) -> None:
    """Tells each serde that takes it (``set_cluster_id_resolver``) how to learn its client's
    cluster id: ``cluster_id(timeout=...)``, called on a look-up that needs it, never here, so making
    the client never waits on a broker."""

    def resolve() -> str | None:
        return cluster_id(timeout=CLUSTER_ID_TIMEOUT)

    for serde in serdes:
        setter = getattr(serde, "set_cluster_id_resolver", None)
        if callable(setter):
            setter(resolve)


class _StructSerializer(Serializer):
    """A fixed-width big-endian number, as Java's serializers for the same type write it."""

    __slots__ = ()
    _format: struct.Struct

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        try:
            return self._format.pack(obj)
        except struct.error as e:
            raise SerializationError(str(e)) from e


class _StructDeserializer(Deserializer):
    __slots__ = ()
    _format: struct.Struct

    def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if value is None:
            return None
        try:
            return self._format.unpack(value)[0]
        except struct.error as e:
            raise SerializationError(str(e)) from e


class DoubleSerializer(_StructSerializer):
    """A float as an IEEE 754 binary64, big-endian (Java's DoubleSerializer)."""

    __slots__ = ()
    _format = struct.Struct(">d")


class DoubleDeserializer(_StructDeserializer):
    __slots__ = ()
    _format = struct.Struct(">d")


class IntegerSerializer(_StructSerializer):
    """An int as a signed 32-bit big-endian integer (Java's IntegerSerializer)."""

    __slots__ = ()
    _format = struct.Struct(">i")


class IntegerDeserializer(_StructDeserializer):
    __slots__ = ()
    _format = struct.Struct(">i")


class StringSerializer(Serializer):
    """A str encoded with ``codec`` (Python's codec names; UTF-8 by default)."""

    __slots__ = ("codec",)

    def __init__(self, codec: str = "utf_8") -> None:
        self.codec = codec

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if not isinstance(obj, str):
            raise SerializationError(f"Unsupported type {type(obj)}")
        try:
            return obj.encode(self.codec)
        except (UnicodeError, LookupError) as e:
            raise SerializationError(str(e)) from e


class StringDeserializer(Deserializer):
    """Bytes decoded with ``codec`` (UTF-8 by default)."""

    __slots__ = ("codec",)

    def __init__(self, codec: str = "utf_8") -> None:
        self.codec = codec

    def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if value is None:
            return None
        try:
            return bytes(value).decode(self.codec)
        except (UnicodeError, LookupError) as e:
            raise SerializationError(str(e)) from e
