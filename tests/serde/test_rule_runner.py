"""The rule runner and the formats' field walks, with small executors of the test's own: which
rules run (phase, mode, order, disabled, overrides), what their actions do, which fields a tagged
rule reaches (nested records, arrays, maps, unions, $refs, oneOf, Protobuf messages), migrations
between versions. Schemas are registered through confluent-kafka's registry logic
(registry_front.py), and what we write is read back by confluent-kafka's deserializers, which run
no rule of ours: they see exactly what the walk changed."""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import Rule, RuleKind, RuleMode, RuleSet
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirAvroDeserializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as TheirJSONDeserializer
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafkawire.schema_registry.common.rules import FieldRuleExecutor, FieldTransform, RuleAction, RuleExecutor
from kafkawire.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from kafkawire.schema_registry.rule_registry import RuleOverride, RuleRegistry
from kafkawire.schema_registry.serde import RuleConditionError
from kafkawire.serialization import MessageField, SerializationContext, SerializationError
from tests.serde.registry_front import RegistryFront

CTX = SerializationContext("people", MessageField.VALUE)
THEIR_CTX = TheirContext("people", TheirField.VALUE)
LATEST = {"auto.register.schemas": False, "use.latest.version": True}


class Upper(FieldRuleExecutor):
    """Upper-cases the string fields it reaches on write, lower-cases them on read; records what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def type(self) -> str:
        return "UPPER"

    def new_transform(self, ctx: Any) -> FieldTransform:
        def transform(ctx: Any, field_ctx: Any, value: Any) -> Any:
            self.seen.append((field_ctx.full_name, field_ctx.type_name()))
            if not isinstance(value, str):
                return value
            return value.upper() if ctx.rule_mode == RuleMode.WRITE else value.lower()

        return FieldTransform(transform)


class NonEmpty(RuleExecutor):
    """A condition: the record's ``name`` is not empty."""

    def type(self) -> str:
        return "NONEMPTY"

    def transform(self, ctx: Any, message: Any) -> Any:
        return bool(message.get("name"))


class Reverse(RuleExecutor):
    """An encoding rule: the payload's bytes reversed (its own inverse)."""

    def type(self) -> str:
        return "REVERSE"

    def transform(self, ctx: Any, message: Any) -> Any:
        return bytes(message)[::-1]


class Rename(RuleExecutor):
    """A migration: ``rule.expr`` is "old:new"; upgrade renames old to new, downgrade back."""

    def type(self) -> str:
        return "RENAME"

    def transform(self, ctx: Any, message: Any) -> Any:
        old, new = ctx.rule.expr.split(":")
        if ctx.rule_mode == RuleMode.DOWNGRADE:
            old, new = new, old
        message = dict(message)
        message[new] = message.pop(old)
        return message


class Collect(RuleAction):
    def __init__(self) -> None:
        self.failures: list[Exception | None] = []

    def type(self) -> str:
        return "COLLECT"

    def run(self, ctx: Any, message: Any, ex: Exception | None) -> None:
        self.failures.append(ex)


def _rule(
    rule_type: str, kind: str = "TRANSFORM", mode: str = "WRITEREAD", tags: list[str] | None = None, **kw: Any
) -> Rule:
    return Rule(
        kw.get("name", rule_type.lower()),
        None,
        RuleKind(kind),
        RuleMode(mode),
        rule_type,
        tags,
        None,
        kw.get("expr"),
        kw.get("on_success"),
        kw.get("on_failure"),
        kw.get("disabled", False),
    )


def _blind() -> Any:
    """confluent-kafka's rule registry with our test rule types disabled: its deserializers then
    show the bytes as written, untouched by any rule."""
    from confluent_kafka.schema_registry.rule_registry import RuleOverride as TheirOverride
    from confluent_kafka.schema_registry.rule_registry import RuleRegistry as TheirRegistry

    registry = TheirRegistry()
    for name in ("UPPER", "NONEMPTY", "REVERSE", "RENAME"):
        registry.register_override(TheirOverride(name, None, None, True))
    return registry


def _registry(*executors: Any) -> RuleRegistry:
    registry = RuleRegistry()
    for executor in executors:
        registry.register_executor(executor)
    return registry


