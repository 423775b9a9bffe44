"""Confluent's .proto files (meta, Decimal, Variant), built from their descriptors into the default
pool: each the same bytes as confluent-kafka's copy, so either library may load a file first and
both then use that one (a pool refuses a second file of the same name)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool

__all__ = ["load"]


def load(name: str, build: Callable[[], descriptor_pb2.FileDescriptorProto]) -> Any:
    """The file ``name`` from the default pool, added from ``build()`` unless there already."""
    pool = descriptor_pool.Default()
    try:
        return pool.FindFileByName(name)
    except KeyError:
        return pool.AddSerializedFile(build().SerializeToString())
