"""The Schema Registry's values (schemas, references, metadata, rules, configs) and their REST JSON.

Each value is a frozen dataclass with ``to_dict()``/``from_dict()`` in the registry's JSON field
names (camelCase), so a value read from one registry can be sent to another unchanged. Lists and
dicts inside are compared but left out of the hash (they are mutable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "AVRO_TYPE",
    "JSON_TYPE",
    "PROTOBUF_TYPE",
    "ConfigCompatibilityLevel",
    "Metadata",
    "MetadataProperties",
    "MetadataTags",
    "RegisteredSchema",
    "Rule",
    "RuleKind",
    "RuleMode",
    "RuleParams",
    "RulePhase",
    "RuleSet",
    "Schema",
    "SchemaReference",
    "SchemaVersion",
    "ServerConfig",
]

# The schema types the registry knows (a Schema's schema_type; AVRO when none is given).
AVRO_TYPE, JSON_TYPE, PROTOBUF_TYPE = "AVRO", "JSON", "PROTOBUF"


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class RuleKind(str, Enum):
    TRANSFORM = "TRANSFORM"
    CONDITION = "CONDITION"

    def __str__(self) -> str:
        return str(self.value)


class RulePhase(str, Enum):
    MIGRATION = "MIGRATION"
    DOMAIN = "DOMAIN"
    ENCODING = "ENCODING"

    def __str__(self) -> str:
        return str(self.value)


class RuleMode(str, Enum):
    UPGRADE = "UPGRADE"
    DOWNGRADE = "DOWNGRADE"
    UPDOWN = "UPDOWN"
    READ = "READ"
    WRITE = "WRITE"
    WRITEREAD = "WRITEREAD"

    def __str__(self) -> str:
        return str(self.value)


class ConfigCompatibilityLevel(str, Enum):
    BACKWARD = "BACKWARD"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD = "FORWARD"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL = "FULL"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"
    NONE = "NONE"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class RuleParams:
    params: dict[str, str] = field(default_factory=dict, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RuleParams:
        return cls(dict(d))

    def __hash__(self) -> int:
        return hash(frozenset(self.params.items()))


@dataclass(frozen=True)
class Rule:
    """One data-contract rule: a condition or transform run at a phase (migration, domain, encoding)."""

    name: str | None
    doc: str | None
    kind: RuleKind | None
    mode: RuleMode | None
    type: str | None
    tags: list[str] | None = field(hash=False)
    params: RuleParams | None
    expr: str | None
    on_success: str | None
    on_failure: str | None
    disabled: bool | None

    def to_dict(self) -> dict[str, Any]:
        return _drop_none(
            {
                "name": self.name,
                "doc": self.doc,
                "kind": None if self.kind is None else str(self.kind),
                "mode": None if self.mode is None else str(self.mode),
                "type": self.type,
                "tags": self.tags,
                "params": None if self.params is None else self.params.to_dict(),
                "expr": self.expr,
                "onSuccess": self.on_success,
                "onFailure": self.on_failure,
                "disabled": self.disabled,
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rule:
        return cls(
            name=d.get("name"),
            doc=d.get("doc"),
            kind=RuleKind(d["kind"]) if d.get("kind") else None,
            mode=RuleMode(d["mode"]) if d.get("mode") else None,
            type=d.get("type"),
            tags=d.get("tags"),
            params=RuleParams.from_dict(d["params"]) if d.get("params") is not None else None,
            expr=d.get("expr"),
            on_success=d.get("onSuccess"),
            on_failure=d.get("onFailure"),
            disabled=d.get("disabled"),
        )


@dataclass(frozen=True)
class RuleSet:
    migration_rules: list[Rule] | None = field(default=None, hash=False)
    domain_rules: list[Rule] | None = field(default=None, hash=False)
    encoding_rules: list[Rule] | None = field(default=None, hash=False)
    enable_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        def rules(rs: list[Rule] | None) -> list[dict[str, Any]] | None:
            return None if rs is None else [r.to_dict() for r in rs]

        return _drop_none(
            {
                "migrationRules": rules(self.migration_rules),
                "domainRules": rules(self.domain_rules),
                "encodingRules": rules(self.encoding_rules),
                "enableAt": self.enable_at,
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RuleSet:
        def rules(key: str) -> list[Rule] | None:
            raw = d.get(key)
            return None if raw is None else [Rule.from_dict(r) for r in raw]

        return cls(rules("migrationRules"), rules("domainRules"), rules("encodingRules"), d.get("enableAt"))

    def __hash__(self) -> int:
        return hash(tuple(tuple(rs or ()) for rs in (self.migration_rules, self.domain_rules, self.encoding_rules)))


@dataclass(frozen=True)
class MetadataTags:
    tags: dict[str, list[str]] = field(default_factory=dict, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) for k, v in self.tags.items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MetadataTags:
        return cls({k: list(v) for k, v in d.items()})

    def __hash__(self) -> int:
        return hash(frozenset((k, tuple(v)) for k, v in self.tags.items()))


@dataclass(frozen=True)
class MetadataProperties:
    properties: dict[str, str] = field(default_factory=dict, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.properties)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MetadataProperties:
        return cls(dict(d))

    def __hash__(self) -> int:
        return hash(frozenset(self.properties.items()))


@dataclass(frozen=True)
class Metadata:
    tags: MetadataTags | None
    properties: MetadataProperties | None
    sensitive: list[str] | None = field(hash=False)

    def to_dict(self) -> dict[str, Any]:
        return _drop_none(
            {
                "tags": None if self.tags is None else self.tags.to_dict(),
                "properties": None if self.properties is None else self.properties.to_dict(),
                "sensitive": self.sensitive,
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Metadata:
        return cls(
            MetadataTags.from_dict(d["tags"]) if d.get("tags") is not None else None,
            MetadataProperties.from_dict(d["properties"]) if d.get("properties") is not None else None,
            d.get("sensitive"),
        )


@dataclass(frozen=True)
class SchemaVersion:
    subject: str | None
    version: int | None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SchemaVersion:
        return cls(d.get("subject"), d.get("version"))


@dataclass(frozen=True)
class SchemaReference:
    """Another subject's schema version that this schema imports, under ``name``."""

    name: str | None
    subject: str | None
    version: int | None

    def to_dict(self) -> dict[str, Any]:
        return _drop_none({"name": self.name, "subject": self.subject, "version": self.version})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SchemaReference:
        return cls(d.get("name"), d.get("subject"), d.get("version"))


