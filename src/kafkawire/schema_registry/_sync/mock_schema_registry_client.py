"""MockSchemaRegistryClient: an in-process registry for users' unit tests (``url: mock://...``).

Every client of one ``mock://`` URL shares one store for the life of the process (so a test's
producer and consumer see the same registry). Ids are global per distinct schema, versions per
subject, guids per id; deletes are soft unless permanent. A schema no subject holds any more after
a permanent delete is forgotten, and a store left empty numbers ids from 1 again, as a new
in-process registry (confluent-kafka's, one per client) would. It does not check compatibility.
Associations of subjects with topics follow mock_associations.py.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

from ..common.associations import AssociationInfo as AssociationInfo
from ..common.schema_registry_client import (
    Association,
    AssociationCreateOrUpdateRequest,
    AssociationResponse,
    RegisteredSchema,
    Schema,
    ServerConfig,
)
from ..error import SchemaRegistryError
from .mock_associations import AssociationBook
from .schema_registry_client import IN_PROCESS, SchemaRegistryClient

__all__ = ["MockSchemaRegistryClient"]


class _Store:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.ids: dict[Schema, int] = {}  # one id per distinct schema, across subjects
        self.by_id: dict[int, Schema] = {}
        self.guids: dict[int, str] = {}
        self.versions: dict[str, list[tuple[RegisteredSchema, bool]]] = {}  # subject -> (schema, deleted)
        self.config: dict[str | None, ServerConfig] = {}
        self.modes: dict[str | None, str] = {}
        self.associations = AssociationBook(self)
        self.next_id = 1

    def register(self, subject: str, schema: Schema) -> RegisteredSchema:
        with self.lock:
            entries = self.versions.setdefault(subject, [])
            for registered, deleted in entries:
                if not deleted and registered.schema == schema:
                    return registered
            schema_id = self.ids.get(schema)
            if schema_id is None:
                schema_id = self.next_id
                self.next_id += 1
                self.ids[schema] = schema_id
                self.by_id[schema_id] = schema
                self.guids[schema_id] = str(uuid.uuid4())
            version = max((r.version or 0 for r, _ in entries), default=0) + 1
            registered = RegisteredSchema(subject, version, schema_id, self.guids[schema_id], schema)
            entries.append((registered, False))
            return registered

    def forget_unheld(self) -> None:
        """After a permanent delete: drop the schemas no subject holds."""
        with self.lock:
            held = {r.schema_id for entries in self.versions.values() for r, _ in entries}
            for schema, schema_id in list(self.ids.items()):
                if schema_id not in held:
                    del self.ids[schema], self.by_id[schema_id], self.guids[schema_id]
            if not self.ids:
                self.next_id = 1

    def live(self, subject: str, deleted: bool = False) -> list[RegisteredSchema]:
        with self.lock:
            return [r for r, gone in self.versions.get(subject, []) if deleted or not gone]


_STORES: dict[str, _Store] = {}
_STORES_LOCK = threading.Lock()


def _not_found(what: str = "Schema") -> SchemaRegistryError:
    code = {"Schema": 40403, "Subject": 40401, "Version": 40402}[what]
    return SchemaRegistryError(404, code, f"{what} not found")


class MockSchemaRegistryClient(SchemaRegistryClient):
    """The registry's behaviour in memory; the REST client's caches are not used."""

    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf if not str(conf.get("url", "")).startswith("mock://") else {**conf, "url": "http://mock"})
        self._conf = dict(conf)  # config() answers the mock:// URL: rule executors find the same mock by it
        url = str(conf.get("url"))
        with _STORES_LOCK:
            self._store = _STORES.setdefault(url, _Store())

    def register_schema(self, subject_name: str, schema: Schema, normalize_schemas: bool = False) -> int:
        schema_id = self.register_schema_full_response(subject_name, schema, normalize_schemas).schema_id
        assert schema_id is not None
        return schema_id

    def register_schema_full_response(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> RegisteredSchema:
        if not isinstance(schema, Schema):
            raise TypeError(f"schema must be a Schema, not {type(schema).__name__}")
        return self._store.register(subject_name, schema)

    def get_schema(
        self,
        schema_id: int,
        subject_name: str | None = None,
        fmt: str | None = None,
        reference_format: str | None = None,
    ) -> Schema:
        schema = self._store.by_id.get(schema_id)
        if schema is None:
            raise _not_found()
        return schema

    def get_schema_by_guid(self, guid: str, fmt: str | None = None) -> Schema:
        for schema_id, g in list(self._store.guids.items()):
            if g == str(guid):
                return self._store.by_id[schema_id]
        raise _not_found()

    def lookup_schema(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False, deleted: bool = False
    ) -> RegisteredSchema:
        for registered in self._store.live(subject_name, deleted):
            if registered.schema == schema:
                return registered
        raise _not_found()

    def get_subjects(
        self,
        subject_prefix: str | None = None,
        deleted: bool = False,
        deleted_only: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[str]:
        with self._store.lock:
            names = [s for s in self._store.versions if self._store.live(s, deleted)]
        names = [s for s in names if subject_prefix is None or s.startswith(subject_prefix)]
        return names[offset:] if limit < 0 else names[offset : offset + limit]

    def delete_subject(self, subject_name: str, permanent: bool = False) -> list[int]:
        with self._store.lock:
            entries = self._store.versions.get(subject_name)
            if not entries:
                raise _not_found("Subject")
            versions = [r.version for r, gone in entries if permanent or not gone]
            if permanent:
                del self._store.versions[subject_name]
                self._store.forget_unheld()
            else:
                self._store.versions[subject_name] = [(r, True) for r, _ in entries]
        return [v for v in versions if v is not None]

    def get_latest_version(self, subject_name: str, fmt: str | None = None) -> RegisteredSchema:
        live = self._store.live(subject_name)
        if not live:
            raise _not_found("Subject")
        return live[-1]

    def get_latest_with_metadata(
        self, subject_name: str, metadata: dict[str, str], deleted: bool = False, fmt: str | None = None
    ) -> RegisteredSchema:
        for registered in reversed(self._store.live(subject_name, deleted)):
            md = registered.schema.metadata
            props = md.properties.properties if md is not None and md.properties is not None else {}
            if all(props.get(k) == v for k, v in metadata.items()):
                return registered
        raise _not_found()

    def get_version(
        self, subject_name: str, version: int | str = "latest", deleted: bool = False, fmt: str | None = None
    ) -> RegisteredSchema:
        if version in ("latest", -1):
            return self.get_latest_version(subject_name)
        for registered in self._store.live(subject_name, deleted):
            if registered.version == int(version):
                return registered
        raise _not_found("Version")

    def get_versions(
        self, subject_name: str, deleted: bool = False, deleted_only: bool = False, offset: int = 0, limit: int = -1
    ) -> list[int]:
        live = self._store.live(subject_name, deleted)
        if not live:
            raise _not_found("Subject")
        versions = [r.version for r in live if r.version is not None]
        return versions[offset:] if limit < 0 else versions[offset : offset + limit]

    def delete_version(self, subject_name: str, version: int, permanent: bool = False) -> int:
        with self._store.lock:
            entries = self._store.versions.get(subject_name, [])
            for i, (registered, gone) in enumerate(entries):
                if registered.version == version and (permanent or not gone):
                    if permanent:
                        del entries[i]
                        self._store.forget_unheld()
                    else:
                        entries[i] = (registered, True)
                    return version
        raise _not_found("Version")

    def set_config(self, subject_name: str | None = None, config: ServerConfig | None = None) -> ServerConfig:
        if config is None:
            raise ValueError("set_config needs a ServerConfig; config is None")
        with self._store.lock:
            self._store.config[subject_name] = config
        return config

    def get_config(self, subject_name: str | None = None) -> ServerConfig:
        with self._store.lock:
            config = self._store.config.get(subject_name)
        if config is None:
            if subject_name is not None:
                raise _not_found("Subject")
            return ServerConfig()
        return config

    def delete_config(self, subject_name: str | None = None) -> ServerConfig:
        with self._store.lock:
            return self._store.config.pop(subject_name, None) or ServerConfig()

    def set_compatibility(self, subject_name: str | None = None, level: str | None = None) -> dict[str, Any]:
        if level is None:
            raise ValueError("set_compatibility needs a level; level is None")
        from ..common.schema_registry_client import ConfigCompatibilityLevel

        self.set_config(subject_name, ServerConfig(compatibility=ConfigCompatibilityLevel(level.upper())))
        return {"compatibility": level.upper()}

    def get_compatibility(self, subject_name: str | None = None) -> str:
        config = self._store.config.get(subject_name) or self._store.config.get(None)
        level = config.compatibility if config is not None else None
        return str(level) if level is not None else "BACKWARD"

    def get_global_mode(self) -> str:
        return self._store.modes.get(None, "READWRITE")

    def update_global_mode(self, mode: str, force: bool = False) -> str:
        self._store.modes[None] = mode
        return mode

    def get_mode(self, subject_name: str) -> str:
        return self._store.modes.get(subject_name, self.get_global_mode())

    def update_mode(self, subject_name: str, mode: str, force: bool = False) -> str:
        self._store.modes[subject_name] = mode
        return mode

    def delete_mode(self, subject_name: str) -> str:
        self._store.modes.pop(subject_name, None)
        return self.get_global_mode()

    def get_associations_by_resource_name(
        self,
        resource_name: str,
        resource_namespace: str,
        resource_type: str | None = None,
        association_types: list[str] | None = None,
        offset: int = 0,
        limit: int = -1,
        lifecycle: str | None = None,
    ) -> list[Association]:
        return self._store.associations.by_resource_name(
            resource_name, resource_namespace, resource_type, association_types, lifecycle, offset, limit
        )

    def create_association(self, request: AssociationCreateOrUpdateRequest) -> AssociationResponse:
        return self._store.associations.create(request)

    def delete_associations(
        self,
        resource_id: str,
        resource_type: str | None = None,
        association_types: list[str] | None = None,
        cascade_lifecycle: bool = False,
    ) -> None:
        self._store.associations.delete(resource_id, resource_type, association_types, cascade_lifecycle)

    def clear(self) -> None:
        """Forgets everything this URL's registry holds."""
        with _STORES_LOCK:
            _STORES.pop(str(self._conf.get("url")), None)
            self._store = _STORES.setdefault(str(self._conf.get("url")), _Store())


IN_PROCESS["mock"] = MockSchemaRegistryClient
