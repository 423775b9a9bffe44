"""What a SchemaRegistryClient remembers of the registry's answers, by confluent-kafka's
``_SchemaCache`` interface: schemas by id (per subject asked with) and by guid, ids by schema,
registrations by id, version and schema.

Each index is an LRU of ``capacity`` entries, where confluent-kafka's grow without bound: while
under it, every method answers as confluent-kafka's. Deleting a subject or a version forgets what
was learnt of it under that subject; guids stay valid.
"""

from __future__ import annotations

import threading
from typing import Any

from cachetools import LRUCache

from .schemas import RegisteredSchema, Schema

__all__ = ["DEFAULT_CAPACITY", "_SchemaCache"]

# confluent-kafka's cache.capacity default
DEFAULT_CAPACITY = 1000


class _SchemaCache:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.lock = threading.Lock()
        self._by_id: LRUCache[tuple[str | None, int | None], tuple[str | None, Schema]] = LRUCache(capacity)
        self._by_guid: LRUCache[str, Schema] = LRUCache(capacity)
        self._id_by_schema: LRUCache[tuple[str | None, Schema], int | None] = LRUCache(capacity)
        self._rs_by_id: LRUCache[tuple[str | None, int], RegisteredSchema] = LRUCache(capacity)
        self._rs_by_version: LRUCache[tuple[str | None, int | None], RegisteredSchema] = LRUCache(capacity)
        # keyed by normalize too: the registry may give a schema sent as it is another id than
        # the same schema normalized (confluent-kafka's index has no such key: normalize=False)
        self._rs_by_schema: LRUCache[tuple[str | None, Schema, bool], RegisteredSchema] = LRUCache(capacity)

    def _indexes(self) -> tuple[Any, ...]:
        return (self._by_id, self._id_by_schema, self._rs_by_id, self._rs_by_version, self._rs_by_schema)

    def set_schema(self, subject: str | None, schema_id: int | None, guid: str | None, schema: Schema) -> None:
        with self.lock:
            self._set_schema(subject, schema_id, guid, schema)

    def _set_schema(self, subject: str | None, schema_id: int | None, guid: str | None, schema: Schema) -> None:
        if schema_id is not None:
            self._by_id[(subject, schema_id)] = (guid, schema)
            self._id_by_schema[(subject, schema)] = schema_id
        if guid is not None:
            self._by_guid[guid] = schema

    def set_registered_schema(
        self,
        schema: Schema,
        registered_schema: RegisteredSchema,
        subject: str | None = None,
        normalize: bool = False,
    ) -> None:
        """``schema`` is registered as ``registered_schema`` under ``subject`` (default: the one
        the registration names), found or registered with ``normalize``."""
        subject = registered_schema.subject if subject is None else subject
        schema_id = registered_schema.schema_id
        with self.lock:
            self._set_schema(subject, schema_id, registered_schema.guid, schema)
            if schema_id is not None:
                self._rs_by_id[(subject, schema_id)] = registered_schema
            self._rs_by_version[(subject, registered_schema.version)] = registered_schema
            self._rs_by_schema[(subject, schema, normalize)] = registered_schema

    def get_schema_by_id(self, subject: str | None, schema_id: int) -> tuple[str | None, Schema] | None:
        """The guid and schema of ``schema_id`` as asked for under ``subject``."""
        with self.lock:
            return self._by_id.get((subject, schema_id))

    def get_schema_by_guid(self, guid: str) -> Schema | None:
        with self.lock:
            return self._by_guid.get(guid)

    def get_id_by_schema(self, subject: str | None, schema: Schema) -> int | None:
        with self.lock:
            return self._id_by_schema.get((subject, schema))

    def get_registered_by_subject_schema(
        self, subject: str | None, schema: Schema, normalize: bool = False
    ) -> RegisteredSchema | None:
        with self.lock:
            return self._rs_by_schema.get((subject, schema, normalize))

    def get_registered_by_subject_id(self, subject: str | None, schema_id: int) -> RegisteredSchema | None:
        with self.lock:
            return self._rs_by_id.get((subject, schema_id))

    def get_registered_by_subject_version(self, subject: str | None, version: int) -> RegisteredSchema | None:
        with self.lock:
            return self._rs_by_version.get((subject, version))

    def remove_by_subject(self, subject: str | None) -> None:
        with self.lock:
            for index in self._indexes():
                for key in [k for k in index if k[0] == subject]:
                    del index[key]

    def remove_by_subject_version(self, subject: str | None, version: int) -> None:
        """Forgets the registrations of ``version`` and what its schema was learnt by."""
        with self.lock:
            registrations: tuple[Any, ...] = (self._rs_by_id, self._rs_by_schema)
            for index in registrations:
                for key in [k for k, v in index.items() if k[0] == subject and v.version == version]:
                    del index[key]
            registered = self._rs_by_version.pop((subject, version), None)
            if registered is not None:
                self._by_id.pop((subject, registered.schema_id), None)
                self._id_by_schema.pop((subject, registered.schema), None)

    def clear(self) -> None:
        with self.lock:
            for index in (self._by_guid, *self._indexes()):
                index.clear()
