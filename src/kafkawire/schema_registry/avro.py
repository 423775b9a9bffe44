"""Avro serializer and deserializer (``pip install kafkawire[avro]``)."""

from ._sync.avro import AvroDeserializer, AvroSerializer

__all__ = ["AvroDeserializer", "AvroSerializer"]
