"""Protobuf serializer and deserializer (``pip install kafkawire[protobuf]``)."""

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
    "ProtobufDeserializer",
    "ProtobufSerializer",
    "_create_index_array",
    "_schema_to_str",
    "decimal_to_protobuf",
    "protobuf_to_decimal",
    "reference_subject_name_strategy",
]
