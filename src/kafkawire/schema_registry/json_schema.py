"""JSON Schema serializer and deserializer (``pip install kafkawire[json]``)."""

from ._async.json_schema import (
    AsyncJSONDeserializer,
    AsyncJSONDeserializerBuilder,
    AsyncJSONSerializer,
    AsyncJSONSerializerBuilder,
)
from ._sync.json_schema import JSONDeserializer, JSONDeserializerBuilder, JSONSerializer, JSONSerializerBuilder
from .common.json_fields import get_inline_tags as get_inline_tags
from .common.json_fields import get_type as get_type
from .common.json_fields import transform as transform
from .common.json_fields import validate_message as validate_message

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
