"""What a serde made of a schema (fastavro's parsed schema, a JSON Schema validator), kept per
schema so that no record parses one again; serdes are shared between threads, hence the lock."""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

from .schemas import Schema

__all__ = ["ParsedSchemaCache"]

T = TypeVar("T")


class ParsedSchemaCache(Generic[T]):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.parsed_schemas: dict[Schema, T] = {}

    def set(self, schema: Schema, parsed_schema: T) -> None:
        with self.lock:
            self.parsed_schemas[schema] = parsed_schema

    def get_parsed_schema(self, schema: Schema) -> T | None:
        with self.lock:
            return self.parsed_schemas.get(schema)

    def clear(self) -> None:
        with self.lock:
            self.parsed_schemas.clear()