AVRO_PERSON = {
    "type": "record",
    "name": "Person",
    "namespace": "kw",
    "fields": [
        {"name": "name", "type": "string", "confluent:tags": ["PII"]},
        {"name": "city", "type": "string"},
        {
            "name": "address",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [
                    {"name": "street", "type": "string", "confluent:tags": ["PII"]},
                    {"name": "zip", "type": "string"},
                ],
            },
        },
        {"name": "previous", "type": {"type": "array", "items": "Address"}},
        {"name": "notes", "type": {"type": "map", "values": "string"}, "confluent:tags": ["PII"]},
        {"name": "alias", "type": ["null", "string"], "confluent:tags": ["PII"]},
        {"name": "age", "type": "int", "confluent:tags": ["PII"]},
    ],
}


def _person() -> dict[str, Any]:
    return {
        "name": "ann",
        "city": "oslo",
        "address": {"street": "main st", "zip": "n1"},
        "previous": [{"street": "old st", "zip": "n2"}],
        "notes": {"k": "quiet"},
        "alias": "a",
        "age": 3,
    }


def _register_avro(front: RegistryFront, rule_set: RuleSet, schema: dict[str, Any] = AVRO_PERSON) -> None:
    front.registry.register_schema("people-value", TheirSchema(json.dumps(schema), "AVRO", [], None, rule_set))


def test_avro_field_rule_reaches_exactly_the_tagged_fields(front: RegistryFront) -> None:
    _register_avro(front, RuleSet(None, [_rule("UPPER", tags=["PII"])]))
    upper = Upper()
    client = SchemaRegistryClient({"url": front.url})
    data = AvroSerializer(client, conf=LATEST, rule_registry=_registry(upper))(_person(), CTX)
    written = TheirAvroDeserializer(front.registry, rule_registry=_blind())(data, THEIR_CTX)
    expected = _person()
    expected.update(name="ANN", notes={"k": "QUIET"}, alias="A")
    expected["address"]["street"] = "MAIN ST"
    expected["previous"][0]["street"] = "OLD ST"
    assert written == expected
    assert ("kw.Person.age", "INT") in upper.seen and ("kw.Person.alias", "STRING") in upper.seen
    read = AvroDeserializer(client, rule_registry=_registry(Upper()))(data, CTX)
    assert read == _person()  # the read mode ran the inverse


def test_avro_metadata_tags_select_fields_too() -> None:
    """Tags given by the schema's metadata (path patterns), not inline. (confluent-kafka's
    in-process registry cannot hold metadata tags, it hashes their lists: our mock:// registry
    stores the schema, fastavro reads the body.)"""
    from fastavro import schemaless_reader

    from kafkawire.schema_registry import Metadata, MetadataTags, Schema
    from kafkawire.schema_registry import RuleSet as OurRuleSet

    untagged = {
        "type": "record",
        "name": "P",
        "fields": [{"name": "name", "type": "string"}, {"name": "city", "type": "string"}],
    }
    client = SchemaRegistryClient.new_client({"url": "mock://rule-runner-metadata"})
    client.register_schema(
        "people-value",
        Schema(
            json.dumps(untagged),
            "AVRO",
            [],
            Metadata(MetadataTags({"P.c*": ["PII"]}), None, None),
            OurRuleSet.from_dict(RuleSet(None, [_rule("UPPER", tags=["PII"])]).to_dict()),
        ),
    )
    data = AvroSerializer(client, conf=LATEST, rule_registry=_registry(Upper()))({"name": "a", "city": "b"}, CTX)
    assert schemaless_reader(io.BytesIO(data[5:]), untagged, None) == {"name": "a", "city": "B"}


def test_condition_failure_fails_the_record_unless_its_action_is_none(front: RegistryFront) -> None:
    client = SchemaRegistryClient({"url": front.url})
    _register_avro(front, RuleSet(None, [_rule("NONEMPTY", kind="CONDITION", mode="WRITE")]))
    ser = AvroSerializer(client, conf=LATEST, rule_registry=_registry(NonEmpty()))
    assert ser(_person(), CTX)
    with pytest.raises(SerializationError) as e:
        ser({**_person(), "name": ""}, CTX)
    assert isinstance(e.value.__cause__, RuleConditionError)
    _register_avro(front, RuleSet(None, [_rule("NONEMPTY", kind="CONDITION", mode="WRITE", on_failure="NONE")]))
    client.clear_caches()
    assert AvroSerializer(client, conf=LATEST, rule_registry=_registry(NonEmpty()))({**_person(), "name": ""}, CTX)


