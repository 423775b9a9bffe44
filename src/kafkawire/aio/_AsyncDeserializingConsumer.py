"""`AsyncDeserializingConsumer`: `AIOConsumer` with key and value deserializers, made with ``await``
(confluent-kafka's ``confluent_kafka.aio.AsyncDeserializingConsumer``).

Deserializers as `AsyncSerializingProducer` takes serializers: blocking or asyncio, ready-made or
built (``.builder``, then the consumer's to close). ``poll()`` raises a message's error as
`ConsumeError` and a deserializer's failure as `KeyDeserializationError`/`ValueDeserializationError`
(the key first, so a key deserializer may leave state for the value's); ``consume()`` hands messages
with an error back as they are, so the rest of the batch is not lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._util.asyncinit import asyncinit
from ..base.model import Message
from ..error import ConsumeError, KeyDeserializationError, ValueDeserializationError
from ..serialization import (
    AsyncSharedClusterIdResolver,
    MessageField,
    OwnedSerdes,
    SerializationContext,
    async_build_serdes,
    check_callable,
    maybe_await,
    pop_serde_props,
    propagate_async_cluster_id_resolver,
)
from ..serialization import async_close_serdes as async_close_serdes  # (in confluent-kafka's module namespace)
from ._AIOConsumer import AIOConsumer

__all__ = ["AsyncDeserializingConsumer"]


@asyncinit
class AsyncDeserializingConsumer(AIOConsumer):
    async def __init__(self, conf: Mapping[str, Any], **kwargs: Any) -> None:  # type: ignore[misc]
        """``conf``: the deserializer properties and the consumer's; ``kwargs``: `AIOConsumer`'s
        (``max_workers``, ``executor``). ValueError when a deserializer and its builder are both set."""
        if not isinstance(conf, Mapping):
            raise TypeError(f"expected configuration dict, not {type(conf).__name__}")
        specs, rest = pop_serde_props(dict(conf), "key.deserializer", "value.deserializer")
        serdes, owned, rest = await async_build_serdes(specs, rest)
        self._owned_serdes = OwnedSerdes(owned)
        self._key_deserializer, self._value_deserializer = serdes
        self._consumer_closed = False
        async with self._owned_serdes.aclosed_if_raised():
            check_callable(specs, serdes)
            AIOConsumer.__init__(self, rest, **kwargs)
            propagate_async_cluster_id_resolver(AsyncSharedClusterIdResolver(self.cluster_id), serdes)

    async def close(self) -> None:
        """Leave the group and close the consumer, then the deserializers it built (never those it
        was given); closing again does nothing."""
        if not self._consumer_closed:
            await super().close()
            self._consumer_closed = True
        await self._owned_serdes.aclose()

    async def poll(self, timeout: float | None = None) -> Message | None:
        msg = await super().poll(timeout)
        if msg is None:
            return None
        error = msg.error()
        if error is not None:
            raise ConsumeError(error, kafka_message=msg)
        return await self._deserialize(msg)

    async def consume(self, num_messages: int = 1, timeout: float | None = None) -> list[Message]:
        return [
            msg if msg.error() is not None else await self._deserialize(msg)
            for msg in await super().consume(num_messages, timeout)
        ]

    async def _deserialize(self, msg: Message) -> Message:
        """``msg`` with its key and value replaced by what the deserializers make of them, once both
        have succeeded."""
        ctx = SerializationContext(msg.topic() or "", MessageField.KEY, msg.headers())
        key = msg.key()
        if self._key_deserializer is not None:
            try:
                key = await maybe_await(self._key_deserializer(key, ctx))
            except Exception as e:
                raise KeyDeserializationError(exception=e, kafka_message=msg) from e
        value = msg.value()
        if self._value_deserializer is not None:
            ctx.field = MessageField.VALUE
            try:
                value = await maybe_await(self._value_deserializer(value, ctx))
            except Exception as e:
                raise ValueDeserializationError(exception=e, kafka_message=msg) from e
        msg.set_key(key)
        msg.set_value(value)
        return msg
