"""``confluent/type/decimal.proto``: ``confluent.type.Decimal``, an exact decimal as its unscaled
integer (big-endian two's complement, as Java's BigInteger writes it), precision and scale.

Built from its descriptor into the default pool, the same bytes as confluent-kafka 2.16's copy, so
either can be loaded first and both serve one process (the one found first is used).
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, message_factory

from ..descriptor_files import load

NAME = "confluent/type/decimal.proto"


def _file() -> descriptor_pb2.FileDescriptorProto:
    field = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name=NAME, package="confluent.type", syntax="proto3")
    decimal = fdp.message_type.add(name="Decimal")
    for number, (name, kind) in enumerate(
        (("value", field.TYPE_BYTES), ("precision", field.TYPE_UINT32), ("scale", field.TYPE_INT32)), start=1
    ):
        decimal.field.add(name=name, number=number, label=field.LABEL_OPTIONAL, type=kind)
    return fdp


DESCRIPTOR = load(NAME, _file)
Decimal = message_factory.GetMessageClass(DESCRIPTOR.message_types_by_name["Decimal"])
