"""What a SchemaRegistryClient remembers for good: answers the registry never changes.

Schemas by id (per subject asked with) and by guid, registrations by (subject, schema) and by
(subject, version); each an LRU of ``cache.capacity`` entries. Deleting a subject or version
forgets its registrations (a re-registration may get another version); ids and guids stay valid.
"""

from __future__ import annotations

import threading
from typing import Any

from cachetools import LRUCache

from ..common.schema_registry_client import RegisteredSchema, Schema

__all__ = ["SchemaCache"]


class SchemaCache:
    def __init__(self, capacity: int) -> None:
        self._lock = threading.Lock()
        self._by_id: LRUCache[tuple[str | None, int], Schema] = LRUCache(capacity)
        self._by_guid: LRUCache[str, Schema] = LRUCache(capacity)
        self._by_schema: LRUCache[tuple[str | None, Schema, bool], RegisteredSchema] = LRUCache(capacity)
        self._by_version: LRUCache[tuple[str, int], RegisteredSchema] = LRUCache(capacity)

    def schema_by_id(self, subject: str | None, schema_id: int) -> Schema | None:
        with self._lock:
            return self._by_id.get((subject, schema_id))

    def schema_by_guid(self, guid: str) -> Schema | None:
        with self._lock:
            return self._by_guid.get(guid)

    def registered(self, subject: str, schema: Schema, normalize: bool) -> RegisteredSchema | None:
        with self._lock:
            return self._by_schema.get((subject, schema, normalize))

    def version(self, subject: str, version: int) -> RegisteredSchema | None:
        with self._lock:
            return self._by_version.get((subject, version))

    def set_schema(self, subject: str | None, schema_id: int | None, guid: str | None, schema: Schema) -> None:
        with self._lock:
            if schema_id is not None:
                self._by_id[(subject, schema_id)] = schema
            if guid:
                self._by_guid[guid] = schema

    def set_registered_schema(
        self, schema: Schema, registered: RegisteredSchema, subject: str | None = None, normalize: bool = False
    ) -> None:
        """``schema`` is registered as ``registered`` under ``subject`` (default: the one it names):
        registering or looking it up again, or reading its id there, asks the registry nothing."""
        subject = registered.subject if subject is None else subject
        with self._lock:
            self._by_schema[(subject, schema, normalize)] = registered
        if registered.schema.schema_str is not None:
            self.set_schema(subject, registered.schema_id, registered.guid, registered.schema)

    def set_version(self, subject: str, version: int, registered: RegisteredSchema) -> None:
        with self._lock:
            self._by_version[(subject, version)] = registered

    def forget(self, subject: str, version: int | None = None) -> None:
        """Forgets ``subject``'s registrations (only ``version``'s, when given)."""
        with self._lock:
            caches: tuple[Any, ...] = (self._by_schema, self._by_version)
            for cache in caches:
                stale = [k for k, v in cache.items() if k[0] == subject and version in (None, v.version)]
                for key in stale:
                    del cache[key]

    def clear(self) -> None:
        with self._lock:
            for cache in (self._by_id, self._by_guid, self._by_schema, self._by_version):
                cache.clear()
