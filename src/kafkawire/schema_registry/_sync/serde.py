"""What every Schema Registry serializer and deserializer shares: options, subject and schema choice.

A serializer picks its writer schema per subject: ``use.schema.id`` (that id), else
``use.latest.with.metadata`` / ``use.latest.version`` (the registry's), else its own schema,
registered (``auto.register.schemas``, default) or looked up. The registry client caches every
answer, so a steady stream of records costs no request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...serialization import Deserializer, SerializationContext, SerializationError, Serializer
from ..common.schema_registry_client import RegisteredSchema, RuleMode, Schema
from ..common.serde import (
    SchemaId,
    dual_schema_id_deserializer,
    prefix_schema_id_serializer,
    topic_subject_name_strategy,
)
from ..error import SchemaRegistryError
from .schema_registry_client import SchemaRegistryClient

__all__ = ["BaseDeserializer", "BaseSerializer", "refuse_rules"]



def _bool(conf: dict[str, Any], key: str, default: bool) -> bool:
    value = conf.pop(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be a boolean value")
    return value


def _callable(conf: dict[str, Any], key: str, default: Callable[..., Any]) -> Callable[..., Any]:
    value: Callable[..., Any] = conf.pop(key, default)
    if not callable(value):
        raise ValueError(f"{key} must be callable")
    return value


class _Common:
    _registry: SchemaRegistryClient
    _subject_name_func: Callable[..., Any]
    _use_latest_version: bool
    _use_latest_with_metadata: dict[str, str] | None

    def _common_conf(self, conf: dict[str, Any]) -> None:
        self._use_latest_version = _bool(conf, "use.latest.version", False)
        md = conf.pop("use.latest.with.metadata", None)
        if md is not None and not isinstance(md, dict):
            raise ValueError("use.latest.with.metadata must be a dict value")
        self._use_latest_with_metadata = md
        self._subject_name_func = _callable(conf, "subject.name.strategy", topic_subject_name_strategy)
        # The upstream strategy signature (ctx, record_name); registry-aware strategies are not offered.
        self._strategy_accepts_client = False
        self._subject_name_conf = None

    def _subject(self, ctx: SerializationContext | None, record_name: str | None) -> str | None:
        return self._subject_name_func(ctx, record_name)  # type: ignore[no-any-return]

    def _latest(self, subject: str) -> RegisteredSchema | None:
        if self._use_latest_with_metadata is not None:
            return self._registry.get_latest_with_metadata(subject, self._use_latest_with_metadata)
        if self._use_latest_version:
            return self._registry.get_latest_version(subject)
        return None


class BaseSerializer(_Common, Serializer):
    """Options shared by the formats: auto.register.schemas, normalize.schemas, use.schema.id,
    use.latest.version, use.latest.with.metadata, subject.name.strategy, schema.id.serializer."""

    _schema_type = ""

    def _serializer_conf(self, conf: dict[str, Any]) -> None:
        self._auto_register = _bool(conf, "auto.register.schemas", True)
        self._normalize_schemas = _bool(conf, "normalize.schemas", False)
        use_id = conf.pop("use.schema.id", None)
        if use_id is not None and (isinstance(use_id, bool) or not isinstance(use_id, int)):
            raise ValueError("use.schema.id must be an int value")
        self._use_schema_id: int | None = use_id
        self._common_conf(conf)
        if self._use_latest_version and self._auto_register:
            raise ValueError("cannot enable both use.latest.version and auto.register.schemas")
        self._schema_id_serializer = _callable(conf, "schema.id.serializer", prefix_schema_id_serializer)
        self._known: dict[str, tuple[SchemaId, Schema]] = {}  # subject -> immutable (id, schema)
        if conf:
            raise ValueError(f"Unrecognized properties: {', '.join(conf)}")

    def _writer(self, subject: str, schema: Schema | None) -> tuple[SchemaId, Schema]:
        """The schema to write with and its id for ``subject``. Ids the registry gave for a schema
        (registered, looked up, or ``use.schema.id``) never change: remembered per subject, so a
        record costs a dict look-up; "latest" answers are asked of the client (its TTL cache)."""
        known = self._known.get(subject)
        if known is not None:
            return known
        if self._use_schema_id is not None:
            found = self._registry.get_schema(self._use_schema_id, subject)
            refuse_rules(found, WRITE_MODES)
            answer = SchemaId(self._schema_type, self._use_schema_id), found
            self._known[subject] = answer
            return answer
        registered = self._latest(subject)
        if registered is not None:
            refuse_rules(registered.schema, WRITE_MODES)
            return SchemaId(self._schema_type, registered.schema_id, registered.guid), registered.schema
        if schema is None:
            raise SerializationError("no schema to write with: give one or set use.latest.version")
        if self._auto_register:
            registered = self._registry.register_schema_full_response(subject, schema, self._normalize_schemas)
        else:
            registered = self._registry.lookup_schema(subject, schema, self._normalize_schemas)
        refuse_rules(schema, WRITE_MODES)
        refuse_rules(registered.schema, WRITE_MODES)  # the registry may add its default rule set
        answer = SchemaId(self._schema_type, registered.schema_id, registered.guid), schema
        self._known[subject] = answer
        return answer

    def _frame(self, payload: bytes, ctx: SerializationContext | None, schema_id: SchemaId) -> bytes:
        return self._schema_id_serializer(payload, ctx, schema_id)  # type: ignore[no-any-return]


class BaseDeserializer(_Common, Deserializer):
    """Options shared by the formats: use.latest.version, use.latest.with.metadata,
    subject.name.strategy, schema.id.deserializer."""

    _schema_type = ""

    def _deserializer_conf(self, conf: dict[str, Any]) -> None:
        self._common_conf(conf)
        self._schema_id_deserializer = _callable(conf, "schema.id.deserializer", dual_schema_id_deserializer)
        if conf:
            raise ValueError(f"Unrecognized properties: {', '.join(conf)}")

    def _unframe(self, data: bytes, ctx: SerializationContext | None) -> tuple[SchemaId, Any]:
        schema_id = SchemaId(self._schema_type)
        payload = self._schema_id_deserializer(data, ctx, schema_id)
        return schema_id, payload

    def _writer_schema(self, schema_id: SchemaId, ctx: SerializationContext | None) -> Schema:
        """The schema the payload names; one the registry does not know is a SerializationError."""
        try:
            if schema_id.id is not None:
                return refuse_rules(self._registry.get_schema(schema_id.id), READ_MODES)
            if schema_id.guid is not None:
                return refuse_rules(self._registry.get_schema_by_guid(str(schema_id.guid)), READ_MODES)
        except SchemaRegistryError as e:
            if e.http_status_code != 404:
                raise
            raise SerializationError(f"unknown schema {schema_id.id or schema_id.guid}{where(ctx)}: {e}") from e
        raise SerializationError(f"the payload names no schema{where(ctx)}")


WRITE_MODES = frozenset({RuleMode.WRITE, RuleMode.WRITEREAD})
READ_MODES = frozenset({RuleMode.READ, RuleMode.WRITEREAD})


def refuse_rules(schema: Schema, modes: frozenset[RuleMode]) -> Schema:
    """Data-contract rules are not executed by kafkawire yet: a schema whose enabled domain or
    encoding rules apply in ``modes`` (a CEL condition, a field encryption...) fails the record
    instead of being written or read as if the rule had passed (plaintext where ciphertext was
    required). Migration rules only run between versions, which kafkawire does not convert."""
    rule_set = schema.rule_set
    if rule_set is None:
        return schema
    for rule in (rule_set.domain_rules or []) + (rule_set.encoding_rules or []):
        if not rule.disabled and rule.mode in modes:
            raise SerializationError(
                f"schema rule {rule.name!r} ({rule.type}, {rule.mode}) cannot be applied: kafkawire does not run "
                "data-contract rules; disable the rule or use a client that runs them"
            )
    return schema


def where(ctx: SerializationContext | None) -> str:
    """``topic 'x' (value)`` for error messages."""
    return "" if ctx is None else f" (topic {ctx.topic!r}, {ctx.field})"
