"""Avro serializer and deserializer (``pip install kafkawire[avro]``)."""

from ._async.avro import (
    AsyncAvroDeserializer,
    AsyncAvroDeserializerBuilder,
    AsyncAvroSerializer,
    AsyncAvroSerializerBuilder,
)
from ._sync.avro import AvroDeserializer, AvroDeserializerBuilder, AvroSerializer, AvroSerializerBuilder

__all__ = [
    "AsyncAvroDeserializer",
    "AsyncAvroDeserializerBuilder",
    "AsyncAvroSerializer",
    "AsyncAvroSerializerBuilder",
    "AvroDeserializer",
    "AvroDeserializerBuilder",
    "AvroSerializer",
    "AvroSerializerBuilder",
]
