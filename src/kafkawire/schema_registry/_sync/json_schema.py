"""JSON Schema with the Schema Registry: JSONSerializer and JSONDeserializer.

Values are checked against the schema with jsonschema (the draft the schema declares), its
references (other subjects' schemas, by the name they are imported under) resolved through a
``referencing`` registry built once per schema. The body is compact UTF-8 JSON, the bytes
confluent-kafka writes (orjson when installed, else the standard library's same output).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonschema import ValidationError
from jsonschema.validators import validator_for
from referencing import Registry, Resource

from ...serialization import DeserializerBuilder, SerializationContext, SerializationError, SerializerBuilder
from ...serialization import MessageField as MessageField
from ..common.json_fields import transform as transform
from ..common.json_fields import transform_json, validate_json
from ..common.json_fields import validate_message as validate_message
from ..common.json_schema import DEFAULT_SPEC, _json_dumps, _json_loads, _retrieve_via_httpx
from ..common.parsed_schema_cache import ParsedSchemaCache as ParsedSchemaCache
from ..common.rules import FieldTransform, FieldTransformer, RuleContext
from ..common.schema_registry_client import RuleMode, RulePhase, Schema
from ..common.schemas import JSON_TYPE as JSON_TYPE
from ..common.serde import SchemaId as SchemaId
from ..common.serde import clear_original_key as clear_original_key
from ..common.serde import dual_schema_id_deserializer as dual_schema_id_deserializer
from ..common.serde import prefix_schema_id_serializer as prefix_schema_id_serializer
from ..common.serde import set_original_key as set_original_key
from ..common.validation_rules import ValidationRulesExecution as ValidationRulesExecution
from ..rule_registry import RuleRegistry
from .schema_registry_client import SchemaRegistryClient
from .serde import BaseDeserializer, BaseSerializer, _bool, where
from .serde_builder import RegistrySerdeBuilder
from .serde_builder import build_serde as build_serde

__all__ = ["JSONDeserializer", "JSONDeserializerBuilder", "JSONSerializer", "JSONSerializerBuilder"]


def _as_schema(schema_str: Any, what: str) -> Schema | None:
    if isinstance(schema_str, str):
        return Schema(schema_str, schema_type="JSON")
    if isinstance(schema_str, Schema) or schema_str is None:
        return schema_str
    # same text as confluent-kafka: its tests match on it
    raise TypeError(f"You must pass either str or Schema{what}")


def _title(schema: Schema | None) -> str | None:
    """The record name a record subject strategy uses: the schema's ``title``."""
    if schema is None or not schema.schema_str:
        return None
    parsed = json.loads(schema.schema_str)
    return parsed.get("title") if isinstance(parsed, dict) else None


def _resolve_named_schema(
    schema: Schema, schema_registry_client: SchemaRegistryClient, ref_registry: Registry[Any] | None = None
) -> Registry[Any]:
    """``ref_registry`` (by default one that fetches a web ``$ref``, as confluent-kafka's) with the
    schemas ``schema`` references, fetched from the registry, by the names they are imported under."""
    if ref_registry is None:
        ref_registry = Registry(retrieve=_retrieve_via_httpx)  # type: ignore[call-arg]
    for ref in schema.references or ():
        if ref.subject is None or ref.version is None:
            raise TypeError("Subject or version cannot be None")
        referenced = schema_registry_client.get_version(ref.subject, ref.version, True).schema
        ref_registry = _resolve_named_schema(referenced, schema_registry_client, ref_registry)
        if referenced.schema_str is None:
            raise TypeError("Schema string cannot be None")
        resource = Resource.from_contents(_json_loads(referenced.schema_str), default_specification=DEFAULT_SPEC)
        if ref.name is None:
            raise TypeError("Name cannot be None")
        ref_registry = ref_registry.with_resource(ref.name, resource)
    return ref_registry


