"""`AsyncSerializingProducer`: `AIOProducer` with key and value serializers, made with ``await``
(confluent-kafka's ``confluent_kafka.aio.AsyncSerializingProducer``).

``key.serializer``/``value.serializer`` take a blocking serializer (a callable, run on the loop: keep
it cheap) or an asyncio one (its call returns a coroutine, awaited); ``.builder`` properties build
them while the producer is made (a builder's ``build()`` may be a coroutine) and the serializers
built are the producer's, closed by ``close()``. Asyncio serializers are offered a coroutine that
resolves the cluster id; blocking ones are offered none (they would stall the loop waiting for it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from .._util.asyncinit import asyncinit
from ..base.model import Message
from ..error import KeySerializationError, ValueSerializationError
from ..producer.aio import AIOProducer
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

__all__ = ["AsyncSerializingProducer"]


@asyncinit
class AsyncSerializingProducer(AIOProducer):
    async def __init__(self, conf: Mapping[str, Any], **kwargs: Any) -> None:  # type: ignore[misc]
        """``conf``: the serializer properties and the producer's; ``kwargs``: `AIOProducer`'s
        (``max_workers``, ``executor``, ...). ValueError when a serializer and its builder are both set."""
        if not isinstance(conf, Mapping):
            raise TypeError(f"expected configuration dict, not {type(conf).__name__}")
        specs, rest = pop_serde_props(dict(conf), "key.serializer", "value.serializer")
        serdes, owned, rest = await async_build_serdes(specs, rest)
        self._owned_serdes = OwnedSerdes(owned)
        self._key_serializer, self._value_serializer = serdes
        async with self._owned_serdes.aclosed_if_raised():
            check_callable(specs, serdes)
            AIOProducer.__init__(self, rest, **kwargs)
            propagate_async_cluster_id_resolver(AsyncSharedClusterIdResolver(self.cluster_id), serdes)

    async def close(self) -> None:
        """Close the producer, then the serializers it built (never those it was given). If closing
        the producer raises, they are kept for the next call: it may still be using them."""
        await super().close()
        await self._owned_serdes.aclose()

    async def produce(  # type: ignore[override]
        self,
        topic: str,
        key: Any = None,
        value: Any = None,
        partition: int = -1,
        timestamp: int = 0,
        headers: Any = None,
    ) -> asyncio.Future[Message]:
        """Serialize key then value (awaiting an asyncio serializer), then `AIOProducer.produce`:
        a future of the delivered message. Checked before the serializers run (they may register
        schemas): the producer is open and ``topic`` is a str."""
        if self._closed:
            raise RuntimeError("Producer has been closed")
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, not {type(topic).__name__}")
        ctx = SerializationContext(topic, MessageField.KEY, headers)
        if self._key_serializer is not None:
            try:
                key = await maybe_await(self._key_serializer(key, ctx))
            except Exception as e:
                raise KeySerializationError(e) from e
        ctx.field = MessageField.VALUE
        if self._value_serializer is not None:
            try:
                value = await maybe_await(self._value_serializer(value, ctx))
            except Exception as e:
                raise ValueSerializationError(e) from e
        return await super().produce(topic, value, key, partition, timestamp, ctx.headers)
