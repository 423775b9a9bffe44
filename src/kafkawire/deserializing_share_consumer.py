"""DeserializingShareConsumer: a ShareConsumer whose poll() runs the key and value deserializers
on each record in place.

A record that fails to deserialize is not raised and does not cost the rest of the batch: it stays
in the batch with its raw key and value and ``error()`` set to _KEY_DESERIALIZATION or
_VALUE_DESERIALIZATION, so the application sees it with its usual ``if msg.error():`` check and can
still acknowledge it (REJECT, say): acknowledgements go by topic, partition and offset, which stay.
The value is deserialized first, then the key; both are written back only when both succeeded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base.messages import Messages
from .base.model import Message
from .core.kafka_error import KafkaError
from .serialization import MessageField, SerializationContext
from .share_consumer.share_consumer import ShareConsumer


class DeserializingShareConsumer(ShareConsumer):
    def __init__(self, conf: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        rest = dict(conf or {})
        self._key_deserializer = rest.pop("key.deserializer", None)
        self._value_deserializer = rest.pop("value.deserializer", None)
        super().__init__(rest, **kwargs)

    def poll(self, timeout: float = -1) -> Messages:
        """The polled records with keys and values deserialized (records with an error unchanged)."""
        messages = super().poll(timeout)
        for msg in messages:
            if msg.error() is None:
                self._deserialize(msg)
        return messages

    def _deserialize(self, msg: Message) -> None:
        topic = msg.topic()
        if topic is None:
            raise TypeError("Message topic is None")
        ctx = SerializationContext(topic, MessageField.VALUE, msg.headers())
        value = msg.value()
        if self._value_deserializer is not None:
            try:
                value = self._value_deserializer(value, ctx)
            except Exception as exc:
                msg.set_error(KafkaError(KafkaError._VALUE_DESERIALIZATION, str(exc)))
                return
        key = msg.key()
        if self._key_deserializer is not None:
            ctx.field = MessageField.KEY
            try:
                key = self._key_deserializer(key, ctx)
            except Exception as exc:
                msg.set_error(KafkaError(KafkaError._KEY_DESERIALIZATION, str(exc)))
                return
        msg.set_value(value)
        msg.set_key(key)
