"""The format helpers confluent-kafka's serdes are built of, under their names in kafkawire: the same
inputs through both clients' functions give the same answers (Avro's get_type, get_inline_tags,
transform, parse_schema_with_repo; JSON's transform and DEFAULT_SPEC; ParsedSchemaCache; the
encryption rule's AeadWrapper, its DEKs wrapped by one and unwrapped by the other)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry.common import avro as their_avro
from confluent_kafka.schema_registry.common import json_schema as their_json
from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import Kek as TheirKek
from confluent_kafka.schema_registry.rules.encryption.encrypt_executor import AeadWrapper as TheirAeadWrapper
from confluent_kafka.schema_registry.rules.encryption.localkms.local_driver import (
    LocalKmsDriver as TheirLocalKmsDriver,
)
from confluent_kafka.schema_registry.schema_registry_client import Rule as TheirRule
from confluent_kafka.schema_registry.schema_registry_client import RuleKind as TheirRuleKind
from confluent_kafka.schema_registry.schema_registry_client import RuleMode as TheirRuleMode
from confluent_kafka.schema_registry.serde import ParsedSchemaCache as TheirCache
from confluent_kafka.schema_registry.serde import RuleContext as TheirContext
from referencing import Registry, Resource
from tink import _kms_clients as tink_kms_clients

from kafkawire.schema_registry import Schema
from kafkawire.schema_registry import avro as our_avro
from kafkawire.schema_registry.common import json_schema as our_json
from kafkawire.schema_registry.common.rules import RuleContext
from kafkawire.schema_registry.common.schema_registry_client import Rule, RuleKind, RuleMode
from kafkawire.schema_registry.rules.encryption.dek_registry.dek_registry_client import Kek
from kafkawire.schema_registry.rules.encryption.encrypt_executor import AeadWrapper
from kafkawire.schema_registry.rules.encryption.localkms.local_driver import LocalKmsDriver
from kafkawire.schema_registry.serde import ParsedSchemaCache

LINE = {"type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string", "confluent:tags": ["ID"]}]}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string", "confluent:tags": ["PII", "NAME"]},
        {"name": "lines", "type": {"type": "array", "items": LINE}},
        {"name": "by_shop", "type": {"type": "map", "values": "Line"}},
        {"name": "note", "type": ["null", "string"], "default": None, "confluent:tags": ["FREE"]},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "x.Inner",
                "fields": [
                    {"name": "secret", "type": "bytes", "confluent:tags": ["PII"]},
                    {
                        "name": "deeper",
                        "type": {
                            "type": "record",
                            "name": "Deeper",
                            "namespace": "",
                            "fields": [{"name": "v", "type": "int", "confluent:tags": ["T"]}],
                        },
                    },
                ],
            },
        },
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 2}},
    ],
}


@pytest.mark.parametrize(
    "schema",
    [
        "string",
        "bytes",
        "int",
        "long",
        "float",
        "double",
        "boolean",
        "null",
        "shop.Line",
        ["null", "string"],
        {"type": "array", "items": "int"},
        {"type": "map", "values": "int"},
        {"type": "enum", "name": "E", "symbols": ["A"]},
        {"type": "fixed", "name": "F", "size": 1},
        {"type": "union"},
        {"type": "string", "logicalType": "uuid"},
        ORDER,
        {"type": {"type": "array", "items": "int"}},
        {},
    ],
)
def test_avro_get_type(schema: Any) -> None:
    assert our_avro.get_type(schema).name == their_avro.get_type(schema).name


@pytest.mark.parametrize("schema", [ORDER, LINE, [LINE, "null"], {"type": "array", "items": ORDER}, "string"])
def test_avro_get_inline_tags(schema: Any) -> None:
    ours = {k: sorted(v) for k, v in our_avro.get_inline_tags(copy.deepcopy(schema)).items()}
    assert ours == {k: sorted(v) for k, v in their_avro.get_inline_tags(copy.deepcopy(schema)).items()}
    if schema is ORDER:
        assert ours["x.Inner.secret"] == ["PII"] and ours["Deeper.v"] == ["T"]


def test_avro_parse_schema_with_repo() -> None:
    root = json.dumps({"type": "record", "name": "Top", "fields": [{"name": "line", "type": "Line"}]})
    named = {"Line": LINE}
    ours = our_avro.parse_schema_with_repo(root, named)
    assert ours == their_avro.parse_schema_with_repo(root, named)
    assert named == {"Line": LINE}  # the caller's dict is left as it was
    assert our_avro.LocalSchemaRepository({"a": 1}).load("a") == their_avro.LocalSchemaRepository({"a": 1}).load("a")
    assert our_avro.LocalSchemaRepository({}).load("b") is None


def _contexts(kind: str = "TRANSFORM", tags: tuple[str, ...] = ()) -> tuple[RuleContext, TheirContext]:
    ours = Rule("r", None, RuleKind(kind), RuleMode.WRITE, "X", set(tags), None, None, None, None, False)
    theirs = TheirRule(
        "r", None, TheirRuleKind(kind), TheirRuleMode.WRITE, "X", set(tags), None, None, None, None, False
    )
    ctx = RuleContext(None, None, None, "subject", RuleMode.WRITE, ours, 0, [ours], None, None)
    their_ctx = TheirContext(None, None, None, None, "subject", TheirRuleMode.WRITE, theirs, 0, [theirs], None, None)
    return ctx, their_ctx


def _recorder(seen: list[tuple[str, str, list[str]]]) -> Any:
    def field_transform(ctx: Any, field_ctx: Any, value: Any) -> Any:
        seen.append((field_ctx.full_name, field_ctx.field_type.name, sorted(field_ctx.tags)))
        return value.upper() if isinstance(value, str) else value

    return field_transform


ORDER_VALUE = {
    "id": 1,
    "customer": "ann",
    "lines": [{"sku": "s1"}, {"sku": "s2"}],
    "by_shop": {"oslo": {"sku": "s3"}},
    "note": "hi",
    "inner": {"secret": b"\x01", "deeper": {"v": 3}},
    "kind": "A",
    "digest": b"ab",
}


@pytest.mark.parametrize("tags", [(), ("PII",), ("ID",)])
def test_avro_transform(tags: tuple[str, ...]) -> None:
    """The walk: the same fields reached with the same types and tags, the same record out (the
    tags read from the schema by kafkawire's walk, from get_inline_tags by confluent-kafka's)."""
    from fastavro import parse_schema
    from fastavro.schema import expand_schema

    # Deeper's explicit empty namespace left out: fastavro's expand_schema, which confluent-kafka
    # walks, files it under x (the enclosing name's), where its get_inline_tags does not look
    schema = json.loads(json.dumps(ORDER).replace(', "namespace": ""', ""))
    parsed = parse_schema(copy.deepcopy(schema))
    ctx, their_ctx = _contexts(tags=tags)
    their_ctx.inline_tags = their_avro.get_inline_tags(schema)
    ours_seen: list[Any] = []
    theirs_seen: list[Any] = []
    ours = our_avro.transform(ctx, parsed, copy.deepcopy(ORDER_VALUE), _recorder(ours_seen))
    expanded = expand_schema(parse_schema(copy.deepcopy(schema)))
    theirs = their_avro.transform(their_ctx, expanded, copy.deepcopy(ORDER_VALUE), _recorder(theirs_seen))
    assert ours == theirs
    assert ours_seen == theirs_seen and ours_seen


JSON_DOC = {
    "type": "object",
    "definitions": {"line": {"type": "object", "properties": {"sku": {"type": "string", "confluent:tags": ["ID"]}}}},
    "properties": {
        "customer": {"type": "string", "confluent:tags": ["PII"]},
        "qty": {"type": "integer"},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/line"}},
        "note": {"type": ["null", "string"]},
        "pay": {
            "oneOf": [
                {"type": "object", "properties": {"card": {"type": "string"}}, "required": ["card"]},
                {"type": "object", "properties": {"iban": {"type": "string"}}, "required": ["iban"]},
            ]
        },
    },
}


@pytest.mark.parametrize("tags", [(), ("PII",)])
def test_json_transform(tags: tuple[str, ...]) -> None:
    value = {"customer": "ann", "qty": 2, "lines": [{"sku": "s1"}], "note": "n", "pay": {"iban": "no1"}}
    registry: Registry[Any] = Registry()
    resource = Resource.from_contents(JSON_DOC, default_specification=our_json.DEFAULT_SPEC)
    resolver = registry.resolver_with_root(resource)
    ctx, their_ctx = _contexts(tags=tags)
    ours_seen: list[Any] = []
    theirs_seen: list[Any] = []
    ours = our_json.transform(ctx, JSON_DOC, registry, resolver, "$", copy.deepcopy(value), _recorder(ours_seen))
    theirs = their_json.transform(
        their_ctx, JSON_DOC, registry, resolver, "$", copy.deepcopy(value), _recorder(theirs_seen)
    )
    assert ours == theirs
    assert ours_seen == theirs_seen and ours_seen
    assert our_json.DEFAULT_SPEC is their_json.DEFAULT_SPEC


def test_parsed_schema_cache() -> None:
    ours, theirs = ParsedSchemaCache[Any](), TheirCache()
    a, b = Schema('"string"', "AVRO"), TheirSchema('"string"', "AVRO")
    ours.set(a, "parsed")
    theirs.set(b, "parsed")
    assert ours.get_parsed_schema(Schema('"string"', "AVRO")) == theirs.get_parsed_schema(
        TheirSchema('"string"', "AVRO")
    )
    assert ours.get_parsed_schema(Schema('"int"', "AVRO")) is theirs.get_parsed_schema(TheirSchema('"int"', "AVRO"))
    ours.clear()
    theirs.clear()
    assert ours.get_parsed_schema(a) is theirs.get_parsed_schema(b) is None


def test_aead_wrapper_wraps_what_confluent_kafkas_unwraps(monkeypatch: pytest.MonkeyPatch) -> None:
    # confluent-kafka's KMS clients live in Tink's process-wide list, the first local one serving
    # every local-kms key with its secret (contributing/judges.md): an empty list for this test
    monkeypatch.setattr(tink_kms_clients, "_kms_clients", [])
    LocalKmsDriver.register()
    TheirLocalKmsDriver.register()
    config = {"secret": "s3cr3t"}
    kek = {"name": "k", "kmsType": "local-kms", "kmsKeyId": "key-1", "shared": False}
    ours, theirs = AeadWrapper(config, Kek.from_dict(kek)), TheirAeadWrapper(config, TheirKek.from_dict(kek))
    assert theirs.decrypt(ours.encrypt(b"dek", b""), b"") == b"dek"
    assert ours.decrypt(theirs.encrypt(b"dek", b""), b"") == b"dek"
    nowhere = {**kek, "kmsType": None}
    outcomes = []
    for wrapper in (AeadWrapper(config, Kek.from_dict(nowhere)), TheirAeadWrapper(config, TheirKek.from_dict(nowhere))):
        with pytest.raises(Exception) as raised:
            wrapper.encrypt(b"dek", b"")
        outcomes.append(type(raised.value).__name__)
    assert outcomes == ["RuleError", "RuleError"]
