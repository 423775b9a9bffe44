"""``confluent/types/decimal.proto``: the older file name of ``confluent.type.Decimal``, a file that
publicly imports ``confluent/type/decimal.proto`` (a schema importing either gets the same type)."""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool

from ..type import decimal_pb2 as confluent_dot_type_dot_decimal__pb2
from ..type.decimal_pb2 import Decimal

__all__ = ["DESCRIPTOR", "Decimal", "confluent_dot_type_dot_decimal__pb2"]

NAME = "confluent/types/decimal.proto"


def _load() -> Any:
    pool = descriptor_pool.Default()
    try:
        return pool.FindFileByName(NAME)
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(
            name=NAME, dependency=[confluent_dot_type_dot_decimal__pb2.NAME], public_dependency=[0], syntax="proto3"
        )
        return pool.AddSerializedFile(fdp.SerializeToString())


DESCRIPTOR = _load()
