"""The association API of the in-process (``mock://``) registry: subjects bound to topics.

It keeps the registry's rules a test may trip over: an association is a resource's key or value
(one of each), its subject must have a schema (or be given one, which a STRONG association
registers), a STRONG association is its subject's only one, a WEAK one is never frozen, an
existing association is not changed by a create, and a frozen one is only deleted with
``cascade_lifecycle``, which also deletes the subjects of the STRONG associations it removes.
Deleting a resource without associations is not an error (as in confluent's mock).
"""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING, Protocol

from ..common.associations import (
    Association,
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    AssociationInfo,
    AssociationResponse,
)
from ..error import SchemaRegistryError

if TYPE_CHECKING:
    from ..common.schema_registry_client import RegisteredSchema, Schema

__all__ = ["AssociationBook"]

_TYPES = ("key", "value")
_LIFECYCLES = ("STRONG", "WEAK")


class SubjectStore(Protocol):
    """What the associations need of the registry's subjects (the mock client's store), named
    here so that the two modules do not import each other."""

    lock: threading.RLock
    versions: dict[str, list[tuple[RegisteredSchema, bool]]]

    def register(self, subject: str, schema: Schema) -> RegisteredSchema: ...

    def live(self, subject: str, deleted: bool = False) -> list[RegisteredSchema]: ...


def _invalid(why: str) -> SchemaRegistryError:
    return SchemaRegistryError(422, 42212, f"Invalid association: {why}")


def _conflict(why: str) -> SchemaRegistryError:
    return SchemaRegistryError(409, 40911, why)


def _matches(a: Association, resource_type: str | None, association_types: list[str] | None) -> bool:
    return (resource_type is None or a.resource_type == resource_type) and (
        not association_types or a.association_type in association_types
    )


class AssociationBook:
    """The associations of one ``mock://`` registry, beside (and under the lock of) its subjects."""

    def __init__(self, store: SubjectStore) -> None:
        self._store = store
        self._by_resource: dict[str, list[Association]] = {}

    def create(self, request: AssociationCreateOrUpdateRequest) -> AssociationResponse:
        """Checks every association of ``request`` before changing anything, then registers the
        schemas they carry and adds the new ones (re-creating an identical one changes nothing)."""
        name, namespace, resource_id = request.resource_name, request.resource_namespace, request.resource_id
        resource_type = request.resource_type or "topic"
        if not (name and namespace and resource_id):
            raise _invalid("the resource's name, namespace and id are required")
        if resource_type != "topic":
            raise _invalid(f"unsupported resource type {resource_type!r}")
        if not request.associations:
            raise _invalid("the request has no associations")
        wanted = [(self._association(info, name, namespace, resource_id), info) for info in request.associations]
        if len({a.association_type for a, _ in wanted}) != len(wanted):
            raise _invalid("one association per association type")
        with self._store.lock:
            accepted: list[Association] = []
            for association, info in wanted:
                self._check(association, info.schema, accepted)
                accepted.append(association)
            created = []
            for association, info in wanted:
                if info.schema is not None:
                    self._store.register(association.subject or "", info.schema)
                if self._find(resource_id, association.association_type) is None:
                    self._by_resource.setdefault(resource_id, []).append(association)
                created.append(
                    AssociationInfo(
                        association.subject,
                        association.association_type,
                        association.lifecycle,
                        association.frozen,
                        info.schema,
                    )
                )
        return AssociationResponse(name, namespace, resource_id, resource_type, created)

    def delete(
        self, resource_id: str, resource_type: str | None, association_types: list[str] | None, cascade: bool
    ) -> None:
        with self._store.lock:
            current = self._by_resource.get(resource_id, [])
            doomed = [a for a in current if _matches(a, resource_type, association_types)]
            if not cascade and any(a.frozen for a in doomed):
                raise SchemaRegistryError(409, 40911, "a frozen association is only deleted with cascadeLifecycle")
            kept = [a for a in current if a not in doomed]
            if kept:
                self._by_resource[resource_id] = kept
            else:
                self._by_resource.pop(resource_id, None)
            for a in doomed:
                if cascade and a.lifecycle == "STRONG" and a.subject is not None:
                    self._store.versions.pop(a.subject, None)  # the subject lived with the resource

    def by_resource_name(
        self,
        name: str,
        namespace: str,
        resource_type: str | None,
        association_types: list[str] | None,
        lifecycle: str | None,
        offset: int,
        limit: int,
    ) -> list[Association]:
        """The associations of resource ``name`` in ``namespace`` ("-": in any namespace)."""
        with self._store.lock:
            found = [
                a
                for associations in self._by_resource.values()
                for a in associations
                if a.resource_name == name
                and namespace in ("-", a.resource_namespace)
                and _matches(a, resource_type, association_types)
                and lifecycle in (None, a.lifecycle)
            ]
        return found[offset:] if limit < 0 else found[offset : offset + limit]

    @staticmethod
    def _association(info: AssociationCreateOrUpdateInfo, name: str, namespace: str, resource_id: str) -> Association:
        """``info`` with the registry's defaults (value, WEAK, not frozen), checked on its own."""
        association_type = info.association_type or "value"
        lifecycle = info.lifecycle or "WEAK"
        if association_type not in _TYPES:
            raise _invalid(f"unsupported association type {association_type!r}")
        if lifecycle not in _LIFECYCLES:
            raise _invalid(f"unsupported lifecycle {lifecycle!r}")
        if not info.subject:
            raise _invalid("the subject is required")
        if lifecycle == "WEAK" and (info.frozen or info.schema is not None):
            raise _invalid("a WEAK association can be neither frozen nor given a schema to register")
        if info.frozen and info.schema is None:
            raise _invalid("a frozen association is created with its schema")
        return Association(
            info.subject,
            str(uuid.uuid4()),
            name,
            namespace,
            resource_id,
            "topic",
            association_type,
            bool(info.frozen),
            lifecycle,
        )

    def _find(self, resource_id: str, association_type: str | None) -> Association | None:
        return next((a for a in self._by_resource.get(resource_id, []) if a.association_type == association_type), None)

    def _check(self, new: Association, schema: Schema | None, accepted: list[Association]) -> None:
        """Refuses what would change an existing association or break a subject's exclusivity."""
        subject = new.subject or ""
        live = [r.schema for r in self._store.live(subject)]
        existing = self._find(new.resource_id or "", new.association_type)
        if existing is not None:
            same = (existing.subject, existing.lifecycle, existing.frozen) == (subject, new.lifecycle, new.frozen)
            if not same or (schema is not None and schema not in live):
                raise _conflict(
                    f"the resource's {new.association_type} association already exists (a create changes none)"
                )
            return
        if schema is None and not live:
            raise SchemaRegistryError(404, 40401, f"Subject '{subject}' not found")
        if new.frozen and live:
            raise _invalid(f"a frozen association needs a new subject; {subject!r} has schemas")
        others = [a for group in self._by_resource.values() for a in group] + accepted
        for other in others:
            if other.subject == subject and "STRONG" in (other.lifecycle, new.lifecycle):
                raise _conflict(
                    f"subject {subject!r} is associated with {other.resource_name!r} already; a STRONG association is its subject's only one"
                )
