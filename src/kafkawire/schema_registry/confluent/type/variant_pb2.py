"""``confluent/type/variant.proto``: ``confluent.type.Variant``, a semi-structured value in the
Variant binary encoding (Spark's and Parquet's): its ``metadata`` (the field-name dictionary) and
its ``value``, both bytes (`variant_utils` reads and writes them)."""

from __future__ import annotations

from google.protobuf import descriptor_pb2, message_factory

from ..descriptor_files import load

__all__ = ["DESCRIPTOR", "Variant"]

NAME = "confluent/type/variant.proto"


def _file() -> descriptor_pb2.FileDescriptorProto:
    field = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name=NAME, package="confluent.type", syntax="proto3")
    variant = fdp.message_type.add(name="Variant")
    for number, name in enumerate(("metadata", "value"), start=1):
        variant.field.add(name=name, number=number, label=field.LABEL_OPTIONAL, type=field.TYPE_BYTES)
    return fdp


DESCRIPTOR = load(NAME, _file)
Variant = message_factory.GetMessageClass(DESCRIPTOR.message_types_by_name["Variant"])