def test_registered_actions_overrides_and_disabled_rules(front: RegistryFront) -> None:
    client = SchemaRegistryClient({"url": front.url})
    _register_avro(
        front,
        RuleSet(None, [_rule("NONEMPTY", kind="CONDITION", mode="WRITE", on_success="COLLECT", on_failure="COLLECT")]),
    )
    collect = Collect()
    registry = _registry(NonEmpty())
    registry.register_action(collect)
    ser = AvroSerializer(client, conf=LATEST, rule_registry=registry)
    ser(_person(), CTX)
    ser({**_person(), "name": ""}, CTX)
    assert collect.failures[0] is None and isinstance(collect.failures[1], RuleConditionError)
    registry.register_override(RuleOverride("NONEMPTY", None, None, True))  # disabled on the client
    ser({**_person(), "name": ""}, CTX)
    assert len(collect.failures) == 2


def test_unknown_rule_type_fails_the_record(front: RegistryFront) -> None:
    _register_avro(front, RuleSet(None, [_rule("NOSUCH", mode="WRITE")]))
    ser = AvroSerializer(SchemaRegistryClient({"url": front.url}), conf=LATEST, rule_registry=RuleRegistry())
    with pytest.raises(SerializationError, match="NOSUCH"):
        ser(_person(), CTX)


def test_encoding_rules_run_on_the_bytes_and_read_undoes_write(front: RegistryFront) -> None:
    _register_avro(front, RuleSet(None, None, [_rule("REVERSE")]))
    client = SchemaRegistryClient({"url": front.url})
    data = AvroSerializer(client, conf=LATEST, rule_registry=_registry(Reverse()))(_person(), CTX)
    plain = AvroSerializer(client, conf=LATEST, rule_registry=RuleRegistry())
    with pytest.raises(SerializationError):  # no executor of ours: the record fails, never plaintext
        plain(_person(), CTX)
    assert AvroDeserializer(client, rule_registry=_registry(Reverse()))(data, CTX) == _person()


def test_migration_rules_upgrade_and_downgrade(front: RegistryFront) -> None:
    """(The rule sets carry empty lists: confluent-kafka's in-process registry finds a schema by
    comparing objects, and an empty list it parses back is not the None it stored.)"""
    from confluent_kafka.schema_registry import ServerConfig

    front.registry.set_config("people-value", ServerConfig(compatibility="NONE"))
    v1 = {"type": "record", "name": "P", "fields": [{"name": "size", "type": "int"}]}
    v2 = {"type": "record", "name": "P", "fields": [{"name": "height", "type": "int"}]}
    front.registry.register_schema("people-value", TheirSchema(json.dumps(v1), "AVRO"))
    _register_avro(front, RuleSet([_rule("RENAME", mode="UPDOWN", expr="size:height")], [], []), v2)
    client = SchemaRegistryClient({"url": front.url})
    old = AvroSerializer(client, json.dumps(v1), conf={"auto.register.schemas": False})({"size": 3}, CTX)
    reader = AvroDeserializer(client, conf={"use.latest.version": True}, rule_registry=_registry(Rename()))
    assert reader(old, CTX) == {"height": 3}
    new = AvroSerializer(client, conf=LATEST, rule_registry=_registry(Rename()))({"height": 4}, CTX)
    assert reader(new, CTX) == {"height": 4}  # written with the latest: nothing to migrate


