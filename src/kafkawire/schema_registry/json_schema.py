"""JSON Schema serializer and deserializer (``pip install kafkawire[json]``)."""

from ._sync.json_schema import JSONDeserializer, JSONSerializer

__all__ = ["JSONDeserializer", "JSONSerializer"]
