"""The CEL, CEL_FIELD and JSONATA rule executors, judged against confluent-kafka's own executors.

Each case runs one rule, context and record through both clients' executors and compares the
answers (or that both fail). The few places where ours answers on purpose where confluent-kafka's
fails, or refuses what it lets through, are tested on their own below.
"""

from __future__ import annotations

import datetime
import decimal
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("celpy")
pytest.importorskip("jsonata")
pytest.importorskip("confluent_kafka.schema_registry.rules.cel.cel_executor")

from celpy import celtypes
from confluent_kafka.schema_registry import Schema as CkSchema
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor as CkCelExecutor
from confluent_kafka.schema_registry.rules.cel.cel_field_executor import (
    CelFieldExecutor as CkCelFieldExecutor,
)
from confluent_kafka.schema_registry.rules.jsonata.jsonata_executor import (
    JsonataExecutor as CkJsonataExecutor,
)
from confluent_kafka.schema_registry.schema_registry_client import Rule as CkRule
from confluent_kafka.schema_registry.schema_registry_client import RuleKind as CkRuleKind
from confluent_kafka.schema_registry.schema_registry_client import RuleMode as CkRuleMode
from confluent_kafka.schema_registry.serde import FieldContext as CkFieldContext
from confluent_kafka.schema_registry.serde import FieldType as CkFieldType
from confluent_kafka.schema_registry.serde import RuleContext as CkRuleContext
from google.protobuf import descriptor_pb2, struct_pb2, timestamp_pb2, wrappers_pb2
from google.protobuf.message import Message

from kafkawire.schema_registry.common.rules import FieldContext, FieldType, RuleContext
from kafkawire.schema_registry.common.schema_registry_client import Rule, RuleKind, RuleMode
from kafkawire.schema_registry.common.serde import RuleError
from kafkawire.schema_registry.rule_registry import RuleRegistry
from kafkawire.schema_registry.rules import expression_cache
from kafkawire.schema_registry.rules.cel.cel_executor import CelExecutor
from kafkawire.schema_registry.rules.cel.cel_field_executor import CelFieldExecutor
from kafkawire.schema_registry.rules.jsonata import jsonata_executor
from kafkawire.schema_registry.rules.jsonata.jsonata_executor import JsonataExecutor

# The peer tests' generated protobuf classes (they import confluent-kafka's meta.proto module).
_PEER_PROTO = (
    Path(__file__).resolve().parents[3] / "shared/peer/confluent-kafka-python/tests/schema_registry/data/proto"
)
if _PEER_PROTO.is_dir():
    sys.path.insert(0, str(_PEER_PROTO))
    import example_pb2  # type: ignore[import-not-found]
    import nested_pb2  # type: ignore[import-not-found]
    import test_pb2  # type: ignore[import-not-found]
else:
    example_pb2 = nested_pb2 = test_pb2 = None

needs_peer_proto = pytest.mark.skipif(example_pb2 is None, reason="the peer tests' protobuf classes are not here")

CONDITION, TRANSFORM = "CONDITION", "TRANSFORM"
_OURS = {"CEL": CelExecutor(), "CEL_FIELD": CelFieldExecutor(), "JSONATA": JsonataExecutor()}
_THEIRS = {"CEL": CkCelExecutor(), "CEL_FIELD": CkCelFieldExecutor(), "JSONATA": CkJsonataExecutor()}


def _contexts(rule_type: str, kind: str, expr: str, schema_type: str) -> tuple[RuleContext, CkRuleContext]:
    mode = "UPGRADE" if rule_type == "JSONATA" else "WRITE"
    ours = Rule("r", None, RuleKind(kind), RuleMode(mode), rule_type, None, None, expr, None, None, False)
    theirs = CkRule("r", None, CkRuleKind(kind), CkRuleMode(mode), rule_type, None, None, expr, None, None, False)
    target = CkSchema("{}", schema_type)
    ctx = RuleContext(None, None, None, "subject", RuleMode(mode), ours, 0, [ours], None, None)
    ck_ctx = CkRuleContext(None, None, None, target, "subject", CkRuleMode(mode), theirs, 0, [theirs], None, None)
    return ctx, ck_ctx


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "ok", _plain(run())
    except Exception as e:  # either client's failure: only that it failed is compared
        return "error", type(e).__name__