def test_migration_rules_downgrade_to_an_older_reader() -> None:
    """A reader pinned to v1 by metadata reads v2's records through v2's rules run backwards.
    (Our mock:// registry: confluent-kafka's cannot find a schema with metadata again, see above.)"""
    from kafkawire.schema_registry import Metadata, MetadataProperties, Schema, ServerConfig
    from kafkawire.schema_registry import RuleSet as OurRuleSet

    client = SchemaRegistryClient.new_client({"url": "mock://rule-runner-downgrade"})
    client.set_config("people-value", ServerConfig(compatibility="NONE"))
    v1 = {"type": "record", "name": "P", "fields": [{"name": "size", "type": "int"}]}
    v2 = {"type": "record", "name": "P", "fields": [{"name": "height", "type": "int"}]}
    rename = OurRuleSet.from_dict(RuleSet([_rule("RENAME", mode="UPDOWN", expr="size:height")], [], []).to_dict())
    for schema, app, rules in ((v1, "1", None), (v2, "2", rename)):
        metadata = Metadata(None, MetadataProperties({"app": app}), None)
        client.register_schema("people-value", Schema(json.dumps(schema), "AVRO", [], metadata, rules))
    new = AvroSerializer(client, conf=LATEST, rule_registry=_registry(Rename()))({"height": 4}, CTX)
    old_reader = AvroDeserializer(
        client, conf={"use.latest.with.metadata": {"app": "1"}}, rule_registry=_registry(Rename())
    )
    assert old_reader(new, CTX) == {"size": 4}


JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Person",
    "type": "object",
    "definitions": {
        "Address": {
            "type": "object",
            "properties": {"street": {"type": "string", "confluent:tags": ["PII"]}, "zip": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string", "confluent:tags": ["PII"]},
        "city": {"type": "string"},
        "address": {"$ref": "#/definitions/Address"},
        "contact": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"email": {"type": "string", "confluent:tags": ["PII"]}},
                    "required": ["email"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"phone": {"type": "string"}},
                    "required": ["phone"],
                    "additionalProperties": False,
                },
            ]
        },
        "aliases": {"type": "array", "items": {"type": "string"}, "confluent:tags": ["PII"]},
        "nick": {"type": ["null", "string"], "confluent:tags": ["PII"]},
    },
}


def test_json_field_rule_follows_refs_combinators_and_arrays(front: RegistryFront) -> None:
    front.registry.register_schema(
        "people-value",
        TheirSchema(json.dumps(JSON_SCHEMA), "JSON", [], None, RuleSet(None, [_rule("UPPER", tags=["PII"])])),
    )
    client = SchemaRegistryClient({"url": front.url})
    person = {
        "name": "ann",
        "city": "oslo",
        "address": {"street": "main", "zip": "n1"},
        "contact": {"email": "a@b"},
        "aliases": ["x", "y"],
        "nick": None,
    }
    upper = Upper()
    data = JSONSerializer(None, client, conf=LATEST, rule_registry=_registry(upper))(copy.deepcopy(person), CTX)
    written = TheirJSONDeserializer(None, schema_registry_client=front.registry, rule_registry=_blind())(
        data, THEIR_CTX
    )
    assert written == {
        **person,
        "name": "ANN",
        "address": {"street": "MAIN", "zip": "n1"},
        "contact": {"email": "A@B"},
        "aliases": ["X", "Y"],
    }
    assert ("$.contact.email", "STRING") in upper.seen
    assert JSONDeserializer(None, schema_registry_client=client, rule_registry=_registry(Upper()))(data, CTX) == person


def test_protobuf_field_rule_reaches_tagged_fields(front: RegistryFront) -> None:
    from kafkawire.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from tests.serde.test_protobuf_interop import _tagged

    person = _tagged()
    client = SchemaRegistryClient({"url": front.url})
    ProtobufSerializer(person, client, conf={"use.deprecated.format": False})(person(ssn="x"), CTX)  # registers
    registered = front.registry.get_latest_version("people-value").schema
    front.registry.register_schema(
        "people-value",
        TheirSchema(registered.schema_str, "PROTOBUF", [], None, RuleSet(None, [_rule("UPPER", tags=["PII"])])),
    )
    client.clear_caches()
    ser = ProtobufSerializer(
        person, client, conf={**LATEST, "use.deprecated.format": False}, rule_registry=_registry(Upper())
    )
    data = ser(person(ssn="abc"), CTX)
    assert person.FromString(data[6:]).ssn == "ABC"
    read = ProtobufDeserializer(person, {"use.deprecated.format": False}, client, rule_registry=_registry(Upper()))(
        data, CTX
    )
    assert read.ssn == "abc"
