"""The values of the registry's association API (a subject bound to a Kafka topic) and their JSON.

An association ties a resource (a topic, named within a namespace: its Kafka cluster's id) to the
subject its keys or values are written under, so clients stop deriving subject names. Its
lifecycle says whether the subject lives and dies with the topic (STRONG) or outlives it (WEAK);
a frozen association cannot change. Field names are the REST API's (camelCase).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .schemas import Schema

__all__ = [
    "Association",
    "AssociationCreateOrUpdateInfo",
    "AssociationCreateOrUpdateRequest",
    "AssociationInfo",
    "AssociationResponse",
]


def _present(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


# The resource an association request or response is about: (attribute, JSON field).
_RESOURCE_KEYS = (
    ("resource_name", "resourceName"),
    ("resource_namespace", "resourceNamespace"),
    ("resource_id", "resourceId"),
    ("resource_type", "resourceType"),
)


def _resource_dict(value: Any, associations: list[Any] | None) -> dict[str, Any]:
    d = _present({key: getattr(value, attr) for attr, key in _RESOURCE_KEYS})
    if associations is not None:
        d["associations"] = [a.to_dict() for a in associations]
    return d


def _resource_args(d: dict[str, Any]) -> dict[str, Any]:
    return {attr: d.get(key) for attr, key in _RESOURCE_KEYS}


def _schema(d: dict[str, Any]) -> Schema | None:
    raw = d.get("schema")
    return Schema.from_dict(raw) if raw else None


@dataclass(frozen=True)
class Association:
    """A subject bound to a resource, as the registry lists it."""

    subject: str | None
    guid: str | None
    resource_name: str | None
    resource_namespace: str | None
    resource_id: str | None
    resource_type: str | None
    association_type: str | None
    frozen: bool = False
    lifecycle: str | None = None

    _KEYS = (
        ("subject", "subject"),
        ("guid", "guid"),
        ("resource_name", "resourceName"),
        ("resource_namespace", "resourceNamespace"),
        ("resource_id", "resourceId"),
        ("resource_type", "resourceType"),
        ("association_type", "associationType"),
        ("lifecycle", "lifecycle"),
        ("frozen", "frozen"),
    )

    def to_dict(self) -> dict[str, Any]:
        return _present({key: getattr(self, attr) for attr, key in self._KEYS})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Association:
        values: dict[str, Any] = {attr: d.get(key) for attr, key in cls._KEYS}
        values["frozen"] = bool(values["frozen"])
        return cls(**values)


@dataclass
class AssociationCreateOrUpdateInfo:
    """One association to create: the subject, key or value, its lifecycle, and optionally the
    schema to register under the subject on the way."""

    subject: str | None = None
    association_type: str | None = None
    lifecycle: str | None = None
    frozen: bool | None = None
    schema: Schema | None = None
    normalize: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return _present(
            {
                "subject": self.subject,
                "associationType": self.association_type,
                "lifecycle": self.lifecycle,
                "frozen": self.frozen,
                "schema": None if self.schema is None else self.schema.to_dict(),
                "normalize": self.normalize,
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AssociationCreateOrUpdateInfo:
        return cls(
            d.get("subject"),
            d.get("associationType"),
            d.get("lifecycle"),
            d.get("frozen"),
            _schema(d),
            d.get("normalize"),
        )


@dataclass
class AssociationCreateOrUpdateRequest:
    """The associations to create for one resource (``POST /associations``)."""

    resource_name: str | None = None
    resource_namespace: str | None = None
    resource_id: str | None = None
    resource_type: str | None = None
    associations: list[AssociationCreateOrUpdateInfo] | None = None

    def to_dict(self) -> dict[str, Any]:
        return _resource_dict(self, self.associations)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AssociationCreateOrUpdateRequest:
        raw = d.get("associations")
        infos = [AssociationCreateOrUpdateInfo.from_dict(a) for a in raw] if raw else None
        return cls(**_resource_args(d), associations=infos)


@dataclass
class AssociationInfo:
    """One association the registry created, with the schema it registered (if it was given one)."""

    subject: str | None = None
    association_type: str | None = None
    lifecycle: str | None = None
    frozen: bool = False
    schema: Schema | None = None

    def to_dict(self) -> dict[str, Any]:
        d = _present({"subject": self.subject, "associationType": self.association_type, "lifecycle": self.lifecycle})
        d["frozen"] = self.frozen
        if self.schema is not None:
            d["schema"] = self.schema.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AssociationInfo:
        return cls(d.get("subject"), d.get("associationType"), d.get("lifecycle"), bool(d.get("frozen")), _schema(d))


@dataclass
class AssociationResponse:
    """The registry's answer to a create: the resource and the associations it now has."""

    resource_name: str | None = None
    resource_namespace: str | None = None
    resource_id: str | None = None
    resource_type: str | None = None
    associations: list[AssociationInfo] | None = None

    def to_dict(self) -> dict[str, Any]:
        return _resource_dict(self, self.associations)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AssociationResponse:
        raw = d.get("associations")
        infos = [AssociationInfo.from_dict(a) for a in raw] if raw else None
        return cls(**_resource_args(d), associations=infos)
