"""Serializers and deserializers for keys and values (confluent_kafka.serialization's API).

The framework: a `Serializer` turns an object into bytes, a `Deserializer` bytes into an object,
each told through a `SerializationContext` which topic and which part of the record (key or value)
it works on. The numeric and string ones here use Kafka's Java client encodings (big-endian), so
bytes they write read back with any Kafka client. The Schema Registry ones live in
``kafkawire.schema_registry`` (an optional extra).

The serializing clients' shared plumbing is here too, as confluent-kafka's ``_serde_builder``
module has it (the alias gives this module for that one): a serde given ready-made or made by a
builder (``key.serializer.builder``, `SerializerBuilder`), the serdes a client built being its to
close, and a cluster id resolver handed to the serdes that take one. A builder's ``build(conf,
is_key)`` gets the whole client configuration and hands back the serde and what it did not consume;
the client gets only what every builder left, so a property any builder took (the Schema
Registry's) never reaches the Kafka client's checks. The resolver is called on a serde's first
look-up that needs the cluster id, never while the client is made, and concurrent callers share one
call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import logging
import struct
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from enum import Enum
from typing import Any, NamedTuple

from .core.kafka_error import KafkaException

log = logging.getLogger(__name__)

__all__ = [
    "Deserializer",
    "DeserializerBuilder",
    "DoubleDeserializer",
    "DoubleSerializer",
    "IntegerDeserializer",
    "IntegerSerializer",
    "MessageField",
    "SerializationContext",
    "SerializationError",
    "Serializer",
    "SerializerBuilder",
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


class SerializerBuilder:
    """Base of the builders a client takes as ``key.serializer.builder``/``value.serializer.builder``:
    the serializer is made when the client is, from the client's configuration, and is the client's
    to close. ``build(conf, is_key)`` returns the serializer and the properties it did not consume."""

    __slots__: list[str] = []

    def build(self, conf: dict[str, Any], is_key: bool) -> tuple[Serializer, dict[str, Any]]:
        raise NotImplementedError


class DeserializerBuilder:
    """`SerializerBuilder` for ``key.deserializer.builder``/``value.deserializer.builder``."""

    __slots__: list[str] = []

    def build(self, conf: dict[str, Any], is_key: bool) -> tuple[Deserializer, dict[str, Any]]:
        raise NotImplementedError


# Seconds a serde waits for its client to learn the cluster id (the Java client's max.block.ms).
CLUSTER_ID_TIMEOUT = 60.0


class SerdeSpec(NamedTuple):
    """One serde of a client's configuration: the property, and the serde or its builder."""

    prop: str
    serde: Any
    builder: Any
    is_key: bool


def pop_serde_props(conf: dict[str, Any], key_prop: str, value_prop: str) -> tuple[list[SerdeSpec], dict[str, Any]]:
    """The key's then the value's `SerdeSpec`, and a copy of ``conf`` without their properties
    (``<prop>`` and ``<prop>.builder``); ValueError when both of a pair are set."""
    rest = dict(conf)
    specs = []
    for prop, is_key in ((key_prop, True), (value_prop, False)):
        serde, builder = rest.pop(prop, None), rest.pop(prop + ".builder", None)
        if serde is not None and builder is not None:
            raise ValueError(f"Cannot configure both {prop} and {prop}.builder; use one or the other")
        specs.append(SerdeSpec(prop, serde, builder, is_key))
    return specs, rest


def check_callable(specs: list[SerdeSpec], serdes: list[Any]) -> None:
    """A serde that is not callable is a configuration mistake: TypeError naming its property, while
    the client is made (confluent-kafka's clients fail only at the first record)."""
    for spec, serde in zip(specs, serdes, strict=True):
        if serde is not None and not callable(serde):
            raise TypeError(f"{spec.prop} must be callable, not {type(serde).__name__}")


def validate_build_result(builder_prop: str, result: Any) -> tuple[Any, dict[str, Any]]:
    """A builder's ``(serde, leftover configuration)``; ValueError naming the property otherwise."""
    try:
        serde, leftover = result
    except (TypeError, ValueError):
        raise ValueError(
            f"{builder_prop}.builder must return a (serde, configuration) tuple from build(), "
            f"got {type(result).__name__}"
        ) from None
    if not isinstance(leftover, dict):
        raise ValueError(
            f"{builder_prop}.builder returned {type(leftover).__name__} as the leftover configuration "
            "from build(), expected a dict"
        )
    return serde, leftover


def intersect_leftovers(conf: dict[str, Any], leftovers: list[dict[str, Any]]) -> dict[str, Any]:
    """What every builder left (in the last one's order and values); ``conf`` itself without builders."""
    if not leftovers:
        return conf
    *others, last = leftovers
    return {k: v for k, v in last.items() if all(k in other for other in others)}


def build_serdes(specs: list[SerdeSpec], conf: dict[str, Any]) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """The serdes in spec order, those built here (the client's to close), and the configuration
    left for the client. A builder that fails closes what the ones before it built."""
    serdes: list[Any] = []
    owned: list[Any] = []
    leftovers: list[dict[str, Any]] = []
    try:
        for spec in specs:
            if spec.builder is None:
                serdes.append(spec.serde)
                continue
            serde, leftover = validate_build_result(spec.prop, spec.builder.build(dict(conf), spec.is_key))
            serdes.append(serde)
            owned.append(serde)
            leftovers.append(leftover)
    except BaseException:
        close_serdes(owned)
        raise
    return serdes, owned, intersect_leftovers(conf, leftovers)


async def maybe_await(result: Any) -> Any:
    """``result`` awaited if it is awaitable: the asyncio clients take asyncio and blocking serdes."""
    if inspect.isawaitable(result):
        return await result
    return result


