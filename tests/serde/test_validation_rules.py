"""Inline validation rules (``confluent:rules`` in an Avro or JSON schema, ``confluent.Meta`` rules in
Protobuf), judged against confluent-kafka: the same schema and records through both clients'
serializers and one registry (confluent's logic, behind registry_front.py): the same bytes for a
record that passes, the same SerializationError text for one that does not, the same refusals of
a bad configuration."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("celpy")
pytest.importorskip("confluent_kafka.schema_registry.rules.cel.cel_validator")

from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirAvro
from confluent_kafka.schema_registry.json_schema import JSONSerializer as TheirJson
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as TheirProtobuf
from confluent_kafka.schema_registry.rules.cel import cel_validator as their_cel_validator
from confluent_kafka.schema_registry.rules.cel.cel_field_executor import CelFieldExecutor as TheirCelField
from confluent_kafka.schema_registry.serde import ValidationRule as TheirRule
from confluent_kafka.schema_registry.serde import ValidationRuleError as TheirRuleError
from confluent_kafka.schema_registry.serde import ValidationRuleExecutor as TheirExecutor
from confluent_kafka.schema_registry.serde import parse_validation_rules as their_parse
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry.avro import AvroSerializer
from kafkawire.schema_registry.json_schema import JSONSerializer
from kafkawire.schema_registry.protobuf import ProtobufSerializer
from kafkawire.schema_registry.rules.cel import cel_validator
from kafkawire.schema_registry.rules.cel.cel_field_executor import CelFieldExecutor
from kafkawire.schema_registry.serde import (
    ValidationRule,
    ValidationRuleError,
    ValidationRuleExecutor,
    parse_validation_rules,
)
from kafkawire.serialization import MessageField, SerializationContext
from tests.serde.registry_front import RegistryFront

CTX = SerializationContext("orders", MessageField.VALUE)
THEIR_CTX = TheirContext("orders", TheirField.VALUE)
ON = {"validation.rules.execution": "BEFORE_DOMAIN_RULES"}


def _rules(*rules: tuple[str, str] | tuple[str, str, str]) -> list[dict[str, str]]:
    return [dict(zip(("name", "expr", "doc"), rule, strict=False)) for rule in rules]


AVRO = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "confluent:rules": _rules(("total", "double(this.qty) * this.price < 1000.0", "an order costs under 1000")),
    "fields": [
        {"name": "id", "type": "long", "confluent:rules": _rules(("positive", "this > 0"))},
        {"name": "qty", "type": "int"},
        {"name": "price", "type": "double"},
        {
            "name": "customer",
            "type": "string",
            "confluent:rules": _rules(("named", "size(this) > 0 ? '' : 'the customer has no name'")),
        },
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "confluent:rules": _rules(("sku", "this.sku.startsWith('S')")),
                    "fields": [{"name": "sku", "type": "string"}],
                },
            },
        },
        {"name": "by_shop", "type": {"type": "map", "values": "Line"}},
        {"name": "gift", "type": ["null", "Line"], "default": None},
        {
            "name": "note",
            "type": ["null", "string"],
            "default": None,
            "confluent:rules": _rules(("short", "size(this) < 5")),
        },
    ],
}


def _order(**changes: Any) -> dict[str, Any]:
    order: dict[str, Any] = {
        "id": 1,
        "qty": 2,
        "price": 3.5,
        "customer": "ann",
        "lines": [{"sku": "S1"}, {"sku": "S2"}],
        "by_shop": {"oslo": {"sku": "S3"}},
        "gift": None,
        "note": None,
    }
    order.update(changes)
    return order


AVRO_RECORDS = [
    _order(),
    _order(note="ok", gift={"sku": "S9"}),
    _order(id=-1),
    _order(id=0, customer=""),
    _order(qty=1000, lines=[{"sku": "S1"}, {"sku": "X2"}, {"sku": "Y3"}]),
    _order(by_shop={"oslo": {"sku": "bad"}, "rome": {"sku": "S"}}, gift={"sku": "nope"}),
    _order(note="far too long"),
]


def _outcome(serializer: Callable[..., Any], record: Any, ctx: Any) -> tuple[str, Any]:
    try:
        return "bytes", serializer(copy.deepcopy(record), ctx)
    except Exception as e:  # the class's name and the text are compared
        return type(e).__name__, str(e)


def _same(ours: Any, theirs: Any, records: list[Any]) -> list[tuple[str, Any]]:
    outcomes = []
    for record in records:
        outcome = _outcome(ours, record, CTX)
        assert outcome == _outcome(theirs, record, THEIR_CTX), record
        outcomes.append(outcome)
    return outcomes


def _avro(front: RegistryFront, conf: dict[str, Any], schema: Any = AVRO, rule_conf: Any = None) -> tuple[Any, Any]:
    text = json.dumps(schema)
    ours = AvroSerializer(SchemaRegistryClient({"url": front.url}), text, conf=dict(conf), rule_conf=rule_conf)
    theirs = TheirAvro(front.registry, text, conf=dict(conf), rule_conf=rule_conf)
    return ours, theirs


@pytest.mark.parametrize("fail_fast", [False, True])
def test_avro_records_checked_as_confluent_kafka_checks_them(front: RegistryFront, fail_fast: bool) -> None:
    ours, theirs = _avro(front, {**ON, "validation.rules.fail.fast": fail_fast})
    outcomes = _same(ours, theirs, AVRO_RECORDS)
    assert [kind for kind, _ in outcomes] == ["bytes", "bytes"] + ["SerializationError"] * 5
    counts = ["1 violation)", "2 violations)", "3 violations)", "2 violations)", "1 violation)"]
    for (_, text), count in zip(outcomes[2:], counts, strict=True):
        assert f"({'1 violation)' if fail_fast else count}" in text, text
    assert outcomes[4][1].startswith("Validation rule failed")
    assert fail_fast or "lines[1]: sku:" in outcomes[4][1]


def test_avro_disabled_writes_what_the_rules_refuse(front: RegistryFront) -> None:
    ours, theirs = _avro(front, {})
    outcomes = _same(ours, theirs, AVRO_RECORDS)
    assert all(kind == "bytes" for kind, _ in outcomes)


def test_a_rule_that_cannot_run_is_a_violation_with_its_cause(front: RegistryFront) -> None:
    schema = {
        "type": "record",
        "name": "R",
        "confluent:rules": _rules(
            ("syntax", "this.a >"),
            ("missing", "this.nope == 1", "reads a field there is not"),
            ("number", "this.a + 1"),
            ("empty", ""),
        ),
        "fields": [{"name": "a", "type": "int"}],
    }
    ours, theirs = _avro(front, ON, schema)
    [(kind, text)] = _same(ours, theirs, [{"a": 1}])
    assert kind == "SerializationError" and "(4 violations)" in text and "caused by" in text


@pytest.mark.parametrize("execution", ["BEFORE_DOMAIN_RULES", "AFTER_DOMAIN_RULES"])
def test_before_or_after_the_domain_rules(front: RegistryFront, execution: str) -> None:
    """A CEL_FIELD transform ends every string with "!": a rule refusing one that does passes before
    it and fails after (the writer schema, with its rule set, from use.latest.version)."""
    CelFieldExecutor.register()
    TheirCelField.register()
    schema = {
        "type": "record",
        "name": "Shout",
        "fields": [{"name": "word", "type": "string", "confluent:rules": _rules(("calm", "!this.endsWith('!')"))}],
    }
    rule_set = {
        "domainRules": [
            {
                "name": "shout",
                "kind": "TRANSFORM",
                "mode": "WRITE",
                "type": "CEL_FIELD",
                "expr": "typeName == 'STRING' ; value + '!'",
            }
        ]
    }
    front.registry.register_schema(
        "orders-value", TheirSchema.from_dict({"schema": json.dumps(schema), "ruleSet": rule_set})
    )
    conf = {"validation.rules.execution": execution, "use.latest.version": True, "auto.register.schemas": False}
    ours, theirs = _avro(front, conf, schema)
    [(kind, _)] = _same(ours, theirs, [{"word": "quiet"}])
    assert kind == ("bytes" if execution == "BEFORE_DOMAIN_RULES" else "SerializationError")


class _Answers:
    """An executor of each client's kind answering what the rule's name says to."""

    @staticmethod
    def execute(rule: Any, schema: Any, message: Any) -> Any:
        return {"yes": True, "no": False, "text": "said no", "blank": "", "number": 7}[rule.name]


class OurAnswers(_Answers, ValidationRuleExecutor):
    pass


class TheirAnswers(_Answers, TheirExecutor):
    pass


@pytest.mark.parametrize("name", ["yes", "no", "text", "blank", "number"])
def test_an_executor_of_the_applications(front: RegistryFront, name: str) -> None:
    schema = {
        "type": "record",
        "name": "R",
        "confluent:rules": _rules((name, "x")),
        "fields": [{"name": "a", "type": "int"}],
    }
    text = json.dumps(schema)
    ours = AvroSerializer(
        SchemaRegistryClient({"url": front.url}), text, conf={**ON, "validation.rules.executor": OurAnswers()}
    )
    theirs = TheirAvro(front.registry, text, conf={**ON, "validation.rules.executor": TheirAnswers()})
    _same(ours, theirs, [{"a": 1}])


@pytest.mark.parametrize(
    "conf",
    [
        {"validation.rules.execution": "ALWAYS"},
        {"validation.rules.execution": "AFTER_DOMAIN_RULES", "validation.rules.fail.fast": "yes"},
        {"validation.rules.execution": "AFTER_DOMAIN_RULES", "validation.rules.executor": object()},
        {"validation.rules.execution": "DISABLED", "validation.rules.executor": object()},
    ],
)
def test_configuration_refused_alike(front: RegistryFront, conf: dict[str, Any]) -> None:
    def build(make: Callable[[], Any]) -> tuple[str, str]:
        try:
            make()
            return "built", ""
        except Exception as e:
            return type(e).__name__, str(e)

    text = json.dumps(AVRO)
    ours = build(lambda: AvroSerializer(SchemaRegistryClient({"url": front.url}), text, conf=dict(conf)))
    assert ours == build(lambda: TheirAvro(front.registry, text, conf=dict(conf)))


JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "confluent:rules": _rules(("pair", "this.qty < 10", "at most 9")),
    "definitions": {
        "line": {
            "type": "object",
            "confluent:rules": _rules(("sku", "this.sku.startsWith('S')")),
            "properties": {"sku": {"type": "string"}},
        }
    },
    "properties": {
        "qty": {"type": "integer", "confluent:rules": _rules(("positive", "this > 0"))},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/line"}},
        "note": {"type": ["null", "string"], "confluent:rules": _rules(("short", "size(this) < 5"))},
        "pay": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "card": {"type": "string", "confluent:rules": _rules(("digits", "this.matches('^[0-9]+$')"))}
                    },
                    "required": ["card"],
                },
                {"type": "object", "properties": {"iban": {"type": "string"}}, "required": ["iban"]},
            ]
        },
    },
}

JSON_RECORDS = [
    {"qty": 1, "lines": [{"sku": "S1"}], "note": None, "pay": {"card": "123"}},
    {"qty": 1, "lines": [], "pay": {"iban": "NO12"}},
    {"qty": -3, "lines": [{"sku": "S1"}, {"sku": "B"}], "note": "too long", "pay": {"card": "12a"}},
    {"qty": 12, "lines": [{"sku": "X"}]},
]


@pytest.mark.parametrize("fail_fast", [False, True])
def test_json_documents_checked_as_confluent_kafka_checks_them(front: RegistryFront, fail_fast: bool) -> None:
    text = json.dumps(JSON_SCHEMA)
    conf = {**ON, "validation.rules.fail.fast": fail_fast}
    ours = JSONSerializer(text, SchemaRegistryClient({"url": front.url}), conf=dict(conf))
    theirs = TheirJson(text, front.registry, conf=dict(conf))
    outcomes = _same(ours, theirs, JSON_RECORDS)
    assert [kind for kind, _ in outcomes] == ["bytes", "bytes", "SerializationError", "SerializationError"]
    assert "$.lines[1]: sku:" in outcomes[2][1] or fail_fast


F = descriptor_pb2.FieldDescriptorProto


def _checked_proto() -> tuple[type, type]:
    """kwtest/checked.proto: an Order with message and field rules, a repeated message field and a
    map of messages (the rules in ``confluent.Meta``)."""
    from kafkawire.schema_registry.confluent import meta_pb2

    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("kwtest/checked.proto")
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(
            name="kwtest/checked.proto", package="kwtest", syntax="proto3", dependency=["confluent/meta.proto"]
        )
        item = fdp.message_type.add(name="Item")
        item.options.Extensions[meta_pb2.message_meta].rules.add(name="sku", expr="this.sku.startsWith('S')")
        item.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        order = fdp.message_type.add(name="Checked")
        order.options.Extensions[meta_pb2.message_meta].rules.add(
            name="some", expr="size(this.items) > 0", doc="has items"
        )
        qty = order.field.add(name="qty", number=1, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
        qty.options.Extensions[meta_pb2.field_meta].rules.add(name="small", expr="this < 10u")
        note = order.field.add(
            name="note", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, proto3_optional=True, oneof_index=0
        )
        note.options.Extensions[meta_pb2.field_meta].rules.add(name="short", expr="size(this) < 5 ? '' : 'a long note'")
        order.oneof_decl.add(name="_note")
        order.field.add(name="items", number=3, type=F.TYPE_MESSAGE, type_name=".kwtest.Item", label=F.LABEL_REPEATED)
        entry = order.nested_type.add(name="ByShopEntry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, type_name=".kwtest.Item", label=F.LABEL_OPTIONAL)
        order.field.add(
            name="by_shop",
            number=4,
            type=F.TYPE_MESSAGE,
            type_name=".kwtest.Checked.ByShopEntry",
            label=F.LABEL_REPEATED,
        )
        pool.Add(fdp)
    get = message_factory.GetMessageClass
    return get(pool.FindMessageTypeByName("kwtest.Checked")), get(pool.FindMessageTypeByName("kwtest.Item"))


@pytest.mark.parametrize("fail_fast", [False, True])
def test_protobuf_messages_checked_as_confluent_kafka_checks_them(front: RegistryFront, fail_fast: bool) -> None:
    checked, item = _checked_proto()
    conf = {**ON, "validation.rules.fail.fast": fail_fast, "use.deprecated.format": False}
    ours = ProtobufSerializer(checked, SchemaRegistryClient({"url": front.url}), conf=dict(conf))
    theirs = TheirProtobuf(checked, front.registry, conf=dict(conf))
    records = [
        checked(qty=1, items=[item(sku="S1")]),
        checked(qty=3, note="hi", items=[item(sku="S1")], by_shop={"oslo": item(sku="S2")}),
        checked(qty=30, note="a long one", items=[]),
        checked(qty=1, items=[item(sku="S1"), item(sku="B2")], by_shop={"oslo": item(sku="nope")}),
    ]
    outcomes = []
    for record in records:
        outcome = _outcome(ours, record, CTX)
        assert outcome == _outcome(theirs, record, THEIR_CTX), record
        outcomes.append(outcome)
    assert [kind for kind, _ in outcomes] == ["bytes", "bytes", "SerializationError", "SerializationError"]


def test_the_rules_and_their_errors_are_values_alike() -> None:
    prop = [{"name": "a", "expr": "this > 1", "doc": "d"}, "not a rule", {"sql": "x > 1"}]
    ours, theirs = parse_validation_rules(prop), their_parse(prop)
    assert [repr(r) for r in ours] == [repr(r) for r in theirs]
    assert parse_validation_rules("nope") == their_parse("nope") == []
    rule, their_rule = ours[0], theirs[0]
    assert rule == ValidationRule("a", "d", "this > 1") and hash(rule) == hash(ValidationRule("a", "d", "this > 1"))
    cases = [("p", None, None), (None, "said", None), ("q", None, ValueError("boom"))]
    for path, message, cause in cases:
        for r, tr in ((rule, their_rule), (ours[1], theirs[1]), (ValidationRule(), TheirRule())):
            mine, their = ValidationRuleError(r, path, message, cause), TheirRuleError(tr, path, message, cause)
            assert (str(mine), repr(mine)) == (str(their), repr(their))
    assert ValidationRuleError(rule, "p", None, ValueError("x")) == ValidationRuleError(rule, "p")


@pytest.mark.parametrize("value", [True, 3, "text", [1, 2], {"k": 1.5}])
@pytest.mark.parametrize("expr", ["this == this", "this", "'' ", "size(this) > 1", "this ? 'no' : ''"])
def test_the_cel_validator_answers_as_confluent_kafkas(value: Any, expr: str) -> None:
    def answer(executor: Any, rule: Any) -> tuple[str, Any]:
        try:
            return "answer", executor.execute(rule, None, value)
        except Exception as e:
            return type(e).__name__, str(e)

    ours = answer(cel_validator.CelValidator(), ValidationRule("r", "d", expr))
    assert ours == answer(their_cel_validator.CelValidator(), TheirRule("r", "d", expr))
