"""JSON Schema serializer and deserializer (``pip install kafkawire[json]``)."""

from ._async.json_schema import AsyncJSONDeserializer, AsyncJSONSerializer
from ._sync.json_schema import JSONDeserializer, JSONSerializer

__all__ = ["AsyncJSONDeserializer", "AsyncJSONSerializer", "JSONDeserializer", "JSONSerializer"]
