"""Avro with the Schema Registry (fastavro): AvroSerializer and AvroDeserializer.

The body is fastavro's schemaless binary encoding, the bytes confluent-kafka writes for the same
schema and value. Parsed schemas are cached per schema text, so no record parses a schema; once a
(topic, key or value) has its schema id, later records go straight to fastavro writing after the
ready-made framing prefix, and a payload whose id was seen goes straight to fastavro's reader.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastavro import parse_schema, schemaless_reader, schemaless_writer

from ...serialization import (
    DeserializerBuilder,
    MessageField,
    SerializationContext,
    SerializationError,
    SerializerBuilder,
)
from ..common import avro_variant
from ..common.avro_fields import AvroSchema
from ..common.avro_fields import get_inline_tags as get_inline_tags
from ..common.avro_fields import transform as transform
from ..common.avro_fields import validate_message as validate_message
from ..common.avro_repository import _schema_loads
from ..common.avro_repository import parse_schema_with_repo as parse_schema_with_repo
from ..common.parsed_schema_cache import ParsedSchemaCache as ParsedSchemaCache
from ..common.rules import FieldTransform, FieldTransformer, RuleContext
from ..common.schema_registry_client import RegisteredSchema, RuleMode, RulePhase, Schema
from ..common.schemas import AVRO_TYPE as AVRO_TYPE
from ..common.serde import SchemaId as SchemaId
from ..common.serde import clear_original_key as clear_original_key
from ..common.serde import (
    dual_schema_id_deserializer,
    prefix_schema_id_deserializer,
    prefix_schema_id_serializer,
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)
from ..common.serde import set_original_key as set_original_key
from ..common.validation_rules import ValidationRulesExecution as ValidationRulesExecution
from ..rule_registry import RuleRegistry
from .schema_registry_client import SchemaRegistryClient
from .serde import BaseDeserializer, BaseSerializer, where
from .serde_builder import RegistrySerdeBuilder
from .serde_builder import build_serde as build_serde

__all__ = [
    "AvroDeserializer",
    "AvroDeserializerBuilder",
    "AvroEncodingError",
    "AvroSerializer",
    "AvroSerializerBuilder",
]

_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
# Strategies whose subject depends only on the topic, key or value, and the record name: the
# subject (so the schema id) of a (topic, field) never changes for one serializer.
_FIXED_STRATEGIES = (topic_subject_name_strategy, topic_record_subject_name_strategy, record_subject_name_strategy)
_KEY, _VALUE = MessageField.KEY, MessageField.VALUE

avro_variant.install()  # a record of logical type "variant" is read and written as a Variant


class _Framed(bytearray):
    """The output of one record: starts as the framing prefix, fastavro appends the body to it
    (it writes a whole record with one ``write``): no BytesIO and no concatenation per record."""

    write = bytearray.extend


def _schema_name(schema: Any) -> str | None:
    """The name a record strategy uses: a named type's full name, a primitive's type name."""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        name = schema.get("name")
        if name is None:
            return str(schema.get("type")) if schema.get("type") in _PRIMITIVES else None
        namespace = schema.get("namespace")
        return name if "." in name or not namespace else f"{namespace}.{name}"
    return None  # a union has no name


def _raw_bytes(parsed: Any) -> bool:
    """A plain "bytes" schema (no logical type): its value goes on the wire without Avro framing."""
    return parsed == "bytes" or (
        isinstance(parsed, dict) and parsed.get("type") == "bytes" and "logicalType" not in parsed
    )


def _names_at_top_level(parsed: Any) -> bool:
    """Whether a parsed schema is, or is a union with, a bare name of a named type."""
    if isinstance(parsed, str):
        return parsed not in _PRIMITIVES
    return isinstance(parsed, list) and any(isinstance(b, str) and b not in _PRIMITIVES for b in parsed)


def _field_walk(parsed: Any) -> FieldTransformer:
    def walk(ctx: RuleContext, field_transform: FieldTransform, message: Any) -> Any:
        return transform(ctx, parsed, message, field_transform)

    return walk


def _load(schema_str: str) -> Any:
    return json.loads(schema_str)


def _as_schema(schema_str: Any) -> Schema | None:
    if isinstance(schema_str, str):
        return _schema_loads(schema_str)
    if isinstance(schema_str, Schema) or schema_str is None:
        return schema_str
    # same text as confluent-kafka: its tests match on it
    raise TypeError("You must pass either schema string or schema object")


class AvroEncodingError(SerializationError, ValueError):
    """A value the schema refuses (a missing or, with ``validate.strict``, an extra field...): a
    `SerializationError`, and the ``ValueError`` confluent-kafka lets through from fastavro."""


class _Parsing:
    _registry: SchemaRegistryClient
    _parsed: ParsedSchemaCache[Any]

    def _parse(self, schema: Schema) -> Any:
        """fastavro's parsed schema, with the references (other subjects' types) resolved first."""
        key = schema.schema_str or ""
        parsed = self._parsed.get_parsed_schema(schema)
        if parsed is None:
            named: dict[str, Any] = {}
            # each referenced schema once (a schema is held under its name and its full name)
            for raw in {id(raw): raw for raw in _resolve_named_schema(schema, self._registry).values()}.values():
                parse_schema(raw, named_schemas=named)
            try:
                loaded = _load(key)
                referenced = dict(named)
                parsed = parse_schema(loaded, named_schemas=named)
                if referenced and _names_at_top_level(parsed):
                    # A union that names referenced types itself (or a bare name) has nowhere to
                    # carry their definitions: fastavro needs them written out in it. (A record
                    # inside the union carries what it uses.)
                    parsed = parse_schema(loaded, named_schemas=referenced, expand=True)
            except Exception as e:
                raise SerializationError(f"invalid Avro schema: {e}") from e
            self._parsed.set(schema, parsed)
        return parsed


def _resolve_named_schema(schema: Schema, schema_registry_client: SchemaRegistryClient) -> dict[str, AvroSchema]:
    """The schemas ``schema`` references, fetched from the registry, each after the ones it
    references, as JSON (not parsed: a type two of them reference is then defined once), by the
    reference's name and by the full name of the type it defines."""
    named: dict[str, AvroSchema] = {}
    for ref in schema.references or ():
        if ref.subject is None or ref.version is None:
            raise TypeError("Subject or version cannot be None")
        referenced = schema_registry_client.get_version(ref.subject, ref.version, True).schema
        inner = _resolve_named_schema(referenced, schema_registry_client)
        if referenced.schema_str is None:
            raise TypeError("Schema string cannot be None")
        if ref.name is None:
            raise TypeError("Name cannot be None")
        named.update(inner)
        raw = _load(referenced.schema_str)
        named[ref.name] = raw
        if isinstance(raw, dict) and "name" in raw:
            namespace, name = raw.get("namespace"), raw["name"]
            full_name = f"{namespace}.{name}" if namespace and "." not in name else name
            if full_name != ref.name:
                named[full_name] = raw
    return named


