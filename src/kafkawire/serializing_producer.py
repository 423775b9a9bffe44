"""SerializingProducer: a Producer that runs key and value serializers (confluent-kafka's API).

A serializer that fails raises `KeySerializationError`/`ValueSerializationError` from ``produce()``
with the cause attached, and nothing is queued: the caller learns of every record that is not sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base.config import given_config
from .error import KeySerializationError, ValueSerializationError
from .producer import Producer
from .serialization import MessageField, SerializationContext, offer_cluster_id

__all__ = ["SerializingProducer"]

_KEY, _VALUE = MessageField.KEY, MessageField.VALUE  # (an Enum attribute look-up per record costs)


class SerializingProducer(Producer):
    """``key.serializer``/``value.serializer``: callables ``(obj, SerializationContext) -> bytes``."""

    def __init__(self, conf: Mapping[str, Any]) -> None:
        conf = given_config(conf, {})
        self._key_serializer: Callable[..., Any] | None = conf.pop("key.serializer", None)
        self._value_serializer: Callable[..., Any] | None = conf.pop("value.serializer", None)
        for name, ser in (("key.serializer", self._key_serializer), ("value.serializer", self._value_serializer)):
            if ser is not None and not callable(ser):
                raise TypeError(f"{name} must be callable, not {type(ser).__name__}")
        super().__init__(conf)
        offer_cluster_id(self.cluster_id, (self._key_serializer, self._value_serializer))

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
            raise TypeError(f"topic must be str, not {type(topic).__name__}")
        ctx = SerializationContext(topic, _KEY, headers)
        # One try for both serializers: ``stage`` is the error a failure at this point becomes.
        stage: type[KeySerializationError] | type[ValueSerializationError] = KeySerializationError
        try:
            if self._key_serializer is not None:
                key = self._key_serializer(key, ctx)
            stage, ctx.field = ValueSerializationError, _VALUE
            if self._value_serializer is not None:
                value = self._value_serializer(value, ctx)
        except Exception as e:
            raise stage(e) from e
        # ctx.headers: a serializer that writes the schema id into headers may have added one.
        super().produce(topic, value, key, partition, on_delivery, timestamp, ctx.headers)
