"""Protobuf serializer and deserializer (``pip install kafkawire[protobuf]``)."""

from ._async.protobuf import AsyncProtobufDeserializer, AsyncProtobufSerializer
from ._sync.protobuf import (
    ProtobufDeserializer,
    ProtobufSerializer,
    _create_index_array,
    _schema_to_str,
    decimal_to_protobuf,
    protobuf_to_decimal,
    reference_subject_name_strategy,
)

__all__ = [
    "AsyncProtobufDeserializer",
    "AsyncProtobufSerializer",
    "ProtobufDeserializer",
    "ProtobufSerializer",
    "_create_index_array",
    "_schema_to_str",
    "decimal_to_protobuf",
    "protobuf_to_decimal",
    "reference_subject_name_strategy",
]
