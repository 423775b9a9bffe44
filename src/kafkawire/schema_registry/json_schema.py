"""JSON Schema serializer and deserializer (``pip install kafkawire[json]``)."""

from ._async.json_schema import (
    AsyncJSONDeserializer,
    AsyncJSONDeserializerBuilder,
    AsyncJSONSerializer,
    AsyncJSONSerializerBuilder,
)
from ._sync.json_schema import JSONDeserializer, JSONDeserializerBuilder, JSONSerializer, JSONSerializerBuilder

__all__ = [
    "AsyncJSONDeserializer",
    "AsyncJSONDeserializerBuilder",
    "AsyncJSONSerializer",
    "AsyncJSONSerializerBuilder",
    "JSONDeserializer",
    "JSONDeserializerBuilder",
    "JSONSerializer",
    "JSONSerializerBuilder",
]
