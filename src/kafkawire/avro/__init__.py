"""The legacy Avro producer and consumer (confluent_kafka.avro), deprecated as confluent-kafka deprecates them.

Thin wrappers over `kafkawire.schema_registry.avro.AvroSerializer`/`AvroDeserializer` (as
`SerializingProducer`/`DeserializingConsumer` use them): new code should use those directly. Schemas are
given as JSON text or parsed dicts (``load``/``loads`` here return fastavro-parsed dicts, not the
``avro`` library's objects). Needs ``kafkawire[avro]``.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from fastavro import parse_schema

from ..base.model import Message
from ..consumer.consumer import Consumer
from ..producer import Producer
from ..schema_registry import SchemaRegistryClient
from ..schema_registry.avro import AvroDeserializer, AvroSerializer
from ..serialization import MessageField, SerializationContext
from .serializer import KeySerializerError, SerializerError, ValueSerializerError

__all__ = [
    "AvroConsumer",
    "AvroProducer",
    "KeySerializerError",
    "SerializerError",
    "ValueSerializerError",
    "load",
    "loads",
]


def loads(schema_str: str) -> Any:
    """The schema ``schema_str`` parsed (checked) by fastavro."""
    return parse_schema(json.loads(schema_str))


def load(fp: str) -> Any:
    """The schema in the file ``fp``."""
    with open(fp, encoding="utf-8") as f:
        return loads(f.read())


def _text(schema: Any) -> str | None:
    if schema is None or isinstance(schema, str):
        return schema
    if isinstance(schema, (dict, list)):
        return json.dumps(
            {k: v for k, v in schema.items() if not k.startswith("__")} if isinstance(schema, dict) else schema
        )
    return str(schema)  # the avro library's Schema objects print as their JSON


def _registry(conf: dict[str, Any], schema_registry: SchemaRegistryClient | None) -> SchemaRegistryClient:
    """The registry client: given, or made from the ``schema.registry.*`` keys (taken out of ``conf``)."""
    registry_conf = {k[len("schema.registry.") :]: conf.pop(k) for k in list(conf) if k.startswith("schema.registry.")}
    if schema_registry is None:
        if "url" not in registry_conf:
            raise ValueError("Missing parameter: schema.registry.url")
        return SchemaRegistryClient.new_client(registry_conf)
    if registry_conf:
        raise ValueError("Cannot pass schema_registry along with schema.registry.* config")
    return schema_registry


class AvroProducer(Producer):
    """``Producer`` whose keys and values are Avro records framed for the Schema Registry.

    ``config`` takes ``schema.registry.url`` and other ``schema.registry.*`` keys (the registry
    client's options) besides the producer's.
    """

    def __init__(
        self,
        config: dict[str, Any],
        default_key_schema: Any = None,
        default_value_schema: Any = None,
        schema_registry: SchemaRegistryClient | None = None,
        **kwargs: Any,
    ) -> None:
        # same text as confluent-kafka: programs filter this warning by its text
        warnings.warn(
            "AvroProducer has been deprecated. Use AvroSerializer instead.", category=DeprecationWarning, stacklevel=2
        )
        conf = dict(config)
        self._registry = _registry(conf, schema_registry)
        super().__init__(conf, **kwargs)
        self._default_key_schema = _text(default_key_schema)
        self._default_value_schema = _text(default_value_schema)
        self._serializers: dict[str, AvroSerializer] = {}

    def _serialize(self, obj: Any, schema: str | None, ctx: SerializationContext, error: type[SerializerError]) -> Any:
        if obj is None:
            return None
        if schema is None:
            raise error(f"{ctx.field}: Avro schema required (none with the record, no default_{ctx.field}_schema)")
        serializer = self._serializers.get(schema)
        if serializer is None:
            serializer = self._serializers[schema] = AvroSerializer(self._registry, schema)
        try:
            return serializer(obj, ctx)
        except Exception as e:
            raise error(str(e)) from e

    def produce(self, topic: str, value: Any = None, key: Any = None, *args: Any, **kwargs: Any) -> None:
        """``produce(topic=..., value=..., key=..., value_schema=..., key_schema=..., ...)``."""
        value_schema = _text(kwargs.pop("value_schema", None)) or self._default_value_schema
        key_schema = _text(kwargs.pop("key_schema", None)) or self._default_key_schema
        headers = kwargs.get("headers")
        value = self._serialize(
            value, value_schema, SerializationContext(topic, MessageField.VALUE, headers), ValueSerializerError
        )
        key = self._serialize(
            key, key_schema, SerializationContext(topic, MessageField.KEY, headers), KeySerializerError
        )
        super().produce(topic, value, key, *args, **kwargs)


class AvroConsumer(Consumer):
    """``Consumer`` whose ``poll()`` decodes Schema Registry framed Avro keys and values.

    ``config`` takes ``schema.registry.*`` keys besides the consumer's. ``reader_key_schema`` and
    ``reader_value_schema`` resolve the writers' data into those schemas. A payload that cannot be
    decoded raises `SerializerError` naming its topic, partition and offset; the consumer has moved
    past it, so the next ``poll()`` goes on with the following record.
    """

    def __init__(
        self,
        config: dict[str, Any],
        schema_registry: SchemaRegistryClient | None = None,
        reader_key_schema: Any = None,
        reader_value_schema: Any = None,
        return_record_name: bool = False,
        **kwargs: Any,
    ) -> None:
        # same text as confluent-kafka: programs filter this warning by its text
        warnings.warn(
            "AvroConsumer has been deprecated. Use AvroDeserializer instead.", category=DeprecationWarning, stacklevel=2
        )
        conf = dict(config)
        registry = _registry(conf, schema_registry)
        named = return_record_name
        self._key_deserializer = AvroDeserializer(registry, _text(reader_key_schema), return_record_name=named)
        self._value_deserializer = AvroDeserializer(registry, _text(reader_value_schema), return_record_name=named)
        super().__init__(conf, **kwargs)

    def poll(self, timeout: float | None = None) -> Message | None:
        """A message with its Avro key and value decoded (an error event as it came)."""
        msg = super().poll(timeout)
        if msg is None or msg.error() is not None:
            return msg
        topic, headers = msg.topic() or "", msg.headers()
        try:
            if msg.value() is not None:
                ctx = SerializationContext(topic, MessageField.VALUE, headers)
                msg.set_value(self._value_deserializer(msg.value(), ctx))
            if msg.key() is not None:
                msg.set_key(self._key_deserializer(msg.key(), SerializationContext(topic, MessageField.KEY, headers)))
        except Exception as e:
            raise SerializerError(
                f"could not decode the Avro record at {topic} [{msg.partition()}] offset {msg.offset()}: {e}"
            ) from e
        return msg