class AvroSerializer(_Parsing, BaseSerializer):
    """Objects (dicts, or anything ``to_dict(obj, ctx)`` turns into one) to framed Avro.

    Options: those of `BaseSerializer`, plus ``validate.strict`` and ``validate.strict.allow.default``
    (fastavro's strict checks: no missing or extra fields).
    """

    _schema_type = AVRO_TYPE

    def __init__(
        self,
        schema_registry_client: SchemaRegistryClient,
        schema_str: str | Schema | None = None,
        to_dict: Callable[[Any, SerializationContext | None], Any] | None = None,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client
        self._parsed = ParsedSchemaCache()
        if to_dict is not None and not callable(to_dict):
            raise ValueError("to_dict is not callable: it takes (object, SerializationContext) and returns a dict")
        self._to_dict = to_dict
        conf = dict(conf or {})
        self._strict = _flag(conf, "validate.strict")
        self._strict_allow_default = _flag(conf, "validate.strict.allow.default")
        self._serializer_conf(conf)
        self._rules_conf(rule_conf, rule_registry)
        schema = _as_schema(schema_str)
        self._schema = schema
        self._schema_name: str | None = None
        self._parsed_schema: Any = None
        if schema is not None:
            self._parsed_schema = self._parse(schema)
            self._schema_name = _schema_name(self._parsed_schema)
        # (topic, is key) -> (framing prefix, parsed schema), when nothing can change them: a fixed
        # strategy, the id in front of the payload, no "latest" schema (those the client's TTL rules).
        # The associated strategy's answers stand until it forgets one (_asked).
        self._ready: dict[tuple[str, bool], tuple[bytes, Any]] = {}
        self._can_ready = (
            (self._subject_name_func in _FIXED_STRATEGIES or self._associated is not None)
            and self._schema_id_serializer is prefix_schema_id_serializer
            and not self._use_latest_version
            and self._use_latest_with_metadata is None
            and not self._validation.enabled
        )

    def _call(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        if obj is None:
            return None
        if ctx is not None and ((field := ctx.field) is _VALUE or field is _KEY):
            ready = self._ready.get((ctx.topic, field is _KEY))
            # the steady state: one dict look-up, then fastavro
            if ready is not None and ((assoc := self._associated) is None or assoc.epoch == self._asked_epoch):
                out = _Framed(ready[0])
                self._write(out, ready[1], self._to_dict(obj, ctx) if self._to_dict is not None else obj, ctx)
                return bytes(out)
        return self._serialize(obj, ctx)

    def _write(self, out: _Framed, parsed: Any, value: Any, ctx: SerializationContext | None) -> None:
        try:
            schemaless_writer(out, parsed, value, strict=self._strict, strict_allow_default=self._strict_allow_default)  # type: ignore[arg-type]  # it only calls write()
        except ValueError as e:
            raise AvroEncodingError(f"Avro encoding failed{where(ctx)}: {e}") from e
        except (TypeError, KeyError, AttributeError) as e:
            raise SerializationError(f"Avro encoding failed{where(ctx)}: {e}") from e

    def _inline_violations(self, executor: Any, schema: Any, value: Any, fail_fast: bool) -> Any:
        return validate_message(executor, schema, value, fail_fast)

    def _serialize(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        """The general path: subject, writer schema (registering it if asked), the schema's rules
        (domain rules on the object, encoding rules on the bytes), framing."""
        if not self._asked(ctx):  # what the strategy's forgotten answers led to is forgotten too
            self._ready.clear()
        subject = self._subject(ctx, self._schema_name)
        self._note_asked(ctx)
        if subject is None:
            raise SerializationError("the subject name strategy gave no subject")
        schema_id, schema = self._writer(subject, self._schema)
        parsed = self._parse(schema)
        value = self._to_dict(obj, ctx) if self._to_dict is not None else obj
        rules = schema.rule_set is not None

        self._check_inline_rules(ValidationRulesExecution.BEFORE_DOMAIN_RULES, rules, parsed, value)
        if rules:
            value = self._rules.run(
                ctx, subject, RulePhase.DOMAIN, RuleMode.WRITE, None, schema, value, None, _field_walk(parsed)
            )
            self._check_inline_rules(ValidationRulesExecution.AFTER_DOMAIN_RULES, rules, parsed, value)
        if _raw_bytes(parsed):
            # A "bytes" schema's value is written raw, without Avro's length prefix: the framing
            # Java's KafkaAvroSerializer and confluent-kafka write and read.
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise SerializationError(
                    f"Avro encoding failed{where(ctx)}: expected bytes, not {type(value).__name__}"
                )
            body = bytes(value)
        else:
            if not rules and self._can_ready and ctx is not None and (ctx.field is _VALUE or ctx.field is _KEY):
                self._ready[(ctx.topic, ctx.field is _KEY)] = (self._frame(b"", ctx, schema_id), parsed)
            out = _Framed()
            self._write(out, parsed, value, ctx)
            body = bytes(out)
        if rules:
            body = self._rules.run(ctx, subject, RulePhase.ENCODING, RuleMode.WRITE, None, schema, body, None, None)
        return self._frame(body, ctx, schema_id)


class AvroDeserializer(_Parsing, BaseDeserializer):
    """Framed Avro to dicts (or whatever ``from_dict(dict, ctx)`` makes of them).

    With ``schema_str`` (or ``use.latest.version``) the writer's data is resolved into that reader
    schema, by Avro's schema resolution rules.
    """

    _schema_type = AVRO_TYPE

    def __init__(
        self,
        schema_registry_client: SchemaRegistryClient,
        schema_str: str | Schema | None = None,
        from_dict: Callable[[Any, SerializationContext | None], Any] | None = None,
        return_record_name: bool = False,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client
        self._parsed = ParsedSchemaCache()
        self._schema = _as_schema(schema_str)
        if from_dict is not None and not callable(from_dict):
            raise ValueError("from_dict is not callable: it takes (SerializationContext, dict) and returns the object")
        self._from_dict = from_dict
        self._return_record_name = return_record_name
        self._deserializer_conf(dict(conf or {}))
        self._rules_conf(rule_conf, rule_registry)
        self._reader_schema = self._parse(self._schema) if self._schema is not None else None
        # The 4 id bytes of a prefix-framed payload -> (writer, reader) parsed schemas, when nothing
        # else picks them: the prefix framing read, no "latest" reader schema (the client's TTL rules).
        self._ready: dict[bytes, tuple[Any, Any]] = {}
        self._can_ready = (
            self._schema_id_deserializer in (dual_schema_id_deserializer, prefix_schema_id_deserializer)
            and not self._use_latest_version
            and self._use_latest_with_metadata is None
        )

    def _call(self, data: bytes | None, ctx: SerializationContext | None) -> Any:
        if data is None:
            return None
        # bytes (its id bytes are a key), prefix-framed, no schema-id header to look for
        if type(data) is bytes and data[:1] == b"\x00" and (ctx is None or not ctx.headers):
            ready = self._ready.get(data[1:5])
            # the steady state: one dict look-up (and the associated strategy's answer held), then fastavro
            if ready is not None and (
                (assoc := self._associated) is None
                or ctx is None
                or (assoc.epoch == self._asked_epoch and (ctx.topic, ctx.field) in self._asked_topics)
            ):
                payload = io.BytesIO(data)
                payload.seek(5)
                return self._finish(self._read(payload, ready[0], ready[1], ctx), ctx)
        return self._deserialize(data, ctx)

    def _read(self, payload: io.BytesIO, writer: Any, reader: Any, ctx: SerializationContext | None) -> Any:
        try:
            return schemaless_reader(payload, writer, reader, return_record_name=self._return_record_name)
        except (EOFError, ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError, OverflowError) as e:
            raise SerializationError(f"Avro decoding failed{where(ctx)}: {e!r}") from e

    def _finish(self, obj: Any, ctx: SerializationContext | None) -> Any:
        return self._from_dict(obj, ctx) if self._from_dict is not None else obj

    def _deserialize(self, data: bytes, ctx: SerializationContext | None) -> Any:
        """The general path: the framing read, the writer's schema asked of the registry (cached),
        the rules (encoding rules on the bytes, migrations between versions, domain rules on the
        object) when the schemas have any."""
        schema_id, payload = self._unframe(data, ctx)
        writer_schema = self._writer_schema(schema_id, ctx)
        writer = self._parse(writer_schema)
        reader_schema, reader = self._schema, self._reader_schema
        uses_latest = self._use_latest_version or self._use_latest_with_metadata is not None
        needed = (
            uses_latest
            or writer_schema.rule_set is not None
            or (reader_schema is not None and reader_schema.rule_set is not None)
        )
        subject = self._reader_subject(ctx, needed, lambda: _schema_name(writer))
        latest: RegisteredSchema | None = None
        if reader is None and uses_latest and subject is not None:
            latest = self._latest(subject)
            if latest is not None:
                reader_schema, reader = latest.schema, self._parse(latest.schema)
        if writer_schema.rule_set is not None:
            body = self._rules.run(
                ctx, subject, RulePhase.ENCODING, RuleMode.READ, None, writer_schema, payload.read(), None, None, data
            )
            payload = io.BytesIO(body)
        if _raw_bytes(writer):  # written raw (see AvroSerializer): the rest of the payload
            raw = payload.read()
            if reader is None or _raw_bytes(reader):
                return self._read_rules(raw, ctx, subject, reader_schema or writer_schema, reader or writer, data)
            payload = io.BytesIO()  # resolved into another reader schema from its Avro encoding
            schemaless_writer(payload, "bytes", raw)
            payload.seek(0)
        steps = (
            self._rules.migrations(self._registry, subject, writer_schema, latest)
            if latest is not None and subject
            else []
        )
        if steps:
            obj = self._rules.migrate(ctx, subject or "", steps, self._read(payload, writer, writer, ctx))
        else:
            no_rules = writer_schema.rule_set is None and (reader_schema is None or reader_schema.rule_set is None)
            if (
                no_rules
                and self._can_ready
                and type(data) is bytes
                and data[:1] == b"\x00"
                and (ctx is None or not ctx.headers)
            ):
                self._ready[data[1:5]] = (writer, reader if reader is not None else writer)
            obj = self._read(payload, writer, reader if reader is not None else writer, ctx)
        return self._read_rules(obj, ctx, subject, reader_schema or writer_schema, reader or writer, data)

    def _read_rules(
        self, obj: Any, ctx: SerializationContext | None, subject: str | None, schema: Schema, parsed: Any, data: bytes
    ) -> Any:
        """The reader schema's domain rules on the decoded object (``data`` the payload read, for
        their actions), then ``from_dict``."""
        if schema.rule_set is not None:
            obj = self._rules.run(
                ctx, subject, RulePhase.DOMAIN, RuleMode.READ, None, schema, obj, None, _field_walk(parsed), data
            )
        return self._finish(obj, ctx)


def _flag(conf: dict[str, Any], key: str) -> bool:
    value = conf.pop(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{key} takes True or False, not {value!r}")
    return value


@dataclass(eq=False, repr=False)
class AvroSerializerBuilder(RegistrySerdeBuilder, SerializerBuilder):
    """AvroSerializer's arguments, the serde made when a client is (``key.serializer.builder`` or
    ``value.serializer.builder``); see the module `serde_builder`."""

    _init_field = "serializer_init"
    _serde_type = AvroSerializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: SchemaRegistryClient | None = None
    schema: str | Schema | None = None
    to_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    serializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    serializer_init: Callable[[AvroSerializer], None] | None = None


@dataclass(eq=False, repr=False)
class AvroDeserializerBuilder(RegistrySerdeBuilder, DeserializerBuilder):
    """AvroDeserializer's arguments, the serde made when a client is (``key.deserializer.builder`` or
    ``value.deserializer.builder``); see the module `serde_builder`."""

    _init_field = "deserializer_init"
    _serde_type = AvroDeserializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: SchemaRegistryClient | None = None
    schema: str | Schema | None = None
    from_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    return_record_name: bool = False
    deserializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    deserializer_init: Callable[[AvroDeserializer], None] | None = None