def _plain(value: Any) -> Any:
    """celpy's values (which confluent-kafka hands back) as plain Python ones, for comparison."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    for plain_type in (bool, int, float, str, bytes):
        if isinstance(value, plain_type):
            return plain_type(value)
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    if isinstance(value, uuid.UUID):  # ours hands a UUID back as one, confluent-kafka as its string
        return str(value)
    return value


def run_both(rule_type: str, kind: str, expr: str, message: Any, schema_type: str) -> tuple[Any, Any]:
    ctx, ck_ctx = _contexts(rule_type, kind, expr, schema_type)
    ours = _outcome(lambda: _OURS[rule_type].transform(ctx, message))
    theirs = _outcome(lambda: _THEIRS[rule_type].transform(ck_ctx, message))
    return ours, theirs


def assert_same(ours: tuple[str, Any], theirs: tuple[str, Any]) -> None:
    if theirs[0] == "error":
        assert ours[0] == "error", f"confluent-kafka fails ({theirs[1]}), ours gives {ours[1]!r}"
    else:
        assert ours == theirs


# --- records ------------------------------------------------------------------------------------

AVRO_RECORD = {
    "intField": 123,
    "longField": 2**40,
    "doubleField": 45.67,
    "floatField": 1.5,
    "stringField": "hi",
    "booleanField": True,
    "bytesField": b"foobar",
    "nullField": None,
    "arrayField": ["hello", "x"],
    "mapField": {"key": "world"},
    "recordField": {"x": 1, "s": "inner"},
    "unionField": "bye",
    "tsField": datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc),
    "uuidField": uuid.UUID("550e8400-e29b-41d4-a716-446655440000"),
}

JSON_DOC = {
    "name": "alice",
    "age": 30,
    "score": 9.5,
    "active": True,
    "tags": ["a", "b", "c"],
    "address": {"city": "Paris", "zip": "75001", "lines": ["1 rue", ""]},
    "nothing": None,
    "big": 2**53,
    "nested": [{"id": 1, "ok": True}, {"id": 2, "ok": False}],
}

AVRO_CONDITIONS = [
    "message.stringField == 'hi'",
    "message.stringField != 'hi'",
    "message.intField > 100 && message.doubleField < 50.0",
    "message.longField == 1099511627776",
    "message.intField + message.longField > 0",
    "message.floatField * 2.0 == 3.0",
    "message.booleanField",
    "!message.booleanField || message.intField == 123",
    "message.bytesField == b'foobar'",
    "size(message.bytesField) == 6",
    "message.nullField == null",
    "has(message.nullField)",
    "has(message.noSuchField)",
    "size(message.arrayField) == 2",
    "'x' in message.arrayField",
    "message.arrayField.all(s, size(s) > 0)",
    "message.arrayField.exists_one(s, s.startsWith('h'))",
    "message.arrayField.map(s, s + '!')[0] == 'hello!'",
    "message.arrayField.filter(s, s.size() > 1) == ['hello']",
    "message.mapField.key == 'world'",
    "message.mapField['key'].endsWith('ld')",
    "'key' in message.mapField",
    "message.recordField.x == 1 && message.recordField.s.contains('nn')",
    "message.unionField.matches('^b.e$')",
    "message.tsField > timestamp('2020-01-01T00:00:00Z')",
    "message.tsField.getFullYear() == 2024 && message.tsField.getMonth() == 4",
    "message.tsField - timestamp('2024-05-01T00:00:00Z') == duration('12h30m')",
    "message.uuidField == '550e8400-e29b-41d4-a716-446655440000'",
    "int(message.doubleField) == 45",
    "string(message.intField) == '123'",
    "double(message.intField) == 123.0",
    "type(message.intField) == int",
    "message.intField == 123 ? true : false",
    "size(message) == 14",
    "message.intField == 1 ; message.stringField == 'nope'",
    "message.intField == 123 ; message.stringField == 'nope'",
    "  ; message.stringField == 'hi'",
    # failures: both clients must fail, not answer
    "message.noSuchField == 1",
    "message.stringField + 1 == 2",
    "1 / 0 == 1",
    "9223372036854775807 + 1 > 0",
    "message.stringField ==",
    "message.intField == 123 ; nope(1)",
]

AVRO_TRANSFORMS = [
    "message",
    "{'stringField': message.stringField + '-suffix', 'intField': message.intField * 2}",
    "message.arrayField.map(s, s + '!')",
    "message.mapField",
    "[message.intField, message.doubleField, message.bytesField, message.nullField]",
    "message.recordField.s.size() > 3 ? 'long' : 'short'",
    "message.intField == 0 ; {'never': true}",
    "{'keys': message.mapField.map(k, k), 'shifted': message.tsField + duration('1h')}",
    "message.intField / 0",
]

JSON_CONDITIONS = [
    "message.name == 'alice' && message.age >= 18",
    "message.score > 9.0",
    "message.active == true",
    "message.tags.size() == 3 && message.tags[2] == 'c'",
    "message.address.city == 'Paris'",
    "message.address.lines.exists(l, l == '')",
    "message.nothing == null",
    "has(message.address.zip)",
    "has(message.address.country)",
    "message.big == 9007199254740992",
    "message.nested.all(n, n.id > 0)",
    "message.nested.filter(n, n.ok).size() == 1",
    "message.age == 30 ; message.name.startsWith('bob')",
    "message.age == 31 ; message.name.startsWith('bob')",
    "message.name.size() > message.age",
]

JSON_TRANSFORMS = [
    "message",
    "{'name': message.name.startsWith('a') ? 'A' : message.name, 'age': message.age + 1}",
    "message.nested.map(n, n.id * 10)",
    "message.address",
    "{'tags': message.tags + ['d']}",
]


@pytest.mark.parametrize("expr", AVRO_CONDITIONS)
def test_cel_condition_on_avro_records(expr: str) -> None:
    assert_same(*run_both("CEL", CONDITION, expr, AVRO_RECORD, "AVRO"))


@pytest.mark.parametrize("expr", AVRO_TRANSFORMS)
def test_cel_transform_of_avro_records(expr: str) -> None:
    assert_same(*run_both("CEL", TRANSFORM, expr, AVRO_RECORD, "AVRO"))


@pytest.mark.parametrize("expr", JSON_CONDITIONS)
def test_cel_condition_on_json_documents(expr: str) -> None:
    assert_same(*run_both("CEL", CONDITION, expr, JSON_DOC, "JSON"))


@pytest.mark.parametrize("expr", JSON_TRANSFORMS)
def test_cel_transform_of_json_documents(expr: str) -> None:
    assert_same(*run_both("CEL", TRANSFORM, expr, JSON_DOC, "JSON"))


def test_the_cases_compared_include_answers_and_failures() -> None:
    outcomes = [run_both("CEL", CONDITION, e, AVRO_RECORD, "AVRO")[0] for e in AVRO_CONDITIONS]
    assert {True, False} <= {value for kind, value in outcomes if kind == "ok"}
    assert sum(kind == "error" for kind, _ in outcomes) >= 6


# --- CEL_FIELD ------------------------------------------------------------------------------

# (name, type, tags) of AVRO_RECORD's fields as the Avro walker enters them.
_AVRO_FIELDS = [
    ("intField", "INT", set()),
    ("longField", "LONG", set()),
    ("doubleField", "DOUBLE", set()),
    ("floatField", "FLOAT", set()),
    ("stringField", "STRING", {"PII"}),
    ("booleanField", "BOOLEAN", set()),
    ("bytesField", "BYTES", {"PII"}),
    ("nullField", "NULL", set()),
    ("arrayField", "ARRAY", set()),
    ("mapField", "MAP", set()),
    ("recordField", "RECORD", set()),
    ("unionField", "STRING", {"PII", "OTHER"}),
    ("uuidField", "STRING", set()),
]

FIELD_RULES = [
    (TRANSFORM, "name == 'stringField' ; value + '-suffix'"),
    (TRANSFORM, "typeName == 'STRING' ; value + '-suffix'"),
    (TRANSFORM, "typeName == 'INT' || typeName == 'LONG' ; value + 1"),
    (TRANSFORM, "typeName == 'DOUBLE' ; value * 2.0"),
    (TRANSFORM, "typeName == 'BYTES' ; value + b'!'"),
    (TRANSFORM, "typeName == 'BOOLEAN' ; !value"),
    (TRANSFORM, "'PII' in tags ; typeName == 'STRING' ? 'redacted' : value"),
    (TRANSFORM, "fullName == 'test.stringField' ; value + string(message.intField)"),
    (TRANSFORM, "name == 'uuidField' ; value"),
    (TRANSFORM, "typeName == 'NULL' ; value"),
    (TRANSFORM, "value"),
    (CONDITION, "name == 'stringField' ; value == 'hi'"),
    (CONDITION, "name == 'stringField' ; value == 'bye'"),
    (CONDITION, "typeName == 'INT' ; value > 100 && message.booleanField"),
    (CONDITION, "size(tags) == 2 ; value.size() == 3"),
    (CONDITION, "name == 'stringField' ; value.noSuchMethod()"),
    (TRANSFORM, "name == 'stringField' ; value +"),
]


def _field_both(
    kind: str, expr: str, record: Any, field: tuple[str, str, set[str]], full_name: str, fd: Any = None
) -> Any:
    name, type_name, tags = field
    ctx, ck_ctx = _contexts("CEL_FIELD", kind, expr, "PROTOBUF" if fd is not None else "AVRO")
    value = getattr(record, name) if isinstance(record, Message) else record[name]
    field_ctx = FieldContext(record, full_name, name, FieldType(type_name), set(tags))
    ck_field_ctx = CkFieldContext(record, full_name, name, CkFieldType(type_name), set(tags), fd)
    ours_fn = _OURS["CEL_FIELD"].new_transform(ctx)  # type: ignore[attr-defined]
    theirs_fn = _THEIRS["CEL_FIELD"].new_transform(ck_ctx)
    ours = _outcome(lambda: ours_fn(ctx, field_ctx, value))
    theirs = _outcome(lambda: theirs_fn(ck_ctx, ck_field_ctx, value))
    return ours, theirs


@pytest.mark.parametrize(("kind", "expr"), FIELD_RULES)
@pytest.mark.parametrize("field", _AVRO_FIELDS, ids=[f[0] for f in _AVRO_FIELDS])
def test_cel_field_rule_on_each_avro_field(kind: str, expr: str, field: tuple[str, str, set[str]]) -> None:
    assert_same(*_field_both(kind, expr, AVRO_RECORD, field, f"test.{field[0]}"))


# --- protobuf -------------------------------------------------------------------------------


def _author() -> Any:
    return example_pb2.Author(name="Kafka", id=123, picture=b"foobar", works=["Nature", "Sky"], oneof_string="oneof")


def _nested() -> Any:
    msg = nested_pb2.NestedMessage(is_active=True, experiments_active=["e1", "e2"], status=nested_pb2.INACTIVE)
    msg.user_id.kafka_user_id = "user-1"
    msg.updated_at.FromDatetime(datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc))
    msg.map_type["k"] = "v"
    msg.inner.id = "inner"
    msg.inner.ids.extend([1, 2, 3])
    return msg


def _scalars() -> Any:
    return test_pb2.TestMessage(
        test_string="s",
        test_bool=True,
        test_bytes=b"\x00\x01",
        test_double=1.25,
        test_float=0.5,
        test_fixed32=7,
        test_fixed64=2**40,
        test_int32=-5,
        test_int64=-(2**40),
        test_sfixed32=-7,
        test_sfixed64=-8,
        test_sint32=-9,
        test_sint64=-10,
        test_uint32=11,
        test_uint64=2**63 + 1,
    )


PROTO_CONDITIONS = [
    (_author, "message.name == 'Kafka'"),
    (_author, "message.name != 'Kafka'"),
    (_author, "message.id == 123 && message.picture == b'foobar'"),
    (_author, "size(message.works) == 2 && message.works[1] == 'Sky'"),
    (_author, "message.works.exists(w, w.startsWith('Nat'))"),
    (_author, "message.oneof_string == 'oneof'"),
    (_author, "has(message.name)"),
    (_author, "has(message.oneof_string)"),
    (_author, "has(message.oneof_message)"),
    (_author, "message.name == 'Kafka' ; message.id > 1000"),
    (_author, "message.noSuchField == 1"),
    (lambda: example_pb2.Author(name="Kafka"), "message.oneof_string == '' && !has(message.oneof_string)"),
    (lambda: example_pb2.Author(name="Kafka"), "message.oneof_message.size == '' && !has(message.oneof_message)"),
    (lambda: example_pb2.Author(name="Kafka"), "size(message.works) == 0 && !has(message.works)"),
    (_nested, "message.user_id.kafka_user_id == 'user-1'"),
    (_nested, "message.updated_at > timestamp('2024-01-01T00:00:00Z')"),
    (_nested, "message.updated_at.getFullYear() == 2024"),
    (_nested, "message.status == 1"),
    (_nested, "message.map_type['k'] == 'v' && 'k' in message.map_type"),
    (_nested, "message.inner.ids.all(i, i > 0) && message.inner.id == 'inner'"),
    (_nested, "has(message.complex_type)"),
    (_nested, "message.complex_type.is_active == false"),
    (_nested, "has(message.inner.ids) && !has(message.complex_type.is_active)"),
    (_nested, "message.experiments_active == ['e1', 'e2']"),
    (_scalars, "message.test_uint32 == 11u && message.test_uint64 > 9223372036854775807u"),
    (_scalars, "message.test_fixed64 == 1099511627776u && message.test_fixed32 == 7u"),
    (_scalars, "message.test_int64 < 0 && message.test_sint32 == -9 && message.test_sfixed64 == -8"),
    (_scalars, "message.test_double + message.test_float == 1.75"),
    (_scalars, "message.test_uint32 == 11"),
    (_scalars, "has(message.test_string) && !has(message.test_int32) == false"),
]

PROTO_TRANSFORMS = [
    (_author, "message"),
    (_author, "{'name': message.name + '-x', 'id': message.id + 1, 'works': message.works + ['More']}"),
    (_author, "{'name': 'only-name'}"),
    (_author, "message.id == 0 ; {'name': 'never'}"),
    (_nested, "message"),
    (_nested, "{'is_active': !message.is_active, 'map_type': {'a': 'b'}, 'inner': message.inner}"),
    (_nested, "{'updated_at': message.updated_at + duration('24h'), 'status': 0}"),
    (_scalars, "{'test_uint64': message.test_uint64 + 1u, 'test_double': message.test_double * 2.0}"),
]


@needs_peer_proto
@pytest.mark.parametrize(("make", "expr"), PROTO_CONDITIONS)
def test_cel_condition_on_protobuf_messages(make: Any, expr: str) -> None:
    assert_same(*run_both("CEL", CONDITION, expr, make(), "PROTOBUF"))


@needs_peer_proto
@pytest.mark.parametrize(("make", "expr"), PROTO_TRANSFORMS)
def test_cel_transform_of_protobuf_messages(make: Any, expr: str) -> None:
    ours, theirs = run_both("CEL", TRANSFORM, expr, make(), "PROTOBUF")
    assert_same(ours, theirs)
    if ours[0] == "ok":
        assert type(ours[1]) is type(make())


@needs_peer_proto
@pytest.mark.parametrize(("kind", "expr"), FIELD_RULES)
@pytest.mark.parametrize("name", ["name", "id", "picture", "oneof_string"])
def test_cel_field_rule_on_protobuf_fields(kind: str, expr: str, name: str) -> None:
    author = _author()
    fd = author.DESCRIPTOR.fields_by_name[name]
    type_name = {"name": "STRING", "id": "INT", "picture": "BYTES", "oneof_string": "STRING"}[name]
    tags = {"PII"} if name != "id" else set()
    assert_same(*_field_both(kind, expr, author, (name, type_name, tags), fd.full_name, fd))


@needs_peer_proto
@pytest.mark.parametrize("name", ["test_uint32", "test_uint64", "test_fixed64", "test_int64", "test_float"])
def test_cel_field_rule_types_protobuf_numbers_by_descriptor(name: str) -> None:
    msg = _scalars()
    fd = msg.DESCRIPTOR.fields_by_name[name]
    type_name = "FLOAT" if name == "test_float" else "LONG"
    expr = "typeName == 'FLOAT' ? value * 2.0 : (type(value) == uint ? value + 1u : value + 1)"
    assert_same(*_field_both(TRANSFORM, expr, msg, (name, type_name, set()), fd.full_name, fd))


# Well-known types, which exist in every environment with protobuf.
def _file_descriptor() -> Any:
    msg = descriptor_pb2.FileDescriptorProto(name="a.proto", package="pkg", dependency=["b.proto"])
    msg.message_type.add(name="M").field.add(name="f", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32)
    return msg


WKT_CASES = [
    (_file_descriptor, "message.name == 'a.proto' && message.package == 'pkg'"),
    (_file_descriptor, "message.message_type[0].field[0].number == 1"),
    (_file_descriptor, "message.message_type[0].field[0].type == 5"),
    (_file_descriptor, "has(message.syntax)"),
    (_file_descriptor, "message.syntax == ''"),
    (_file_descriptor, "message.dependency.exists(d, d.endsWith('.proto'))"),
    (lambda: timestamp_pb2.Timestamp(seconds=86400), "message == timestamp('1970-01-02T00:00:00Z')"),
    (lambda: wrappers_pb2.Int64Value(value=5), "message == 5"),
]


@pytest.mark.parametrize(("make", "expr"), WKT_CASES)
def test_cel_condition_on_well_known_protobuf_types(make: Any, expr: str) -> None:
    assert_same(*run_both("CEL", CONDITION, expr, make(), "PROTOBUF"))


def test_cel_transform_rebuilds_a_well_known_message() -> None:
    ctx, _ = _contexts("CEL", TRANSFORM, "{'name': message.name + '.bak', 'package': message.package}", "PROTOBUF")
    out = CelExecutor().transform(ctx, _file_descriptor())
    assert out == descriptor_pb2.FileDescriptorProto(name="a.proto.bak", package="pkg")
    struct = struct_pb2.Struct()
    struct.update({"a": 1, "b": ["x", True]})
    ctx, _ = _contexts("CEL", CONDITION, "message.a == 1.0 && message.b[1]", "PROTOBUF")
    assert CelExecutor().transform(ctx, struct) is True


# --- JSONATA --------------------------------------------------------------------------------

MIGRATION = "$merge([$sift($, function($v, $k) {$k != 'size'}), {'height': $.'size'}])"
JSONATA_CASES = [
    (MIGRATION, {"name": "alice", "size": 123, "version": 1}),
    ("$merge([$sift($, function($v, $k) {$k != 'height'}), {'size': $.'height'}])", {"name": "a", "height": 5}),
    ("$ ~> |$|{'full': first & ' ' & last}, ['first', 'last']|", {"first": "Ada", "last": "Lovelace", "n": 1}),
    (
        "{'total': $sum(items.price), 'names': items.name}",
        {"items": [{"name": "a", "price": 2}, {"name": "b", "price": 3.5}]},
    ),
    ("$map(xs, function($x) { $x * 2 })", {"xs": [1, 2, 3]}),
    ("$sort(xs)", {"xs": [3, 1, 2]}),
    ("{'up': $uppercase(name), 'len': $length(name)}", {"name": "kafka"}),
    ("$.{'k': $keys($)}", {"a": 1, "b": None}),
    ("nested.deeper.value", {"nested": {"deeper": {"value": [1, {"x": True}]}}}),
    ("missing", {"a": 1}),
    ("$foo(", {"a": 1}),
    ("$undefinedFunction(1)", {"a": 1}),
    ("a + 'x'", {"a": 1}),
]


@pytest.mark.parametrize(("expr", "message"), JSONATA_CASES)
def test_jsonata_transform(expr: str, message: Any) -> None:
    assert_same(*run_both("JSONATA", TRANSFORM, expr, message, "JSON"))


def test_jsonata_cached_expression_runs_on_many_threads() -> None:
    ctx, _ = _contexts("JSONATA", TRANSFORM, MIGRATION, "AVRO")
    executor = JsonataExecutor()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                message = {"name": f"t{n}", "size": i, "version": n}
                assert executor.transform(ctx, message) == {"name": f"t{n}", "version": n, "height": i}
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# --- where ours answers differently on purpose --------------------------------------------


def _ours(rule_type: str, kind: str, expr: str, message: Any) -> Any:
    ctx, _ = _contexts(rule_type, kind, expr, "AVRO")
    return _OURS[rule_type].transform(ctx, message)


def test_logical_types_confluent_kafka_has_no_cel_value_for() -> None:
    record = {
        "amount": decimal.Decimal("12.34"),
        "day": datetime.date(2024, 5, 1),
        "at": datetime.time(1, 2, 3),
        "local": datetime.datetime(2024, 5, 1, 12, 0),
        "huge": 2**70,
    }
    assert _ours("CEL", CONDITION, "message.amount > 12.0 && message.amount < 12.5", record) is True
    assert _ours("CEL", CONDITION, "message.day == 19844", record) is True  # days since the epoch, as Avro's int
    assert _ours("CEL", CONDITION, "message.at == duration('3723s')", record) is True
    assert _ours("CEL", CONDITION, "message.local == timestamp('2024-05-01T12:00:00Z')", record) is True
    assert _ours("CEL", CONDITION, "message.huge > 1e21", record) is True
    # A value passed through unchanged comes back as the very Python value it was.
    assert _ours("CEL", TRANSFORM, "message", record) == record
    assert _ours("CEL", TRANSFORM, "{'x': [message.amount, message.day, message.at, message.local]}", record) == {
        "x": [record["amount"], record["day"], record["at"], record["local"]]
    }
    ck_ctx = _contexts("CEL", CONDITION, "message.amount > 12.0", "AVRO")[1]
    assert _outcome(lambda: _THEIRS["CEL"].transform(ck_ctx, record))[0] == "error"


def test_cel_field_result_keeps_the_field_s_python_type() -> None:
    record = {"amount": decimal.Decimal("1.5"), "day": datetime.date(2024, 5, 1), "id": uuid.uuid4()}
    cases = [
        ("amount", "BYTES", "value * 2.0", decimal.Decimal("3.0")),
        ("day", "INT", "value + 1", datetime.date(2024, 5, 2)),
        ("id", "STRING", "'00000000-0000-0000-0000-000000000001'", uuid.UUID(int=1)),
        ("id", "STRING", "value", record["id"]),
    ]
    for name, type_name, expr, expected in cases:
        ctx, _ = _contexts("CEL_FIELD", TRANSFORM, expr, "AVRO")
        field_ctx = ctx.enter_field(record, f"r.{name}", name, FieldType(type_name), [])
        assert CelFieldExecutor().new_transform(ctx)(ctx, field_ctx, record[name]) == expected


@pytest.mark.parametrize(
    ("type_name", "value", "expr"),
    [("STRING", "hi", "1"), ("INT", 1, "value + 0.5"), ("BOOLEAN", True, "'yes'"), ("BYTES", b"x", "'x'")],
)
def test_cel_field_result_of_another_type_fails_the_rule(type_name: str, value: Any, expr: str) -> None:
    ctx, _ = _contexts("CEL_FIELD", TRANSFORM, expr, "AVRO")
    field_ctx = ctx.enter_field({"f": value}, "r.f", "f", FieldType(type_name), [])
    with pytest.raises(RuleError):
        CelFieldExecutor().new_transform(ctx)(ctx, field_ctx, value)


def test_cel_field_int_result_for_a_double_field_is_a_float() -> None:
    ctx, _ = _contexts("CEL_FIELD", TRANSFORM, "1", "AVRO")
    field_ctx = ctx.enter_field({"f": 2.5}, "r.f", "f", FieldType.DOUBLE, [])
    result = CelFieldExecutor().new_transform(ctx)(ctx, field_ctx, 2.5)
    assert result == 1.0 and type(result) is float


def test_cel_field_leaves_non_primitive_fields_alone() -> None:
    ctx, _ = _contexts("CEL_FIELD", TRANSFORM, "nonsense(", "AVRO")
    for type_name in ("RECORD", "ENUM", "ARRAY", "MAP", "COMBINED", "FIXED"):
        field_ctx = ctx.enter_field({}, "r.f", "f", FieldType(type_name), [])
        sentinel = object()
        assert CelFieldExecutor().new_transform(ctx)(ctx, field_ctx, sentinel) is sentinel


def test_a_condition_must_answer_a_bool() -> None:
    # confluent-kafka hands back the int, which its serde then reads as true.
    with pytest.raises(RuleError):
        _ours("CEL", CONDITION, "message.intField", AVRO_RECORD)
    with pytest.raises(RuleError):
        _ours("CEL", CONDITION, "message.intField ; true", AVRO_RECORD)


def test_jsonata_passes_non_json_values_through() -> None:
    # confluent-kafka refuses an Avro record holding bytes, Decimals or datetimes.
    record = {"name": "a", "size": b"\x00\x01", "at": AVRO_RECORD["tsField"], "price": decimal.Decimal("1.10")}
    expected = {"name": "a", "at": record["at"], "price": record["price"], "height": b"\x00\x01"}
    assert _ours("JSONATA", TRANSFORM, MIGRATION, record) == expected


# --- failures are RuleErrors, bounded, and never crash ----------------------------------------


@pytest.mark.parametrize(
    ("rule_type", "expr"),
    [
        ("CEL", "message.stringField +"),
        ("CEL", "(" * 5000 + "true" + ")" * 5000),
        ("CEL", "!" * 20000 + "true"),
        ("CEL", "message.missing.deeper == 1"),
        ("CEL", "[1, 2][5] == 1"),
        ("CEL", "{'a': 1}['b'] == 1"),
        ("CEL", "int('not a number') == 1"),
        ("CEL", "message.stringField.matches('(') "),
        ("CEL", "x" * (expression_cache.MAX_EXPRESSION_CHARS + 1)),
        ("JSONATA", "$foo("),
        ("JSONATA", "$string($)"),
        ("JSONATA", "[1..5000000]"),
        ("JSONATA", "x" * (expression_cache.MAX_EXPRESSION_CHARS + 1)),
    ],
)
def test_failing_expressions_raise_rule_errors(rule_type: str, expr: str) -> None:
    kind = CONDITION if rule_type == "CEL" else TRANSFORM
    with pytest.raises(RuleError) as e:
        _ours(rule_type, kind, expr, {**AVRO_RECORD, "bytes": b"\x00"})
    assert len(str(e.value)) < 1000  # the error quotes the expression, not all of it


def test_jsonata_evaluation_is_bounded_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonata_executor, "_TIME_LIMIT_S", 0.3)
    with pytest.raises(RuleError, match="ran past"):
        _ours("JSONATA", TRANSFORM, "($f := function($n) { $f($n + 1) }; $f(0))", {"a": 1})


def test_a_large_record_is_not_refused_by_the_size_bound() -> None:
    record = {"items": list(range(300_000)), "text": "x" * 2_000_000}
    out = _ours("JSONATA", TRANSFORM, "{'n': $count(items), 'items': items, 'text': text}", record)
    assert out["n"] == 300_000 and out["items"] == record["items"] and len(out["text"]) == 2_000_000


def test_expression_cache_is_bounded() -> None:
    compiled: list[str] = []
    cache: expression_cache.ExpressionCache[str] = expression_cache.ExpressionCache(
        lambda e: compiled.append(e) or e.upper(), max_entries=3, max_chars=10
    )
    assert cache.get("ab") == "AB" and cache.get("ab") == "AB"
    assert compiled == ["ab"]
    for expr in ("cd", "ef", "gh"):
        cache.get(expr)
    cache.get("ab")  # evicted (more than 3 entries), compiled again
    assert compiled == ["ab", "cd", "ef", "gh", "ab"]
    cache.get("0123456789")  # past 10 characters in all: only this one stays
    cache.get("gh")
    assert compiled[-1] == "gh"


def test_cel_programs_are_compiled_once() -> None:
    executor = CelExecutor()
    calls: list[str] = []
    compile_expr = executor._compile

    def counting(expr: str) -> Any:
        calls.append(expr)
        return compile_expr(expr)

    executor._programs._compile = counting
    for i in range(5):
        ctx, _ = _contexts("CEL", CONDITION, "message.i >= 0 ; message.i < 10", "AVRO")
        assert executor.transform(ctx, {"i": i}) is True
    assert calls == ["message.i >= 0 ", " message.i < 10"]


@pytest.mark.parametrize(
    ("cls", "name"), [(CelExecutor, "CEL"), (CelFieldExecutor, "CEL_FIELD"), (JsonataExecutor, "JSONATA")]
)
def test_register_puts_the_executor_in_the_global_registry(cls: Any, name: str) -> None:
    executor = cls.register()
    assert executor.type() == name
    assert RuleRegistry.get_global_instance().get_executor(name) is executor


def test_now_is_bound_for_the_expressions_that_use_it() -> None:
    assert _ours("CEL", CONDITION, "now > timestamp('2020-01-01T00:00:00Z')", {}) is True


_CHECKED_STRINGS = [
    "user@example.com",
    "a.b+c@sub.example.org",
    "no-at-sign",
    "two@@example.com",
    "x@-bad-.com",
    "x@123",
    "Name <user@example.com>",
    "example.com",
    "example.com.",
    "-example.com",
    "a" * 64 + ".com",
    "192.168.0.1",
    "256.1.1.1",
    "::1",
    "2001:db8::ff00:42:8329",
    "550e8400-e29b-41d4-a716-446655440000",
    "550e8400e29b41d4a716446655440000",
    "not-a-uuid",
    "",
]


@pytest.mark.parametrize("function", ["isEmail", "isHostname", "isIpv4", "isIpv6", "isUuid"])
@pytest.mark.parametrize("text", _CHECKED_STRINGS)
def test_string_check_functions(function: str, text: str) -> None:
    assert_same(*run_both("CEL", CONDITION, f"message.s.{function}()", {"s": text}, "JSON"))


_URIS = [
    "https://example.com",
    "https://example.com/a?b=c#d",
    "urn:isbn:0451450523",
    "mailto:x@y.z",
    "/relative/path",
    "has space",
    "#frag",
    "a#frag",
    "",
]


@pytest.mark.parametrize("function", ["isUri", "isUriRef"])
@pytest.mark.parametrize("text", _URIS)
def test_uri_checks(function: str, text: str) -> None:
    assert_same(*run_both("CEL", CONDITION, f"message.s.{function}()", {"s": text}, "JSON"))


def test_a_string_check_on_a_number_is_a_rule_error() -> None:
    with pytest.raises(RuleError):
        _ours("CEL", CONDITION, "1.isEmail()", {})
