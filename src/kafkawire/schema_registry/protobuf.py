"""Protobuf serializer and deserializer (``pip install kafkawire[protobuf]``)."""

from ._async.protobuf import (
    AsyncProtobufDeserializer,
    AsyncProtobufDeserializerBuilder,
    AsyncProtobufSerializer,
    AsyncProtobufSerializerBuilder,
)
from ._sync.protobuf import (
    ProtobufDeserializer,
    ProtobufDeserializerBuilder,
    ProtobufSerializer,
    ProtobufSerializerBuilder,
    _create_index_array,
    _schema_to_str,
    decimal_to_protobuf,
    protobuf_to_decimal,
    reference_subject_name_strategy,
)

__all__ = [
    "AsyncProtobufDeserializer",
    "AsyncProtobufDeserializerBuilder",
    "AsyncProtobufSerializer",
    "AsyncProtobufSerializerBuilder",
    "ProtobufDeserializer",
    "ProtobufDeserializerBuilder",
    "ProtobufSerializer",
    "ProtobufSerializerBuilder",
    "_create_index_array",
    "_schema_to_str",
    "decimal_to_protobuf",
    "protobuf_to_decimal",
    "reference_subject_name_strategy",
]