@dataclass(frozen=True)
class ServerConfig:
    compatibility: ConfigCompatibilityLevel | None = None
    compatibility_level: ConfigCompatibilityLevel | None = None
    compatibility_group: str | None = None
    default_metadata: Metadata | None = None
    override_metadata: Metadata | None = None
    default_rule_set: RuleSet | None = None
    override_rule_set: RuleSet | None = None

    def to_dict(self) -> dict[str, Any]:
        def level(v: ConfigCompatibilityLevel | None) -> str | None:
            return None if v is None else str(v)

        def sub(v: Any) -> Any:
            return None if v is None else v.to_dict()

        return _drop_none(
            {
                "compatibility": level(self.compatibility),
                "compatibilityLevel": level(self.compatibility_level),
                "compatibilityGroup": self.compatibility_group,
                "defaultMetadata": sub(self.default_metadata),
                "overrideMetadata": sub(self.override_metadata),
                "defaultRuleSet": sub(self.default_rule_set),
                "overrideRuleSet": sub(self.override_rule_set),
            }
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ServerConfig:
        def level(key: str) -> ConfigCompatibilityLevel | None:
            return ConfigCompatibilityLevel(d[key]) if d.get(key) else None

        def sub(key: str, typ: Any) -> Any:
            return typ.from_dict(d[key]) if d.get(key) is not None else None

        return cls(
            compatibility=level("compatibility"),
            compatibility_level=level("compatibilityLevel"),
            compatibility_group=d.get("compatibilityGroup"),
            default_metadata=sub("defaultMetadata", Metadata),
            override_metadata=sub("overrideMetadata", Metadata),
            default_rule_set=sub("defaultRuleSet", RuleSet),
            override_rule_set=sub("overrideRuleSet", RuleSet),
        )


@dataclass(frozen=True)
class Schema:
    """A schema's text, its type (AVRO, JSON, PROTOBUF), references, metadata and rules."""

    schema_str: str | None
    schema_type: str | None = "AVRO"
    references: list[SchemaReference] | None = field(default_factory=list, hash=False)
    metadata: Metadata | None = None
    rule_set: RuleSet | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.schema_str is not None:
            d["schema"] = self.schema_str
        if self.schema_type is not None:
            d["schemaType"] = self.schema_type
        d["references"] = [r.to_dict() for r in self.references or []]
        if self.metadata is not None:
            d["metadata"] = self.metadata.to_dict()
        if self.rule_set is not None:
            d["ruleSet"] = self.rule_set.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Schema:
        return cls(
            schema_str=d.get("schema"),
            schema_type=d.get("schemaType", "AVRO"),
            references=[SchemaReference.from_dict(r) for r in d.get("references") or []],
            metadata=Metadata.from_dict(d["metadata"]) if d.get("metadata") is not None else None,
            rule_set=RuleSet.from_dict(d["ruleSet"]) if d.get("ruleSet") is not None else None,
        )


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema as the registry knows it: its id (and guid), subject and version."""

    subject: str | None
    version: int | None
    schema_id: int | None
    guid: str | None
    schema: Schema

    def to_dict(self) -> dict[str, Any]:
        d = self.schema.to_dict() if self.schema is not None else {}
        d.update(
            _drop_none({"id": self.schema_id, "guid": self.guid, "subject": self.subject, "version": self.version})
        )
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RegisteredSchema:
        return cls(
            subject=d.get("subject"),
            version=d.get("version"),
            schema_id=d.get("id"),
            guid=d.get("guid"),
            schema=Schema.from_dict(d),
        )
