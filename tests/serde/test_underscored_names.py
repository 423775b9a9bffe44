"""confluent-kafka's underscored schema-registry helpers that programs import, under the same names in
kafkawire (the alias serves them): each called with the same arguments, good and bad, on
confluent-kafka's module and kafkawire's, the results or error classes compared."""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import confluent_kafka.schema_registry._async.schema_registry_client as their_async_client
import confluent_kafka.schema_registry._sync.schema_registry_client as their_client
import confluent_kafka.schema_registry.common.avro as their_avro
import confluent_kafka.schema_registry.common.json_schema as their_json
import confluent_kafka.schema_registry.common.protobuf as their_protobuf
import pytest

import kafkawire.schema_registry._async.schema_registry_client as our_async_client
import kafkawire.schema_registry._sync.schema_registry_client as our_client
import kafkawire.schema_registry.avro as our_avro
import kafkawire.schema_registry.common.json_schema as our_json
import kafkawire.schema_registry.protobuf as our_protobuf


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        value = call()
    except Exception as e:
        return ("error", type(e).__name__)
    return ("ok", value)


def _same(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> Any:
    """Both called on their own deep copy of ``args`` (some change their argument): the outcome
    and the arguments afterwards compared."""
    our_args, their_args = copy.deepcopy(args), copy.deepcopy(args)
    outcome = _outcome(lambda: ours(*our_args))
    assert outcome == _outcome(lambda: theirs(*their_args)), args
    assert our_args == their_args, args
    return outcome


@pytest.mark.parametrize(
    "value",
    ["", "plain", "with space", "a/b", "ä-ü", ":.ctx:subject", "100%", "?x=1&y", "~_.-", "\x00", b"raw", 5, None],
)
def test_urlencode(value: Any) -> None:
    _same(our_client._urlencode, their_client._urlencode, value)
    _same(our_async_client._urlencode, their_async_client._urlencode, value)


TAG_SETS: list[Any] = [set(), {"PII"}, {"PII", "X"}, {"Y"}, ["PII"], ("A", "B"), "PII", frozenset({"B"}), None, 3]


@pytest.mark.parametrize("module", ["avro", "json", "protobuf"])
def test_disjoint(module: str) -> None:
    ours, theirs = {
        "avro": (our_avro._disjoint, their_avro._disjoint),
        "json": (our_json._disjoint, their_json._disjoint),
        "protobuf": (our_protobuf._disjoint, their_protobuf._disjoint),
    }[module]
    for a in TAG_SETS:
        for b in TAG_SETS:
            _same(ours, theirs, a, b)


@pytest.mark.parametrize(
    "text",
    [
        '"string"',
        '  "long"\n',
        '{"type": "record", "name": "R", "fields": []}',
        '["null", "int"]',
        "  {}  ",
        "null",
        "",
        "   ",
        "not json",
        None,
        b'"string"',
    ],
)
def test_schema_loads(text: Any) -> None:
    ours = _outcome(lambda: our_avro._schema_loads(text))
    theirs = _outcome(lambda: their_avro._schema_loads(text))
    if ours[0] == "ok":
        assert theirs[0] == "ok"
        assert (ours[1].schema_str, ours[1].schema_type, ours[1].references) == (
            theirs[1].schema_str,
            theirs[1].schema_type,
            theirs[1].references,
        )
    else:
        assert ours == theirs, text


@pytest.mark.parametrize("name", ["a.b.Rec", "Rec", ".Rec", "a.", "a..b", "", ".", "x.y", "a.b.c.", 5, None])
def test_implied_namespace(name: Any) -> None:
    _same(our_avro._implied_namespace, their_avro._implied_namespace, name)


LINE = {"type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string", "confluent:tags": ["ID"]}]}
NESTED = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "aliases": ["Old", "other.Older"],
    "fields": [
        {"name": "a", "type": LINE, "confluent:tags": ["PII"]},
        {"name": "b", "type": copy.deepcopy(LINE)},
        {"name": "c", "type": {"type": "array", "items": copy.deepcopy(LINE)}},
        {"name": "d", "type": {"type": "map", "values": ["null", copy.deepcopy(LINE)]}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X"], "aliases": ["F"]}},
        {"name": "f", "type": {"type": "enum", "name": "E", "symbols": ["X"]}},
        {"name": "g", "type": {"type": "fixed", "name": "F", "size": 2}},
        {"name": "h", "type": {"type": {"type": "fixed", "name": "F", "size": 2}}},
        {
            "name": "i",
            "type": {
                "type": "record",
                "name": "x.Inner",
                "fields": [{"name": "j", "type": "string", "confluent:tags": ["T"]}],
            },
        },
        {
            "name": "k",
            "type": {"type": "record", "name": "Nested", "fields": [{"name": "l", "type": copy.deepcopy(LINE)}]},
        },
        {"name": "m", "type": {"type": "record", "name": "Old", "fields": []}},
    ],
}
SCHEMAS: list[Any] = [
    "string",
    ["null", "string"],
    LINE,
    NESTED,
    [LINE, copy.deepcopy(LINE)],
    {"type": "array", "items": LINE},
    {"type": "string"},
    {"type": "record", "fields": [{"name": "x", "type": "int", "confluent:tags": ["A"]}]},
    {"type": "record", "name": "NoFields"},
    {"type": "record", "name": "n.a.", "fields": [{"name": "x", "type": "int", "confluent:tags": ["A"]}]},
    {"type": "record", "name": "R", "namespace": "", "fields": [{"name": "x", "type": LINE}]},
    {"type": "record", "name": "R", "fields": [{"name": 5, "type": "int", "confluent:tags": ["A"]}]},
    {"type": "record", "name": "R", "fields": [{"name": "x", "type": "int", "confluent:tags": "AB"}]},
    {"type": "record", "name": "R", "aliases": 5, "fields": []},
    {"type": "enum", "symbols": ["A"]},
    {"type": "map"},
    {"name": "typeless"},
    {},
    None,
    5,
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_collapse_schema(schema: Any) -> None:
    _same(our_avro._collapse_schema, their_avro._collapse_schema, schema)
    seen = ["shop.Line", "Line", "E"]
    _same(our_avro._collapse_schema, their_avro._collapse_schema, schema, seen)


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize(("ns", "name"), [("", ""), ("outer", ""), ("", "outer.Rec"), ("a", "b.c.Rec"), ("a", ".R")])
def test_get_inline_tags_recursively(schema: Any, ns: str, name: str) -> None:
    found: defaultdict[str, set[str]] = defaultdict(set, {"shop.Line.sku": {"OLD"}})
    _same(our_avro._get_inline_tags_recursively, their_avro._get_inline_tags_recursively, ns, name, schema, found)
    # a plain dict: a tag of a field not yet in it fails in both
    ours: dict[str, set[str]] = {"shop.Line.sku": {"OLD"}}
    theirs: dict[str, set[str]] = {"shop.Line.sku": {"OLD"}}
    outcome = _outcome(lambda: our_avro._get_inline_tags_recursively(ns, name, copy.deepcopy(schema), ours))
    assert outcome == _outcome(lambda: their_avro._get_inline_tags_recursively(ns, name, copy.deepcopy(schema), theirs))
    assert ours == theirs
