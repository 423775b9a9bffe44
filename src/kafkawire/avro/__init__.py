"""confluent_kafka.avro: the legacy Avro API, deprecated as confluent-kafka deprecates it.

`AvroProducer` and `AvroConsumer` are the clients with a `MessageSerializer` over a
`CachedSchemaRegistryClient` (``schema.registry.*`` keys of their configuration), schemas the
``avro`` library's objects (`load`, `loads`, or JSON text). New code should use
`kafkawire.schema_registry.avro`'s serializers with `SerializingProducer`/`DeserializingConsumer`.
Needs ``kafkawire[avro]``.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..base.model import Message
from ..consumer.consumer import Consumer
from ..producer import Producer
from .cached_schema_registry_client import CachedSchemaRegistryClient
from .error import ClientError
from .load import load, loads  # after the submodule import: `load` is the function, as in confluent-kafka
from .serializer import KeySerializerError, SerializerError, ValueSerializerError
from .serializer.message_serializer import MessageSerializer

__all__ = [
    "AvroConsumer",
    "AvroProducer",
    "CachedSchemaRegistryClient",
    "ClientError",
    "KeySerializerError",
    "MessageSerializer",
    "SerializerError",
    "ValueSerializerError",
    "load",
    "loads",
]

PREFIX = "schema.registry"


def _split(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The registry client's keys (``schema.registry.*`` without the prefix) and the Kafka client's."""
    registry = {k.replace(PREFIX + ".", ""): v for k, v in config.items() if k.startswith(PREFIX)}
    kafka = {k: v for k, v in config.items() if not k.startswith(PREFIX)}
    if registry.get("basic.auth.credentials.source") == "SASL_INHERIT":
        # the Kafka client's SASL credentials (sasl.mechanisms, the older spelling, too)
        registry["sasl.mechanism"] = config.get("sasl.mechanism", config.get("sasl.mechanisms", ""))
        registry["sasl.username"] = config.get("sasl.username", "")
        registry["sasl.password"] = config.get("sasl.password", "")
    return registry, kafka


def _registry(registry_conf: dict[str, Any], given: Any) -> Any:
    if given is None:
        return CachedSchemaRegistryClient(registry_conf)
    if registry_conf.get("url") is not None:
        # same text as confluent-kafka: programs match on it
        raise ValueError("Cannot pass schema_registry along with schema.registry.url config")
    return given


class AvroProducer(Producer):
    """``Producer`` whose ``produce()`` registers the record's schemas and writes its key and value
    in the Schema Registry's Avro framing.

    ``config`` holds the producer's keys and the registry client's as ``schema.registry.*``; the
    default schemas serve records produced without ``key_schema``/``value_schema``.
    """

    def __init__(
        self,
        config: dict[str, Any],
        default_key_schema: Any = None,
        default_value_schema: Any = None,
        schema_registry: Any = None,
        **kwargs: Any,
    ) -> None:
        # same text as confluent-kafka: programs filter this warning by its text
        warnings.warn(
            "AvroProducer has been deprecated. Use AvroSerializer instead.", category=DeprecationWarning, stacklevel=2
        )
        registry_conf, kafka_conf = _split(config)
        if registry_conf.get("basic.auth.credentials.source") == "SASL_INHERIT":
            registry_conf["auto.register.schemas"] = config.get("auto.register.schemas", True)
        registry = _registry(registry_conf, schema_registry)
        super().__init__(kafka_conf, **kwargs)
        self._serializer = MessageSerializer(registry)
        self._key_schema = default_key_schema
        self._value_schema = default_value_schema

    def produce(self, **kwargs: Any) -> None:  # type: ignore[override]
        """``produce(topic=..., value=..., key=..., value_schema=..., key_schema=..., ...)``, every
        argument by name; the others as ``Producer.produce`` takes them. A key or value without a
        schema raises `KeySerializerError`/`ValueSerializerError`."""
        key_schema = kwargs.pop("key_schema", self._key_schema)
        value_schema = kwargs.pop("value_schema", self._value_schema)
        topic = kwargs.pop("topic", None)
        if not topic:
            raise ClientError("Topic name not specified.")
        value = kwargs.pop("value", None)
        key = kwargs.pop("key", None)
        if value is not None:
            if not value_schema:
                raise ValueSerializerError("Avro schema required for values")
            value = self._serializer.encode_record_with_schema(topic, value_schema, value)
        if key is not None:
            if not key_schema:
                raise KeySerializerError("Avro schema required for key")
            key = self._serializer.encode_record_with_schema(topic, key_schema, key, True)
        super().produce(topic, value, key, **kwargs)


class AvroConsumer(Consumer):
    """``Consumer`` whose ``poll()`` decodes Schema Registry framed Avro keys and values.

    ``config`` holds the consumer's keys and the registry client's as ``schema.registry.*``; the
    reader schemas, when given, are what keys and values are resolved into. A payload that cannot be
    decoded raises `SerializerError` naming its topic, partition and offset; the consumer has moved
    past it.
    """

    def __init__(
        self,
        config: dict[str, Any],
        schema_registry: Any = None,
        reader_key_schema: Any = None,
        reader_value_schema: Any = None,
        **kwargs: Any,
    ) -> None:
        # same text as confluent-kafka: programs filter this warning by its text
        warnings.warn(
            "AvroConsumer has been deprecated. Use AvroDeserializer instead.", category=DeprecationWarning, stacklevel=2
        )
        registry_conf, kafka_conf = _split(config)
        registry = _registry(registry_conf, schema_registry)
        super().__init__(kafka_conf, **kwargs)
        self._serializer = MessageSerializer(registry, reader_key_schema, reader_value_schema)

    def poll(self, timeout: float | None = None) -> Message | None:
        """A message with its key and value decoded (an error event as it came)."""
        message = super().poll(-1 if timeout is None else timeout)
        if message is None or message.error():
            return message
        try:
            if message.value() is not None:
                message.set_value(self._serializer.decode_message(message.value(), is_key=False))
            if message.key() is not None:
                message.set_key(self._serializer.decode_message(message.key(), is_key=True))
        except SerializerError as e:
            # same text as confluent-kafka: programs match on it
            raise SerializerError(
                f"Message deserialization failed for message at {message.topic()} [{message.partition()}] "
                f"offset {message.offset()}: {e}"
            ) from e
        return message
