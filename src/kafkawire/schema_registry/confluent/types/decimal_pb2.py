"""``confluent/types/decimal.proto``: the older file name of ``confluent.type.Decimal``, a file that
publicly imports ``confluent/type/decimal.proto`` (a schema importing either gets the same type)."""

from __future__ import annotations

from google.protobuf import descriptor_pb2

from ..descriptor_files import load
from ..type import decimal_pb2 as confluent_dot_type_dot_decimal__pb2
from ..type.decimal_pb2 import Decimal

__all__ = ["DESCRIPTOR", "Decimal", "confluent_dot_type_dot_decimal__pb2"]

NAME = "confluent/types/decimal.proto"


def _file() -> descriptor_pb2.FileDescriptorProto:
    return descriptor_pb2.FileDescriptorProto(
        name=NAME, dependency=[confluent_dot_type_dot_decimal__pb2.NAME], public_dependency=[0], syntax="proto3"
    )


DESCRIPTOR = load(NAME, _file)