async def async_build_serdes(
    specs: list[SerdeSpec], conf: dict[str, Any]
) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """`build_serdes` for the asyncio clients: a builder's ``build()`` may be a coroutine."""
    serdes: list[Any] = []
    owned: list[Any] = []
    leftovers: list[dict[str, Any]] = []
    try:
        for spec in specs:
            if spec.builder is None:
                serdes.append(spec.serde)
                continue
            result = await maybe_await(spec.builder.build(dict(conf), spec.is_key))
            serde, leftover = validate_build_result(spec.prop, result)
            serdes.append(serde)
            owned.append(serde)
            leftovers.append(leftover)
    except BaseException:
        await async_close_serdes(owned)
        raise
    return serdes, owned, intersect_leftovers(conf, leftovers)


class SharedClusterIdResolver:
    """``cluster_id(timeout=...)`` with at most one call in flight: the threads that ask meanwhile
    wait for that call's outcome. Nothing is kept after it (the client caches the id; a failure is
    tried again by the next caller)."""

    def __init__(self, cluster_id: Callable[..., Any], timeout: float = CLUSTER_ID_TIMEOUT) -> None:
        self._cluster_id = cluster_id
        self._timeout = timeout
        self._lock = threading.Lock()
        self._in_flight: concurrent.futures.Future[Any] | None = None

    def __call__(self) -> Any:
        with self._lock:
            in_flight, joined = self._in_flight, self._in_flight is not None
            if in_flight is None:
                in_flight = self._in_flight = concurrent.futures.Future()
        if joined:
            return in_flight.result()
        try:
            result = self._cluster_id(timeout=self._timeout)
        except BaseException as e:
            self._forget(in_flight)
            in_flight.set_exception(e)
            raise
        # Forgotten before it completes: a waiter woken by it that asks again starts a new call.
        self._forget(in_flight)
        in_flight.set_result(result)
        return result

    def _forget(self, in_flight: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            if self._in_flight is in_flight:
                self._in_flight = None


class AsyncSharedClusterIdResolver:
    """`SharedClusterIdResolver` for coroutines: one task runs ``await cluster_id(timeout=...)``
    and every awaiter shares it; a cancelled awaiter leaves it running for the others."""

    def __init__(self, cluster_id: Callable[..., Awaitable[Any]], timeout: float = CLUSTER_ID_TIMEOUT) -> None:
        self._cluster_id = cluster_id
        self._timeout = timeout
        self._in_flight: asyncio.Task[Any] | None = None

    async def __call__(self) -> Any:
        in_flight = self._in_flight
        if in_flight is None:
            in_flight = self._in_flight = asyncio.get_running_loop().create_task(self._resolve())
        return await asyncio.shield(in_flight)

    async def _resolve(self) -> Any:
        try:
            return await self._cluster_id(timeout=self._timeout)
        finally:
            self._in_flight = None


def propagate_cluster_id_resolver(resolver: Callable[[], Any], serdes: list[Any]) -> None:
    """Offer ``resolver`` to each serde with a ``set_cluster_id_resolver`` (None and plain callables
    are passed over); nothing is resolved here."""
    _offer("set_cluster_id_resolver", resolver, serdes)


def propagate_async_cluster_id_resolver(resolver: Callable[[], Awaitable[Any]], serdes: list[Any]) -> None:
    """Offer a coroutine resolver to the asyncio serdes (``set_async_cluster_id_resolver``); a
    blocking serde gets none, as waiting for the broker would stall the event loop."""
    _offer("set_async_cluster_id_resolver", resolver, serdes)


def _offer(setter: str, resolver: Callable[[], Any], serdes: list[Any]) -> None:
    for serde in serdes:
        take = getattr(serde, setter, None)
        if callable(take):
            take(resolver)


def close_serdes(serdes: list[Any]) -> None:
    """Close each serde that has ``close()``; all are tried, the first failure raised after them
    (later ones logged)."""
    first: BaseException | None = None
    for serde in serdes:
        close = getattr(serde, "close", None)
        if not callable(close):
            continue
        try:
            close()
        except BaseException as e:
            if first is None:
                first = e
            else:
                log.warning("Failed to close serde %r", serde, exc_info=True)
    if first is not None:
        raise first


async def async_close_serdes(serdes: list[Any]) -> None:
    """`close_serdes` for the asyncio clients: ``aclose()`` where a serde has it, else ``close()``,
    awaited when it is a coroutine."""
    first: BaseException | None = None
    for serde in serdes:
        close = getattr(serde, "aclose", None)
        if not callable(close):
            close = getattr(serde, "close", None)
        if not callable(close):
            continue
        try:
            await maybe_await(close())
        except BaseException as e:
            if first is None:
                first = e
            else:
                log.warning("Failed to close serde %r", serde, exc_info=True)
    if first is not None:
        raise first


class OwnedSerdes:
    """The serdes a serde client built from ``.builder`` properties (never those it was given):
    closed after the client, or at once when the client's construction fails, that failure being
    the error raised."""

    def __init__(self, serdes: list[Any]) -> None:
        self._serdes = serdes

    def _take(self) -> list[Any]:
        serdes, self._serdes = self._serdes, []
        return serdes

    def close(self) -> None:
        close_serdes(self._take())

    async def aclose(self) -> None:
        await async_close_serdes(self._take())

    @contextlib.contextmanager
    def closed_if_raised(self) -> Iterator[None]:
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):
                self.close()
            raise

    @contextlib.asynccontextmanager
    async def aclosed_if_raised(self) -> AsyncIterator[None]:
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):
                await self.aclose()
            raise


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
