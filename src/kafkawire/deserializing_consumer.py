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

from .consumer.consumer import Consumer
from .error import ConsumeError, KeyDeserializationError, ValueDeserializationError
from .model import Message
from .serialization import MessageField, SerializationContext

__all__ = ["DeserializingConsumer"]


class DeserializingConsumer(Consumer):
    """``key.deserializer``/``value.deserializer``: callables ``(bytes, SerializationContext) -> obj``."""

    def __init__(self, conf: Mapping[str, Any]) -> None:
        conf = dict(conf)
        self._key_deserializer: Callable[..., Any] | None = conf.pop("key.deserializer", None)
        self._value_deserializer: Callable[..., Any] | None = conf.pop("value.deserializer", None)
        for name, de in (
            ("key.deserializer", self._key_deserializer),
            ("value.deserializer", self._value_deserializer),
        ):
            if de is not None and not callable(de):
                raise TypeError(f"{name} must be callable, not {type(de).__name__}")
        super().__init__(conf)

    def poll(self, timeout: float | None = -1) -> Message | None:
        """A message with its key and value deserialized, or None once ``timeout`` s passed."""
        msg = super().poll(timeout)
        if msg is None:
            return None
        error = msg.error()
        if error is not None:
            raise ConsumeError(error, kafka_message=msg)
        ctx = SerializationContext(msg.topic() or "", MessageField.VALUE, msg.headers())
        value = msg.value()
        if self._value_deserializer is not None:
            try:
                value = self._value_deserializer(value, ctx)
            except Exception as e:
                raise ValueDeserializationError(exception=e, kafka_message=msg) from e
        key = msg.key()
        ctx.field = MessageField.KEY
        if self._key_deserializer is not None:
            try:
                key = self._key_deserializer(key, ctx)
            except Exception as e:
                raise KeyDeserializationError(exception=e, kafka_message=msg) from e
        msg.set_key(key)
        msg.set_value(value)
        return msg

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        raise NotImplementedError("Consumer.consume() not implemented, use DeserializingConsumer.poll() instead")
