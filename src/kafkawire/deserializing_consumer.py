"""DeserializingConsumer: a Consumer whose poll() runs key and value deserializers (confluent-kafka's API).

An error event comes out of ``poll()`` as `ConsumeError`; a deserializer that fails raises
`KeyDeserializationError`/`ValueDeserializationError` carrying the message, whose offset has been
consumed (a poison record does not stop the consumer: the next poll() goes on after it).
``consume()`` is not implemented, as in confluent-kafka. Outside consumer/ so that the client never
imports the optional deserializers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base.config import given_config
from .base.model import Message
from .consumer.consumer import Consumer
from .error import ConsumeError, KeyDeserializationError, ValueDeserializationError
from .serialization import MessageField, SerializationContext, offer_cluster_id

__all__ = ["DeserializingConsumer"]


class DeserializingConsumer(Consumer):
    """``key.deserializer``/``value.deserializer``: callables ``(bytes, SerializationContext) -> obj``."""

    def __init__(self, conf: Mapping[str, Any]) -> None:
        conf = given_config(conf, {})
        self._key_deserializer: Callable[..., Any] | None = conf.pop("key.deserializer", None)
        self._value_deserializer: Callable[..., Any] | None = conf.pop("value.deserializer", None)
        for name, de in (
            ("key.deserializer", self._key_deserializer),
            ("value.deserializer", self._value_deserializer),
        ):
            if de is not None and not callable(de):
                raise TypeError(f"{name} must be callable, not {type(de).__name__}")
        super().__init__(conf)
        offer_cluster_id(self.cluster_id, (self._key_deserializer, self._value_deserializer))

    def poll(self, timeout: float | None = -1) -> Message | None:
        """A message with its key and value deserialized, or None once ``timeout`` s passed."""
        msg = super().poll(timeout)
        return None if msg is None else self._decoded(msg)

    def _decoded(self, msg: Message) -> Message:
        """Raise the message's error, else replace its value and key (value first) by what the
        deserializers make of them; the message is changed only once both have succeeded."""
        failure = msg.error()
        if failure is not None:
            raise ConsumeError(failure, kafka_message=msg)
        topic, headers = msg.topic() or "", msg.headers()
        value_ctx = SerializationContext(topic, _VALUE, headers)
        value = _run(self._value_deserializer, msg.value(), value_ctx, ValueDeserializationError, msg)
        key_ctx = SerializationContext(topic, _KEY, headers)
        key = _run(self._key_deserializer, msg.key(), key_ctx, KeyDeserializationError, msg)
        msg.set_value(value)
        msg.set_key(key)
        return msg

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        """Not offered: each record's deserializer can fail on its own, which ``poll()`` reports."""
        raise NotImplementedError("DeserializingConsumer has no consume(); poll() returns one deserialized message")


_KEY, _VALUE = MessageField.KEY, MessageField.VALUE


def _run(
    deserializer: Callable[..., Any] | None,
    data: bytes | None,
    ctx: SerializationContext,
    failed: type[KeyDeserializationError] | type[ValueDeserializationError],
    msg: Message,
) -> Any:
    """``deserializer(data, ctx)``, its failure wrapped as ``failed`` with the message; no
    deserializer leaves the bytes as they are."""
    if deserializer is None:
        return data
    try:
        return deserializer(data, ctx)
    except Exception as e:
        raise failed(exception=e, kafka_message=msg) from e
