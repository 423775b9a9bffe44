"""SerializingProducer: a Producer that runs key and value serializers (confluent-kafka's API).

A serializer comes ready-made (``key.serializer``: a callable ``(obj, SerializationContext) ->
bytes``) or from a builder (``key.serializer.builder``, `SerializerBuilder`); the serializers it built
are the producer's, closed by ``close()``. A serializer that fails raises
`KeySerializationError`/`ValueSerializationError` from ``produce()`` with the cause attached, and
nothing is queued: the caller learns of every record that is not sent. Interceptors' ``on_send``
sees the record before its key and value are serialized (Kafka's ProducerInterceptor), and the
serializers then work on what it returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base.config import given_config
from .error import KeySerializationError, ValueSerializationError
from .producer import Producer
from .producer.producer_record import ProducerRecord
from .serialization import (
    MessageField,
    OwnedSerdes,
    SerializationContext,
    SharedClusterIdResolver,
    build_serdes,
    check_callable,
    pop_serde_props,
    propagate_cluster_id_resolver,
)
from .serialization import close_serdes as close_serdes  # (in confluent-kafka's module namespace)

__all__ = ["SerializingProducer"]

_KEY, _VALUE = MessageField.KEY, MessageField.VALUE  # (an Enum attribute look-up per record costs)


class SerializingProducer(Producer):
    """``key.serializer``/``value.serializer`` (or their ``.builder``): see the module."""

    def __init__(self, conf: Mapping[str, Any]) -> None:
        specs, rest = pop_serde_props(given_config(conf, {}), "key.serializer", "value.serializer")
        serdes, owned, rest = build_serdes(specs, rest)
        self._owned_serdes = OwnedSerdes(owned)
        self._key_serializer: Callable[..., Any] | None = serdes[0]
        self._value_serializer: Callable[..., Any] | None = serdes[1]
        with self._owned_serdes.closed_if_raised():
            check_callable(specs, serdes)
            super().__init__(rest)
            propagate_cluster_id_resolver(SharedClusterIdResolver(self.cluster_id), serdes)

    def close(self, timeout: float = -1) -> bool:
        """Close the producer, then the serializers it built (never those it was given). If closing
        the producer raises, they are kept for the next call: it may still be using them."""
        result = super().close(timeout)
        self._owned_serdes.close()
        return result

    def produce(  # type: ignore[override]
        self,
        topic: str,
        key: Any = None,
        value: Any = None,
        partition: int = -1,
        on_delivery: Callable[..., Any] | None = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        """Serialize key then value, then queue the record as `Producer.produce` does.

        Checked before the serializers run (they may register schemas): the producer is open and
        ``topic`` is a str.
        """
        if self._closed:
            self._check_open()
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, not {type(topic).__name__}")
        if not self._interceptors:
            key, value, headers = self._serialized(topic, key, value, headers)
            super().produce(topic, value, key, partition, on_delivery, timestamp, headers)
            return
        record = self._interceptors.on_send(ProducerRecord(topic, partition, timestamp, key, value, headers))
        try:
            key, value, headers = self._serialized(record.topic, record.key, record.value, record.headers)
        except (KeySerializationError, ValueSerializationError) as e:
            self._interceptors.on_send_error(record, e)
            raise
        sent = ProducerRecord(record.topic, record.partition, record.timestamp, key, value, headers)
        self._accept_sent(sent, on_delivery if on_delivery is not None else self._conf.on_delivery, None)

    def _serialized(self, topic: str, key: Any, value: Any, headers: Any) -> tuple[Any, Any, Any]:
        """The key and value as their serializers make them, and the headers they may have added
        to (a serializer that writes the schema id into headers)."""
        ctx = SerializationContext(topic, _KEY, headers)
        if self._key_serializer is not None:
            try:
                key = self._key_serializer(key, ctx)
            except Exception as e:
                raise KeySerializationError(e) from e
        ctx.field = _VALUE
        if self._value_serializer is not None:
            try:
                value = self._value_serializer(value, ctx)
            except Exception as e:
                raise ValueSerializationError(e) from e
        return key, value, ctx.headers