class _Validating:
    _registry: SchemaRegistryClient
    _validators: ParsedSchemaCache[Any]

    def _validator(self, schema: Schema) -> Any:
        """jsonschema's validator for ``schema``, its references loaded from the registry once."""
        validator = self._validators.get_parsed_schema(schema)
        if validator is None:
            contents = json.loads(schema.schema_str or "")
            if schema.references and self._registry is None:
                # same text as confluent-kafka: its tests match on it
                raise ValueError(
                    'schema_registry_client must be provided if "schema_str" is a Schema instance with references'
                )
            cls = validator_for(contents)
            validator = cls(contents, registry=_resolve_named_schema(schema, self._registry))
            self._validators.set(schema, validator)
        return validator

    def _field_walk(self, schema: Schema) -> FieldTransformer:
        validator = self._validator(schema)

        def walk(ctx: RuleContext, field_transform: FieldTransform, message: Any) -> Any:
            return transform_json(ctx, validator, message, field_transform)

        return walk

    def _validate(self, schema: Schema, value: Any, ctx: SerializationContext | None) -> None:
        try:
            self._validator(schema).validate(value)
        except ValidationError as e:
            raise SerializationError(f"{e.message}{where(ctx)}") from e


class JSONSerializer(_Validating, BaseSerializer):
    """Objects (or ``to_dict(obj, ctx)`` of them) to framed JSON, validated unless ``validate`` is False."""

    _schema_type = JSON_TYPE

    def __init__(
        self,
        schema_str: str | Schema | None,
        schema_registry_client: SchemaRegistryClient,
        to_dict: Callable[[Any, SerializationContext | None], Any] | None = None,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
        json_encode: Callable[[Any], str | bytes] | None = None,
    ) -> None:
        self._registry = schema_registry_client
        self._validators = ParsedSchemaCache()
        if to_dict is not None and not callable(to_dict):
            raise ValueError("to_dict is not callable: it takes (object, SerializationContext) and returns a dict")
        self._to_dict = to_dict
        self._json_encode = json_encode or _json_dumps
        conf = dict(conf or {})
        self._validate_values = _bool(conf, "validate", True)
        self._serializer_conf(conf)
        self._rules_conf(rule_conf, rule_registry)
        self._schema = _as_schema(schema_str, "")
        self._schema_name = _title(self._schema)

    def _inline_violations(self, executor: Any, schema: Any, value: Any, fail_fast: bool) -> Any:
        return validate_json(executor, self._validator(schema), value, fail_fast)

    def _call(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        if obj is None:
            return None
        subject = self._subject(ctx, self._schema_name)
        if subject is None:
            raise SerializationError("the subject name strategy gave no subject")
        schema_id, schema = self._writer(subject, self._schema)
        value = self._to_dict(obj, ctx) if self._to_dict is not None else obj
        rules = schema.rule_set is not None

        self._check_inline_rules(ValidationRulesExecution.BEFORE_DOMAIN_RULES, rules, schema, value)
        if rules:
            value = self._rules.run(
                ctx, subject, RulePhase.DOMAIN, RuleMode.WRITE, None, schema, value, None, self._field_walk(schema)
            )
            self._check_inline_rules(ValidationRulesExecution.AFTER_DOMAIN_RULES, rules, schema, value)
        if self._validate_values:
            self._validate(schema, value, ctx)
        try:
            text = self._json_encode(value)
        except (TypeError, ValueError) as e:
            raise SerializationError(f"JSON encoding failed{where(ctx)}: {e}") from e
        body = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        if rules:
            body = self._rules.run(ctx, subject, RulePhase.ENCODING, RuleMode.WRITE, None, schema, body, None, None)
        return self._frame(body, ctx, schema_id)


class JSONDeserializer(_Validating, BaseDeserializer):
    """Framed JSON to objects, validated against ``schema_str`` (or, with a registry client and no
    ``schema_str``, the writer's schema); ``from_dict(dict, ctx)`` makes the application's object."""

    _schema_type = JSON_TYPE

    def __init__(
        self,
        schema_str: str | Schema | None,
        from_dict: Callable[[Any, SerializationContext | None], Any] | None = None,
        schema_registry_client: SchemaRegistryClient | None = None,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
        json_decode: Callable[[bytes], Any] | None = None,
    ) -> None:
        self._registry = schema_registry_client  # type: ignore[assignment]  # None: no registry, schema_str only
        self._validators = ParsedSchemaCache()
        self._schema = _as_schema(schema_str, "")
        if self._schema is not None and self._schema.references and schema_registry_client is None:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(
                'schema_registry_client must be provided if "schema_str" is a Schema instance with references'
            )
        if self._schema is None and schema_registry_client is None:
            raise ValueError(
                "without schema_str the writer's schema comes from the registry: pass schema_registry_client"
            )
        if from_dict is not None and not callable(from_dict):
            raise ValueError("from_dict is not callable: it takes (dict, SerializationContext) and returns the object")
        self._from_dict = from_dict
        self._json_decode = json_decode or _json_loads
        conf = dict(conf or {})
        self._validate_values = _bool(conf, "validate", True)
        self._deserializer_conf(conf)
        self._rules_conf(rule_conf, rule_registry)

    def _call(self, data: bytes | None, ctx: SerializationContext | None) -> Any:
        if data is None:
            return None
        schema_id, payload = self._unframe(data, ctx)
        body = payload.read()
        writer = None
        if self._registry is not None and (schema_id.id is not None or schema_id.guid is not None):
            writer = self._writer_schema(schema_id, ctx)
        reader = self._schema
        uses_latest = self._use_latest_version or self._use_latest_with_metadata is not None
        has_rules = any(s is not None and s.rule_set is not None for s in (writer, reader))

        def title() -> str | None:
            named_by = writer or reader  # its title, parsed once per schema (the validator's), not per record
            parsed = self._validator(named_by).schema if named_by is not None else None
            return parsed.get("title") if isinstance(parsed, dict) else None

        subject = self._reader_subject(ctx, self._registry is not None and (uses_latest or has_rules), title)
        latest = self._latest(subject) if reader is None and uses_latest and subject is not None else None
        if latest is not None:
            reader = latest.schema
        if writer is not None and writer.rule_set is not None:
            body = self._rules.run(
                ctx, subject, RulePhase.ENCODING, RuleMode.READ, None, writer, body, None, None, data
            )
        try:
            obj = self._json_decode(body)
        except (ValueError, TypeError, UnicodeDecodeError) as e:
            raise SerializationError(f"JSON decoding failed{where(ctx)}: {e}") from e
        if latest is not None and writer is not None and subject is not None:
            steps = self._rules.migrations(self._registry, subject, writer, latest)
            if steps:
                obj = self._rules.migrate(ctx, subject, steps, obj)
        schema = reader or writer
        if schema is not None and schema.rule_set is not None:
            obj = self._rules.run(
                ctx, subject, RulePhase.DOMAIN, RuleMode.READ, None, schema, obj, None, self._field_walk(schema), data
            )
        if self._validate_values and schema is not None:
            self._validate(schema, obj, ctx)
        return self._from_dict(obj, ctx) if self._from_dict is not None else obj


@dataclass(eq=False, repr=False)
class JSONSerializerBuilder(RegistrySerdeBuilder, SerializerBuilder):
    """JSONSerializer's arguments, the serde made when a client is (``key.serializer.builder`` or
    ``value.serializer.builder``); see the module `serde_builder`."""

    _init_field = "serializer_init"
    _serde_type = JSONSerializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: SchemaRegistryClient | None = None
    schema: str | Schema | None = None
    to_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    serializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    json_encode: Callable[[Any], str | bytes] | None = None
    serializer_init: Callable[[JSONSerializer], None] | None = None


@dataclass(eq=False, repr=False)
class JSONDeserializerBuilder(RegistrySerdeBuilder, DeserializerBuilder):
    """JSONDeserializer's arguments, the serde made when a client is (``key.deserializer.builder`` or
    ``value.deserializer.builder``); see the module `serde_builder`."""

    _init_field = "deserializer_init"
    _serde_type = JSONDeserializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: SchemaRegistryClient | None = None
    schema: str | Schema | None = None
    from_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    deserializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    json_decode: Callable[[bytes], Any] | None = None
    deserializer_init: Callable[[JSONDeserializer], None] | None = None
