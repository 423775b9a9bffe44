"""DeserializingConsumer: a Consumer whose poll() runs key and value deserializers (confluent-kafka's API).

A deserializer comes ready-made (``key.deserializer``: a callable ``(bytes, SerializationContext)
-> obj``) or from a builder (``key.deserializer.builder``, `DeserializerBuilder`); the deserializers it
built are the consumer's, closed by ``close()``. An error event comes out of ``poll()`` as
`ConsumeError`; a deserializer that fails raises `KeyDeserializationError`/`ValueDeserializationError`
carrying the message, whose offset has been consumed (a poison record does not stop the consumer:
the next poll() goes on after it). The key is deserialized first, so a key deserializer may leave
state for the value's (the Schema Registry's DLQ action does). ``consume()`` is not implemented, as
in confluent-kafka. Outside consumer/ so that the client never imports the optional deserializers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base.config import given_config
from .base.model import Message
from .consumer.consumer import Consumer
from .error import ConsumeError, KeyDeserializationError, ValueDeserializationError
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

__all__ = ["DeserializingConsumer"]


class DeserializingConsumer(Consumer):
    """``key.deserializer``/``value.deserializer`` (or their ``.builder``): see the module."""

    def __init__(self, conf: Mapping[str, Any]) -> None:
        specs, rest = pop_serde_props(given_config(conf, {}), "key.deserializer", "value.deserializer")
        serdes, owned, rest = build_serdes(specs, rest)
        self._owned_serdes = OwnedSerdes(owned)
        self._key_deserializer: Callable[..., Any] | None = serdes[0]
        self._value_deserializer: Callable[..., Any] | None = serdes[1]
        with self._owned_serdes.closed_if_raised():
            check_callable(specs, serdes)
            super().__init__(rest)
            propagate_cluster_id_resolver(SharedClusterIdResolver(self.cluster_id), serdes)

    def close(self) -> None:
        """Close the consumer, then the deserializers it built (never those it was given); closing
        again does nothing."""
        super().close()
        self._owned_serdes.close()

    def poll(self, timeout: float | None = -1) -> Message | None:
        """A message with its key and value deserialized, or None once ``timeout`` s passed."""
        msg = super().poll(timeout)
        return None if msg is None else self._decoded(msg)

    def _decoded(self, msg: Message) -> Message:
        """Raise the message's error, else replace its key and value by what the deserializers
        make of them (key first); the message is changed only once both have succeeded."""
        failure = msg.error()
        if failure is not None:
            raise ConsumeError(failure, kafka_message=msg)
        ctx = SerializationContext(msg.topic() or "", _KEY, msg.headers())
        key = msg.key()
        if self._key_deserializer is not None:
            try:
                key = self._key_deserializer(key, ctx)
            except Exception as e:
                raise KeyDeserializationError(exception=e, kafka_message=msg) from e
        value = msg.value()
        if self._value_deserializer is not None:
            ctx.field = _VALUE
            try:
                value = self._value_deserializer(value, ctx)
            except Exception as e:
                raise ValueDeserializationError(exception=e, kafka_message=msg) from e
        msg.set_key(key)
        msg.set_value(value)
        return msg

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        """Not offered: each record's deserializer can fail on its own, which ``poll()`` reports."""
        raise NotImplementedError("DeserializingConsumer has no consume(); poll() returns one deserialized message")


_KEY, _VALUE = MessageField.KEY, MessageField.VALUE
