"""Avro serializer and deserializer (``pip install kafkawire[avro]``)."""

from ._async.avro import AsyncAvroDeserializer, AsyncAvroSerializer
from ._sync.avro import AvroDeserializer, AvroSerializer

__all__ = ["AsyncAvroDeserializer", "AsyncAvroSerializer", "AvroDeserializer", "AvroSerializer"]
