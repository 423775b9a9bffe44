"""confluent-kafka's underscored schema-registry helpers that programs import, under the same names in
kafkawire (the alias serves them): each called with the same arguments, good and bad, on
confluent-kafka's module and kafkawire's, the results or error classes compared."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import confluent_kafka.schema_registry._async.avro as their_async_avro
import confluent_kafka.schema_registry._async.json_schema as their_async_json
import confluent_kafka.schema_registry._async.protobuf as their_async_protobuf
import confluent_kafka.schema_registry._async.schema_registry_client as their_async_client
import confluent_kafka.schema_registry._sync.avro as their_sync_avro
import confluent_kafka.schema_registry._sync.json_schema as their_sync_json
import confluent_kafka.schema_registry._sync.protobuf as their_sync_protobuf
import confluent_kafka.schema_registry._sync.schema_registry_client as their_client
import confluent_kafka.schema_registry.common._oauthbearer as their_oauthbearer
import confluent_kafka.schema_registry.common.avro as their_avro
import confluent_kafka.schema_registry.common.json_schema as their_json
import confluent_kafka.schema_registry.common.protobuf as their_protobuf
import confluent_kafka.schema_registry.common.schema_registry_client as their_common_client
import pytest
from confluent_kafka.schema_registry import AsyncSchemaRegistryClient as TheirAsyncSchemaRegistryClient
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry import SchemaReference as TheirSchemaReference
from confluent_kafka.schema_registry import SchemaRegistryClient as TheirSchemaRegistryClient
from confluent_kafka.schema_registry.schema_registry_client import Rule as TheirRule
from confluent_kafka.schema_registry.schema_registry_client import RuleKind as TheirRuleKind
from confluent_kafka.schema_registry.schema_registry_client import RuleMode as TheirRuleMode
from confluent_kafka.schema_registry.serde import RuleContext as TheirRuleContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

import kafkawire.schema_registry._async.avro as our_async_avro
import kafkawire.schema_registry._async.json_schema as our_async_json
import kafkawire.schema_registry._async.protobuf as our_async_protobuf
import kafkawire.schema_registry._async.schema_registry_client as our_async_client
import kafkawire.schema_registry._sync.avro as our_sync_avro
import kafkawire.schema_registry._sync.json_schema as our_sync_json
import kafkawire.schema_registry._sync.protobuf as our_sync_protobuf
import kafkawire.schema_registry._sync.schema_registry_client as our_client
import kafkawire.schema_registry.avro as our_avro
import kafkawire.schema_registry.common.auth as our_auth
import kafkawire.schema_registry.common.json_schema as our_json
import kafkawire.schema_registry.common.schema_registry_client as our_common_client
import kafkawire.schema_registry.protobuf as our_protobuf
from kafkawire.schema_registry import (
    AsyncSchemaRegistryClient,
    RegisteredSchema,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
)
from kafkawire.schema_registry.common.rules import RuleContext
from kafkawire.schema_registry.common.schema_registry_client import Rule, RuleKind, RuleMode
from tests.harness.token_endpoint import TokenEndpoint
from tests.serde.registry_front import RegistryFront


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


@pytest.mark.parametrize("value", [0, 1, 0x7F, 0x80, 255, 256, -1, "a", None, 1.0, True])
def test_protobuf_bytes(value: Any) -> None:
    _same(our_protobuf._bytes, their_protobuf._bytes, value)


@pytest.mark.parametrize(
    "name",
    [
        "google/protobuf/timestamp.proto",
        "google/type/date.proto",
        "google/api/annotations.proto",
        "google/protobufx.proto",
        "confluent/meta.proto",
        "confluent/type/decimal.proto",
        "confluent/types/decimal.proto",
        "confluent/mine.proto",
        "confluentinc/x.proto",
        "shop/order.proto",
        "Google/protobuf/any.proto",
        "",
        5,
        None,
    ],
)
def test_protobuf_is_builtin(name: Any) -> None:
    _same(our_protobuf._is_builtin, their_protobuf._is_builtin, name)


def _file_proto(name: str, package: str, *deps: str) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3", dependency=list(deps))
    message = proto.message_type.add(name="M")
    message.field.add(name="x", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=1)
    return proto


PROTOS = [
    descriptor_pb2.FileDescriptorProto(),
    _file_proto("a.proto", "shop"),
    _file_proto("b.proto", "", "google/protobuf/timestamp.proto", "a.proto"),
    timestamp_pb2.DESCRIPTOR,
]


def test_protobuf_proto_to_str() -> None:
    for proto in PROTOS[:3]:
        _same(our_protobuf._proto_to_str, their_protobuf._proto_to_str, proto)
    for bad in (PROTOS[3], None, "text", b"bytes"):
        assert _outcome(lambda bad=bad: our_protobuf._proto_to_str(bad)) == _outcome(
            lambda bad=bad: their_protobuf._proto_to_str(bad)
        )


@pytest.mark.parametrize(
    "text",
    [
        *(base64.standard_b64encode(p.SerializeToString()).decode() for p in PROTOS[:3]),
        "",
        "AAAA",  # three zero bytes: field number 0
        "CgFh",  # name "a"
        "CgFhEg==",  # truncated
        "not base64!",
        "Cg=",
        "é",
        b"CgFh",
        None,
    ],
)
@pytest.mark.parametrize("name", ["default", "x/y.proto", "", None, 5])
def test_protobuf_str_to_proto(text: Any, name: Any) -> None:
    ours = _outcome(lambda: our_protobuf._str_to_proto(name, text))
    theirs = _outcome(lambda: their_protobuf._str_to_proto(name, text))
    if ours[0] == "ok" and theirs[0] == "ok":
        assert ours[1].SerializeToString() == theirs[1].SerializeToString()
    else:
        assert ours == theirs, (name, text)


WELL_KNOWN = [
    *(
        f"google/protobuf/{n}.proto"
        for n in ["any", "api", "descriptor", "duration", "empty", "field_mask", "source_context"]
    ),
    *(f"google/protobuf/{n}.proto" for n in ["struct", "timestamp", "type", "wrappers"]),
    *(
        f"google/type/{n}.proto"
        for n in ["calendar_period", "color", "date", "datetime", "dayofweek", "expr", "fraction"]
    ),
    *(f"google/type/{n}.proto" for n in ["latlng", "money", "month", "postal_address", "quaternion", "timeofday"]),
    "confluent/meta.proto",
    "confluent/type/decimal.proto",
    "confluent/type/variant.proto",
    "confluent/types/decimal.proto",
]


def _files(pool: descriptor_pool.DescriptorPool, names: list[str]) -> dict[str, Any]:
    return {name: _outcome(lambda name=name: pool.FindFileByName(name).serialized_pb) for name in names}


def test_protobuf_init_pool() -> None:
    ours, theirs = descriptor_pool.DescriptorPool(), descriptor_pool.DescriptorPool()
    assert _outcome(lambda: our_protobuf._init_pool(ours)) == _outcome(lambda: their_protobuf._init_pool(theirs))
    others = ["google/protobuf/compiler/plugin.proto", "google/api/annotations.proto", "confluent/x.proto"]
    found = _files(ours, WELL_KNOWN + others)
    assert found == _files(theirs, WELL_KNOWN + others)
    assert all(found[name][0] == "ok" for name in WELL_KNOWN) and all(found[name][0] == "error" for name in others)
    # a second time on the same pool, and on a pool holding another file of a well-known name
    assert _outcome(lambda: our_protobuf._init_pool(ours)) == _outcome(lambda: their_protobuf._init_pool(theirs))
    clashing = []
    for _ in range(2):
        pool = descriptor_pool.DescriptorPool()
        pool.Add(_file_proto("google/protobuf/any.proto", "google.protobuf"))
        clashing.append(pool)
    assert _outcome(lambda: our_protobuf._init_pool(clashing[0])) == _outcome(
        lambda: their_protobuf._init_pool(clashing[1])
    )
    assert _outcome(lambda: our_protobuf._init_pool(None)) == _outcome(lambda: their_protobuf._init_pool(None))


# _resolve_named_schema: both clients against the same registry (confluent's, behind tests/serde/registry_front.py)


def _registry_calls(front: RegistryFront, call: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
    start = len(front.requests)
    outcome = _outcome(call)
    return outcome, front.requests[start:]


def _both_schemas(text: str, schema_type: str, refs: list[tuple[Any, Any, Any]]) -> tuple[Any, Any]:
    ours = Schema(text, schema_type, [SchemaReference(*ref) for ref in refs])
    theirs = TheirSchema(text, schema_type, [TheirSchemaReference(*ref) for ref in refs])
    return ours, theirs


def _record(name: str, namespace: str | None, fields: list[tuple[str, Any]]) -> str:
    schema: dict[str, Any] = {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}
    if namespace is not None:
        schema["namespace"] = namespace
    return json.dumps(schema)


AVRO_REFS: list[list[tuple[Any, Any, Any]]] = [
    [],
    [("shop.Base", "base", 1)],
    [("shop.Mid", "mid", 1), ("o.avsc", "other", 1), ("shop.Base", "base", 1)],  # Base twice, one by Mid
    [("Full", "full", 1), ("prim", "primitive", 1)],
    [("shop.Base", "base", 2)],  # no such version
    [("x", "nowhere", 1)],
    [("x", None, 1)],
    [("x", "base", None)],
    [(None, "base", 1)],
]


def _register_avro(front: RegistryFront) -> None:
    registry = front.registry
    registry.register_schema("base", TheirSchema(_record("Base", "shop", [("x", "int")]), "AVRO"))
    base = [TheirSchemaReference("shop.Base", "base", 1)]
    registry.register_schema("mid", TheirSchema(_record("Mid", "shop", [("b", "shop.Base")]), "AVRO", base))
    registry.register_schema("other", TheirSchema(_record("Other", "other", [("b", "shop.Base")]), "AVRO", base))
    registry.register_schema("full", TheirSchema(_record("a.b.Full", "ignored", [("y", "long")]), "AVRO"))
    registry.register_schema("primitive", TheirSchema('"string"', "AVRO"))


@pytest.mark.parametrize("refs", AVRO_REFS)
def test_avro_resolve_named_schema(front: RegistryFront, refs: list[tuple[Any, Any, Any]]) -> None:
    _register_avro(front)
    ours, theirs = _both_schemas(_record("Root", "shop", [("m", "string")]), "AVRO", refs)
    url = {"url": front.url}
    found = _registry_calls(front, lambda: our_sync_avro._resolve_named_schema(ours, SchemaRegistryClient(url)))
    assert found == _registry_calls(
        front, lambda: their_sync_avro._resolve_named_schema(theirs, TheirSchemaRegistryClient(url))
    )
    assert found == _registry_calls(
        front,
        lambda: asyncio.run(our_async_avro._resolve_named_schema(ours, AsyncSchemaRegistryClient(url))),
    )
    assert found == _registry_calls(
        front,
        lambda: asyncio.run(their_async_avro._resolve_named_schema(theirs, TheirAsyncSchemaRegistryClient(url))),
    )
    assert (found[0][0] == "ok") == (refs in AVRO_REFS[:4])


def _proto_b64(proto: descriptor_pb2.FileDescriptorProto) -> str:
    return base64.standard_b64encode(proto.SerializeToString()).decode()


PROTOBUF_REFS: list[list[tuple[Any, Any, Any]]] = [
    [],
    [("a.proto", "a.proto", 1)],
    [("b.proto", "b.proto", 1), ("a.proto", "a.proto", 1), ("google/protobuf/timestamp.proto", None, None)],
    [("confluent/meta.proto", "nowhere", 1), ("a.proto", "a.proto", 1), ("a.proto", None, None)],
    [("a.proto", "a.proto", 9)],
    [("a.proto", None, 1)],
    [(None, "a.proto", 1)],
    [("bad.proto", "bad", 1)],
]


@pytest.mark.parametrize("refs", PROTOBUF_REFS)
@pytest.mark.parametrize("visited", [None, {"b.proto"}])
def test_protobuf_resolve_named_schema(
    front: RegistryFront, refs: list[tuple[Any, Any, Any]], visited: set[str] | None
) -> None:
    registry = front.registry
    registry.register_schema("a.proto", TheirSchema(_proto_b64(_file_proto("a.proto", "shop")), "PROTOBUF"))
    b = _proto_b64(_file_proto("b.proto", "shop.b", "google/protobuf/timestamp.proto", "a.proto"))
    registry.register_schema("b.proto", TheirSchema(b, "PROTOBUF", [TheirSchemaReference("a.proto", "a.proto", 1)]))
    registry.register_schema("bad", TheirSchema("CgFhEg==", "PROTOBUF"))
    ours, theirs = _both_schemas(_proto_b64(_file_proto("root.proto", "r", "b.proto")), "PROTOBUF", refs)
    url = {"url": front.url}

    def resolved(init_pool: Callable[[Any], None], resolve: Callable[[Any, Any], Any]) -> Any:
        pool = descriptor_pool.DescriptorPool()
        init_pool(pool)
        seen = None if visited is None else set(visited)
        outcome, calls = _registry_calls(front, lambda: resolve(pool, seen))
        return (
            outcome,
            calls,
            seen,
            _files(pool, ["a.proto", "b.proto", "bad.proto", "google/protobuf/timestamp.proto"]),
        )

    found = resolved(
        our_protobuf._init_pool,
        lambda pool, seen: our_sync_protobuf._resolve_named_schema(ours, SchemaRegistryClient(url), pool, seen),
    )
    assert found == resolved(
        their_protobuf._init_pool,
        lambda pool, seen: their_sync_protobuf._resolve_named_schema(
            theirs, TheirSchemaRegistryClient(url), pool, seen
        ),
    )
    assert found == resolved(
        our_protobuf._init_pool,
        lambda pool, seen: asyncio.run(
            our_async_protobuf._resolve_named_schema(ours, AsyncSchemaRegistryClient(url), pool, seen)
        ),
    )
    assert found == resolved(
        their_protobuf._init_pool,
        lambda pool, seen: asyncio.run(
            their_async_protobuf._resolve_named_schema(theirs, TheirAsyncSchemaRegistryClient(url), pool, seen)
        ),
    )
    assert (found[0][0] == "ok") == (refs in PROTOBUF_REFS[:4])


@pytest.mark.parametrize(
    "args",
    [
        ("tok", "lsrc-1"),
        ("tok", "lsrc-1", "pool-1"),
        ("tok", "lsrc-1", None),
        ("", "", ""),
        ("tok", None, "pool-1,pool-2"),
        ("tok",),
        (),
        ("tok", "lsrc-1", "pool", "extra"),
    ],
)
def test_static_field_provider(args: tuple[Any, ...]) -> None:
    def fields(cls: Any) -> Any:
        provider = cls(*args)
        return provider.token, provider.logical_cluster, provider.identity_pool, provider.get_bearer_fields()

    assert _outcome(lambda: fields(our_auth._StaticFieldProvider)) == _outcome(
        lambda: fields(their_oauthbearer._StaticFieldProvider)
    )


def test_static_field_provider_repr_has_no_token() -> None:
    assert "s3cret" not in repr(our_auth._StaticFieldProvider("s3cret", "lsrc-1", "pool-1"))


def _custom(config: Any) -> Any:
    if config == "fail":
        raise RuntimeError("no token")
    return {"bearer.auth.token": "t", "config": config}


@pytest.mark.parametrize("config", [{"a": 1}, None, "fail", []])
@pytest.mark.parametrize("function", [_custom, lambda config: config, None])
def test_custom_oauth_client(function: Any, config: Any) -> None:
    def fields(cls: Any) -> Any:
        provider = cls(function, config)
        return provider.custom_function is function, provider.custom_config, provider.get_bearer_fields()

    assert _outcome(lambda: fields(our_client._CustomOAuthClient)) == _outcome(
        lambda: fields(their_client._CustomOAuthClient)
    )


def test_bearer_field_provider_base() -> None:
    class Incomplete(our_auth._BearerFieldProvider):
        pass

    class TheirIncomplete(their_oauthbearer._BearerFieldProvider):
        pass

    for ours, theirs in (
        (our_auth._BearerFieldProvider, their_oauthbearer._BearerFieldProvider),
        (Incomplete, TheirIncomplete),
    ):
        assert _outcome(ours) == _outcome(theirs)
    assert isinstance(our_auth._StaticFieldProvider("t", "c"), our_auth._BearerFieldProvider)
    assert isinstance(our_client._CustomOAuthClient(_custom, {}), our_auth._BearerFieldProvider)


@pytest.mark.parametrize(
    "uri",
    [
        "ftp://example.com/schema.json",
        "file:///etc/passwd",
        "http:///no-host",
        "http://127.0.0.1:1/schema.json",
        "https://localhost/schema.json",
        "http://10.1.2.3/schema.json",
        "http://169.254.169.254/latest",
        "http://[::1]/schema.json",
        "http://[::ffff:127.0.0.1]/schema.json",
        "schema.json",
        "",
    ],
)
def test_json_retrieve_via_httpx_refuses(uri: str) -> None:
    ours = _outcome(lambda: our_json._retrieve_via_httpx(uri))
    assert ours == _outcome(lambda: their_json._retrieve_via_httpx(uri))
    assert ours == ("error", "ValueError")


JSON_REFS: list[list[tuple[Any, Any, Any]]] = [
    [],
    [("addr.json", "addr", 1)],
    [("person.json", "person", 1), ("addr.json", "addr", 1)],
    [("addr.json", "addr", 7)],
    [("x", None, 1)],
    [(None, "addr", 1)],
]
JSON_NAMES = ["addr.json", "person.json", "x", "http://127.0.0.1/x.json", "ftp://example.com/x.json"]


@pytest.mark.parametrize("refs", JSON_REFS)
@pytest.mark.parametrize("given", [False, True])
def test_json_resolve_named_schema(front: RegistryFront, refs: list[tuple[Any, Any, Any]], given: bool) -> None:
    addr = json.dumps({"type": "object", "properties": {"zip": {"type": "string"}}})
    person = json.dumps({"type": "object", "properties": {"home": {"$ref": "addr.json"}}})
    front.registry.register_schema("addr", TheirSchema(addr, "JSON"))
    front.registry.register_schema(
        "person", TheirSchema(person, "JSON", [TheirSchemaReference("addr.json", "addr", 1)])
    )
    ours, theirs = _both_schemas('{"$ref": "person.json"}', "JSON", refs)
    url = {"url": front.url}

    def resolved(resolve: Callable[[Any], Any]) -> Any:
        start = Registry().with_resource("x", Resource.from_contents({"const": 1}, DRAFT7)) if given else None
        outcome, calls = _registry_calls(front, lambda: resolve(start))
        if outcome[0] == "error":
            return outcome, calls
        registry = outcome[1]
        return (
            "ok",
            calls,
            {name: _outcome(lambda name=name: registry.get_or_retrieve(name).value.contents) for name in JSON_NAMES},
        )

    found = resolved(lambda start: our_sync_json._resolve_named_schema(ours, SchemaRegistryClient(url), start))
    assert found == resolved(
        lambda start: their_sync_json._resolve_named_schema(theirs, TheirSchemaRegistryClient(url), start)
    )
    assert found == resolved(
        lambda start: asyncio.run(our_async_json._resolve_named_schema(ours, AsyncSchemaRegistryClient(url), start))
    )
    assert found == resolved(
        lambda start: asyncio.run(
            their_async_json._resolve_named_schema(theirs, TheirAsyncSchemaRegistryClient(url), start)
        )
    )
    assert (found[0] == "ok") == (refs in JSON_REFS[:3])


def _holder_class() -> Any:
    """A message with each kind of field _set_field writes: scalar, repeated, map of scalars, map
    of messages, message."""
    proto = _file_proto("holder.proto", "holder")
    T = descriptor_pb2.FieldDescriptorProto
    inner = proto.message_type[0]
    holder = proto.message_type.add(name="Holder")
    holder.field.add(name="n", number=1, type=T.TYPE_INT32, label=T.LABEL_OPTIONAL)
    holder.field.add(name="ns", number=2, type=T.TYPE_INT32, label=T.LABEL_REPEATED)
    holder.field.add(name="inner", number=3, type=T.TYPE_MESSAGE, type_name=".holder.M", label=T.LABEL_OPTIONAL)
    for number, (name, value_type) in enumerate((("tags", T.TYPE_STRING), ("items", T.TYPE_MESSAGE)), start=4):
        entry = holder.nested_type.add(name=f"{name.capitalize()}Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
        kind = {"type_name": ".holder.M"} if value_type == T.TYPE_MESSAGE else {}
        entry.field.add(name="value", number=2, type=value_type, label=T.LABEL_OPTIONAL, **kind)
        holder.field.add(
            name=name, number=number, type=T.TYPE_MESSAGE, type_name=f".holder.Holder.{entry.name}", label=3
        )
    assert inner.name == "M"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("holder.Holder")
    ), message_factory.GetMessageClass(pool.FindMessageTypeByName("holder.M"))


def test_protobuf_set_field() -> None:
    holder_type, m_type = _holder_class()
    start = holder_type(n=1, ns=[1, 2], inner=m_type(x="a"), tags={"k": "v"}, items={"i": m_type(x="b")})
    values = [5, "five", None, [], [3, 4], ["x"], {}, {"k2": "v2"}, {"i": m_type(x="c")}, {"j": "v"}]
    values += [m_type(x="d"), m_type(), holder_type(), 1.5]
    seen = 0
    for name in ("n", "ns", "inner", "tags", "items"):
        fd = holder_type.DESCRIPTOR.fields_by_name[name]
        for value in values:
            ours, theirs = holder_type(), holder_type()
            ours.CopyFrom(start)
            theirs.CopyFrom(start)
            outcome = _outcome(lambda: our_protobuf._set_field(fd, ours, copy.deepcopy(value)))  # noqa: B023
            assert outcome == _outcome(lambda: their_protobuf._set_field(fd, theirs, copy.deepcopy(value))), (  # noqa: B023
                name,
                value,
            )
            assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
            seen += outcome[0] == "ok"
    assert 5 < seen < 5 * len(values)


def _rule_contexts(kind: str, tags: tuple[str, ...]) -> tuple[Any, Any]:
    ours = Rule("r", None, RuleKind(kind), RuleMode.WRITE, "X", set(tags), None, None, None, None, False)
    theirs = TheirRule(
        "r", None, TheirRuleKind(kind), TheirRuleMode.WRITE, "X", set(tags), None, None, None, None, False
    )
    return (
        RuleContext(None, None, None, "subject", RuleMode.WRITE, ours, 0, [ours], None, None),
        TheirRuleContext(None, None, None, None, "subject", TheirRuleMode.WRITE, theirs, 0, [theirs], None, None),
    )


def _field_recorder(seen: list[Any], condition: bool) -> Any:
    """A field transform noting each field it is given: a CONDITION rule's answer (False for a
    string), else strings upper-cased and integers incremented."""

    def field_transform(ctx: Any, field_ctx: Any, value: Any) -> Any:
        seen.append((field_ctx.full_name, field_ctx.name, field_ctx.field_type.name, sorted(field_ctx.tags), value))
        if condition:
            return not isinstance(value, str)
        if isinstance(value, str):
            return value.upper()
        return value + 1 if isinstance(value, int) and not isinstance(value, bool) else value

    return field_transform


def _walk_step(step: Callable[[Any, Any], Any], context: Any, message: Any, condition: bool) -> Any:
    """``step(ctx, field_transform)``'s outcome, the fields it handed the transform, and where the
    context's field path ends."""
    seen: list[Any] = []
    outcome = _outcome(lambda: step(context, _field_recorder(seen, condition)))
    return outcome, seen, context.current_field() is None


JSON_WALKED = {
    "type": "object",
    "definitions": {"line": {"type": "object", "properties": {"sku": {"type": "string", "confluent:tags": ["ID"]}}}},
    "properties": {
        "customer": {"type": "string", "confluent:tags": ["PII"]},
        "qty": {"type": "integer"},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/line"}},
        "note": {"type": ["null", "string"], "confluent:tags": ["PII", "X"]},
        "pay": {
            "oneOf": [
                {"type": "object", "properties": {"card": {"type": "string"}}, "required": ["card"]},
                {"type": "object", "properties": {"iban": {"type": "string"}}, "required": ["iban"]},
            ]
        },
        "line": {"$ref": "#/definitions/line", "confluent:tags": ["L"]},
        "tags_text": {"type": "string", "confluent:tags": "AB"},
        "tags_bad": {"type": "string", "confluent:tags": 5},
        "nowhere": {"$ref": "#/definitions/nope"},
    },
}
JSON_VALUES: list[Any] = [
    {
        "customer": "ann",
        "qty": 2,
        "lines": [{"sku": "s1"}, {"sku": "s2"}],
        "note": "n",
        "pay": {"iban": "no1"},
        "line": {"sku": "s3"},
        "tags_text": "t",
        "tags_bad": "b",
        "nowhere": "x",
    },
    {"customer": None, "note": None, "qty": 0, "lines": []},
    {},
    [],
    "text",
    None,
]
JSON_PROP_SCHEMAS: list[Any] = [True, [], None, {"type": "string", "confluent:tags": None}]


def _json_step(module: Any, context: Any, step: tuple[Any, ...], condition: bool) -> Any:
    path, name, value, schema, registry, resolver = copy.deepcopy(step[:4]) + step[4:]
    found = _walk_step(
        lambda ctx, ft: module._transform_field(ctx, path, name, value, schema, registry, resolver, ft),
        context,
        value,
        condition,
    )
    return found, value


@pytest.mark.parametrize(("kind", "tags"), [("TRANSFORM", ()), ("TRANSFORM", ("PII",)), ("CONDITION", ())])
def test_json_transform_field(kind: str, tags: tuple[str, ...]) -> None:
    registry: Registry[Any] = Registry()
    resolver = registry.resolver_with_root(Resource.from_contents(JSON_WALKED, default_specification=DRAFT7))
    steps = [(name, schema) for name, schema in JSON_WALKED["properties"].items()]
    steps += [("customer", schema) for schema in JSON_PROP_SCHEMAS] + [("absent", {"type": "string"})]
    outcomes: set[tuple[str, bool]] = set()
    for (name, schema), value, path, given in (
        (step, value, path, given)
        for step in steps
        for value in JSON_VALUES
        for path in ("$", "$.outer")
        for given in (resolver, None)
    ):
        step = (path, name, value, schema, registry, given)
        ours, theirs = _rule_contexts(kind, tags)
        condition = kind == "CONDITION"
        found = _json_step(our_json, ours, step, condition)
        assert found == _json_step(their_json, theirs, step, condition), step
        outcomes.add((found[0][0][0], bool(found[0][1])))
    assert outcomes == {("ok", True), ("ok", False), ("error", False)} | ({("error", True)} if condition else set())


JSON_SUBSCHEMAS: list[Any] = [
    [],
    [{"type": "string"}],
    [{"type": "integer"}, {"type": "string"}, {"type": "string", "minLength": 2}],
    [{"$ref": "#/definitions/line"}, {"type": "object"}],
    [{"type": "object", "properties": {"sku": {"type": "integer"}}}, {"$ref": "#/definitions/line"}],
    [True],
    [False, {}],
    [5, "x", None, {"type": "string"}],
    [{"type": 5}],
    [{"type": "null"}, {"type": 5}],
    [{"$ref": "#/definitions/nope"}],
    [{"type": "object", "properties": {"line": {"$ref": "#/definitions/line"}}}],
    "ab",
    None,
]


@pytest.mark.parametrize("subschemas", JSON_SUBSCHEMAS)
def test_json_validate_subschemas(subschemas: Any) -> None:
    registry: Registry[Any] = Registry()
    resolver = registry.resolver_with_root(Resource.from_contents(JSON_WALKED, default_specification=DRAFT7))
    for message in ("s", "long", 3, {"sku": "a"}, {"sku": 1}, {"line": {"sku": "a"}}, None, []):
        for given in (resolver, None):
            _same(
                lambda s, m, g=given: our_json._validate_subschemas(s, m, registry, g),
                lambda s, m, g=given: their_json._validate_subschemas(s, m, registry, g),
                subschemas,
                message,
            )


def _proto_walk_step(module: Any, context: Any, fd: Any, desc: Any, message: Any, condition: bool) -> Any:
    found = _walk_step(
        lambda ctx, ft: module._transform_field(ctx, fd, fd, desc, message, ft), context, message, condition
    )
    return found, message.SerializeToString(deterministic=True) if hasattr(message, "SerializeToString") else message


@pytest.mark.parametrize(("kind", "tags"), [("TRANSFORM", ()), ("TRANSFORM", ("PII",)), ("CONDITION", ())])
def test_protobuf_transform_field(kind: str, tags: tuple[str, ...]) -> None:
    holder_type, m_type = _holder_class()
    full = holder_type(n=1, ns=[1, 2], inner=m_type(x="a"), tags={"k": "v"}, items={"i": m_type(x="b")})
    starts = [full, holder_type(), holder_type(n=0, inner=m_type())]
    holder = holder_type.DESCRIPTOR
    compared = 0
    for name in ("n", "ns", "inner", "tags", "items"):
        fd = holder.fields_by_name[name]
        for start, desc in [(start, holder) for start in starts] + [(full, m_type.DESCRIPTOR)]:
            ours, theirs = holder_type(), holder_type()
            ours.CopyFrom(start)
            theirs.CopyFrom(start)
            our_ctx, their_ctx = _rule_contexts(kind, tags)
            condition = kind == "CONDITION"
            found = _proto_walk_step(our_protobuf, our_ctx, fd, desc, ours, condition)
            assert found == _proto_walk_step(their_protobuf, their_ctx, fd, desc, theirs, condition), (name, start)
            compared += bool(found[0][1])
        # a message the field is not of, and no message
        for bad in (m_type(x="z"), None, {"n": 1}):
            our_ctx, their_ctx = _rule_contexts(kind, tags)
            ours_found = _walk_step(
                lambda ctx, ft: our_protobuf._transform_field(ctx, fd, fd, holder, copy.deepcopy(bad), ft),  # noqa: B023
                our_ctx,
                bad,
                False,
            )
            assert ours_found == _walk_step(
                lambda ctx, ft: their_protobuf._transform_field(ctx, fd, fd, holder, copy.deepcopy(bad), ft),  # noqa: B023
                their_ctx,
                bad,
                False,
            ), (name, bad)
    assert bool(compared) == (not tags)  # untagged fields reach the transform of a rule with no tags only


def _registered(subject: Any, schema_id: Any, version: Any, guid: Any, text: str) -> Any:
    return RegisteredSchema(
        schema_id=schema_id, guid=guid, schema=Schema(text, "AVRO"), subject=subject, version=version
    )


CACHE_STEPS: list[tuple[str, tuple[Any, ...]]] = [
    ("get_schema_by_id", ("s", 1)),
    ("set_schema", ("s", 1, "g1", Schema('"string"', "AVRO"))),
    ("set_schema", (None, 2, None, Schema('"int"', "AVRO"))),
    ("set_schema", ("t", None, "g3", Schema('"long"', "AVRO"))),
    ("set_schema", ("t", 4, "", Schema('"long"', "AVRO"))),
    ("set_registered_schema", (Schema('"bytes"', "AVRO"), _registered("s", 5, 1, "g5", '"bytes"'))),
    ("set_registered_schema", (Schema('"float"', "AVRO"), _registered("s", 6, 2, None, '"double"'))),
    ("set_registered_schema", (Schema('"null"', "AVRO"), _registered("u", None, None, None, '"null"'))),
    ("set_registered_schema", (Schema('"boolean"', "AVRO"), _registered(None, 7, 1, "g7", '"boolean"'))),
    ("set_schema", ("s", 8, "g8", {"unhashable": 1})),
    ("set_registered_schema", (Schema('"bytes"', "AVRO"), None)),
]
CACHE_READS: list[tuple[str, tuple[Any, ...]]] = [
    *[("get_schema_by_id", (subject, n)) for subject in ("s", "t", "u", None) for n in range(1, 9)],
    *[("get_schema_by_guid", (guid,)) for guid in ("g1", "g3", "", "g5", "g7", "g8", None)],
    *[
        (name, (subject, Schema(text, "AVRO")))
        for name in ("get_id_by_schema", "get_registered_by_subject_schema")
        for subject in ("s", "t", "u", None)
        for text in ('"string"', '"int"', '"long"', '"bytes"', '"float"', '"double"', '"null"', '"boolean"')
    ],
    *[("get_registered_by_subject_id", (subject, n)) for subject in ("s", "u", None) for n in (5, 6, 7, None)],
    *[("get_registered_by_subject_version", (subject, v)) for subject in ("s", "u", None) for v in (1, 2, 3, None)],
]


@pytest.mark.parametrize(
    "removal",
    [
        (),
        ("remove_by_subject", ("s",)),
        ("remove_by_subject", (None,)),
        ("remove_by_subject", ("nobody",)),
        ("remove_by_subject_version", ("s", 1)),
        ("remove_by_subject_version", ("s", 2)),
        ("remove_by_subject_version", ("s", 9)),
        ("remove_by_subject_version", ("u", None)),
        ("clear", ()),
    ],
)
def test_schema_cache(removal: tuple[Any, ...]) -> None:
    """The same steps on each cache (given the same values: the cache only files them), every
    answer compared after the steps and again after the removal."""
    ours, theirs = our_common_client._SchemaCache(), their_common_client._SchemaCache()

    def step(name: str, args: tuple[Any, ...]) -> Any:
        found = _outcome(lambda: getattr(ours, name)(*args))
        assert found == _outcome(lambda: getattr(theirs, name)(*args)), (name, args)
        return found

    for name, args in CACHE_STEPS:
        step(name, args)
    answers = [step(name, args) for name, args in CACHE_READS]
    assert sum(found[1] is not None for found in answers) > 20
    if removal:
        step(*removal)
        after = [step(name, args) for name, args in CACHE_READS]
        assert (after != answers) == (removal[1] not in (("nobody",), ("s", 9)))


def test_schema_cache_is_bounded() -> None:
    cache = our_common_client._SchemaCache(2)
    for n in range(3):
        cache.set_registered_schema(Schema(f'"n{n}"', "AVRO"), _registered("s", n, n, f"g{n}", f'"n{n}"'))
    assert cache.get_schema_by_id("s", 0) is None and cache.get_schema_by_guid("g0") is None
    assert cache.get_registered_by_subject_version("s", 0) is None
    assert cache.get_schema_by_id("s", 2) == ("g2", Schema('"n2"', "AVRO"))


@pytest.mark.parametrize(
    "args",
    [("tok", "lsrc-1"), ("tok", "lsrc-1", "pool-1"), ("tok", "lsrc-1", None), ("", "", ""), ("tok",), (), (1, 2, 3, 4)],
)
def test_async_static_field_provider(args: tuple[Any, ...]) -> None:
    def fields(cls: Any) -> Any:
        provider = cls(*args)
        awaited = asyncio.run(provider.get_bearer_fields())
        return provider.token, provider.logical_cluster, provider.identity_pool, awaited

    assert _outcome(lambda: fields(our_common_client._AsyncStaticFieldProvider)) == _outcome(
        lambda: fields(their_common_client._AsyncStaticFieldProvider)
    )
    assert "tok" not in repr(our_common_client._AsyncStaticFieldProvider("tok", "lsrc-1"))


def test_async_bearer_field_provider_base() -> None:
    def subclasses(base: Any) -> list[Any]:
        class Incomplete(base):
            pass

        class Complete(base):
            async def get_bearer_fields(self) -> dict[str, Any]:
                return {"bearer.auth.token": "t"}

        return [base, Incomplete, Complete]

    for ours, theirs in zip(
        subclasses(our_auth._AsyncBearerFieldProvider),
        subclasses(their_oauthbearer._AsyncBearerFieldProvider),
        strict=True,
    ):
        assert _outcome(ours) == _outcome(theirs) or (
            _outcome(ours)[0] == _outcome(theirs)[0] == "ok"
            and asyncio.run(ours().get_bearer_fields()) == asyncio.run(theirs().get_bearer_fields())
        )
    assert isinstance(our_common_client._AsyncStaticFieldProvider("t", "c"), our_auth._AsyncBearerFieldProvider)
    assert our_common_client._StaticFieldProvider is our_auth._StaticFieldProvider


_CLUSTER = {"bearer.auth.logical.cluster": "lsrc-1"}
_OIDC = {
    "bearer.auth.client.id": "cid",
    "bearer.auth.client.secret": "s3cret",
    "bearer.auth.scope": "sc",
    "bearer.auth.issuer.endpoint.url": "https://idp/token",
}
BEARER_CONFS: list[dict[str, Any]] = [
    {},
    {"other": 1},
    _CLUSTER,
    {**_CLUSTER, "bearer.auth.identity.pool.id": "pool-1", "other": 1},
    {**_CLUSTER, "bearer.auth.identity.pool.id": ["pool-1", "pool-2"]},
    {**_CLUSTER, "bearer.auth.identity.pool.id": 5},
    {**_CLUSTER, "bearer.auth.identity.pool.id": ["pool-1", 2]},
    {"bearer.auth.logical.cluster": 5},
    {**_CLUSTER, **_OIDC},
    {**_CLUSTER, **_OIDC, "bearer.auth.scope": 5},
    {**_CLUSTER, **_OIDC, "bearer.auth.client.id": None},
    {**_CLUSTER, "bearer.auth.client.id": "cid"},
    {**_CLUSTER, "bearer.auth.token": "tok"},
    {**_CLUSTER, "bearer.auth.token": 5},
    {**_CLUSTER, "bearer.auth.issuer.endpoint.query": "api-version=2018-02-01&resource=x"},
    {**_CLUSTER, "bearer.auth.issuer.endpoint.query": 5},
    {**_CLUSTER, "bearer.auth.issuer.endpoint.query": ""},
    {**_CLUSTER, "bearer.auth.issuer.endpoint.url": "http://h:1/p;x?old=1#frag", "bearer.auth.issuer.endpoint.query": "q=2"},
    {**_CLUSTER, "bearer.auth.issuer.endpoint.url": "http://h:1/p"},
    {**_CLUSTER, "bearer.auth.issuer.endpoint.url": 5},
    {**_CLUSTER, "bearer.auth.issuer.endpoint.url": "http://[::1/p", "bearer.auth.issuer.endpoint.query": "q"},
    {"bearer.auth.custom.provider.function": _custom, "bearer.auth.custom.provider.config": {"a": 1}},
    {"bearer.auth.custom.provider.function": "nope", "bearer.auth.custom.provider.config": {}},
    {"bearer.auth.custom.provider.function": _custom, "bearer.auth.custom.provider.config": []},
    {"bearer.auth.custom.provider.function": _custom},
]  # fmt: skip
BUILDERS = [
    "_AbstractOAuthBearerFieldProviderBuilder",
    "_AbstractOAuthBearerOIDCFieldProviderBuilder",
    "_AbstractOAuthBearerOIDCAzureIMDSFieldProviderBuilder",
    "_StaticOAuthBearerFieldProviderBuilder",
    "_AbstractCustomOAuthBearerFieldProviderBuilder",
]
BUILDER_FIELDS = [
    "logical_cluster",
    "identity_pool",
    "client_id",
    "client_secret",
    "scope",
    "token_endpoint",
    "static_token",
]
BUILDER_FIELDS += ["custom_function", "custom_config", "required_properties"]


def _validated(module: Any, name: str, conf: dict[str, Any]) -> Any:
    """The builder made, then validated (an abstract one through a subclass that builds nothing),
    then built where it can be: each outcome, its fields, and what is left of ``conf``."""
    base = getattr(module, name)
    made = _outcome(lambda: base(conf).conf is conf)
    builder = type("Concrete", (base,), {} if name.startswith("_Static") else {"build": lambda self, *a: None})(conf)
    validated = _outcome(builder._validate)
    fields = {field: getattr(builder, field, "absent") for field in BUILDER_FIELDS}
    built = None
    if name.startswith("_Static"):
        built = _outcome(lambda: builder.build(3, 1000, 20000).get_bearer_fields())
    return made, validated, fields, conf, built


@pytest.mark.parametrize("name", BUILDERS)
def test_bearer_field_provider_builders(name: str) -> None:
    outcomes = []
    for conf in BEARER_CONFS:
        ours = _validated(our_auth, name, dict(conf))
        assert ours == _validated(their_oauthbearer, name, dict(conf)), conf
        outcomes.append(ours[1][0])
    assert "ok" in outcomes and "error" in outcomes


def _oauth_story(cls: Any, idp: TokenEndpoint, secret: str) -> list[Any]:
    """A client-credentials provider through its life against a real token endpoint: what it
    holds, what each call gives (awaited, for an asyncio one), and how many grants each call asked
    the endpoint for (tokens are compared with the ones the endpoint recorded giving: each client
    gets its own)."""
    client = cls("cid", secret, "sr", idp.url, "lsrc-1", 1, 1, 2, "pool-1")
    grant = client.client
    start = len(idp.grants)

    def call(method: Callable[[], Any]) -> Any:
        result = method()
        return asyncio.run(result) if asyncio.iscoroutine(result) else result

    def asked() -> int:
        return len(idp.grants) - start

    def given(token: Any) -> bool:
        return bool(idp.grants) and token == idp.grants[-1].token

    story: list[Any] = [
        (grant.client_id, grant.client_secret, grant.scope),
        (client.token_endpoint, client.logical_cluster, client.identity_pool, client.token, client.token_object),
        (client.max_retries, client.retries_wait_ms, client.retries_max_wait_ms, client.token_expiry_threshold),
        _outcome(client.token_expired),
    ]
    fields = _outcome(lambda: call(client.get_bearer_fields))
    story += [fields[0], asked()]
    if fields[0] == "error":
        failed = _outcome(lambda: call(client.generate_access_token))
        return [*story, failed, _outcome(lambda: call(client.fetch_token))[0], asked()]
    token = fields[1].pop("bearer.auth.token")
    story += [fields[1], given(token), client.token == token, client.token_object["access_token"] == token]
    story += [call(client.get_access_token) == token, asked(), client.token_expired()]
    fresh = call(client.fetch_token)
    story += [given(fresh), client.token == token, client.token_object["access_token"] == fresh, asked()]
    call(client.generate_access_token)
    story += [given(client.token), asked(), client.token_expired()]
    return story


@pytest.mark.parametrize("secret", ["csecret", "wrong"])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_oauth_client(secret: str, kind: str) -> None:
    ours, theirs = {
        "sync": (our_client._OAuthClient, their_client._OAuthClient),
        "async": (our_async_client._AsyncOAuthClient, their_async_client._AsyncOAuthClient),
    }[kind]
    with TokenEndpoint(None, "cid", "csecret", principal="sr-app") as idp:
        story = _oauth_story(ours, idp, secret)
        assert story == _oauth_story(theirs, idp, secret)
    assert story[4] == ("ok" if secret == "csecret" else "error")
    assert "csecret" not in repr(ours("cid", "csecret", "sr", idp.url, "lsrc-1", 0, 1, 2))
    base = {"sync": our_auth._BearerFieldProvider, "async": our_auth._AsyncBearerFieldProvider}[kind]
    assert isinstance(ours("cid", "csecret", "sr", idp.url, "lsrc-1", 0, 1, 2), base)


async def _fields_of(config: Any) -> Any:
    if config == "fail":
        raise RuntimeError("no token")
    return {"bearer.auth.token": "t", "config": config}


@pytest.mark.parametrize("config", [{"a": 1}, None, "fail", []])
@pytest.mark.parametrize("function", [_fields_of, _custom, None])
def test_async_custom_oauth_client(function: Any, config: Any) -> None:
    def fields(cls: Any) -> Any:
        provider = cls(function, config)
        fields = asyncio.run(provider.get_bearer_fields())
        return provider.custom_function is function, provider.custom_config, fields

    assert _outcome(lambda: fields(our_async_client._AsyncCustomOAuthClient)) == _outcome(
        lambda: fields(their_async_client._AsyncCustomOAuthClient)
    )


def test_oauth_azure_imds_client_failure() -> None:
    """The IMDS client's GET against an endpoint that answers none: the same error after retries."""
    with TokenEndpoint(None, "cid", "csecret", principal="sr-app") as idp:

        def attempt(module: Any) -> Any:
            client = module._OAuthAzureIMDSClient(idp.url, "lsrc-1", None, 1, 1, 2)
            return client.token_endpoint, _outcome(client.get_bearer_fields), _outcome(client.token_expired)

        assert attempt(our_auth) == attempt(their_client)


_REST_ATTRIBUTES = [
    "base_urls",
    "auth",
    "proxy",
    "timeout",
    "cache_capacity",
    "cache_latest_ttl_sec",
    "max_retries",
    "retries_wait_ms",
    "retries_max_wait_ms",
    "bearer_auth_credentials_source",
]


def _rest_base(cls: Any, conf: Any) -> Any:
    base = cls(conf)
    provider = base.bearer_field_provider
    return [getattr(base, name) for name in _REST_ATTRIBUTES] + [None if provider is None else type(provider).__name__]


@pytest.mark.parametrize(
    "conf",
    [
        {"url": "http://h:8081"},
        {"url": "https://a:1/, http://b:2/ "},
        {"url": "http://h", "basic.auth.user.info": "user:pa:ss", "timeout": 5, "proxy": "http://p:3128"},
        {"url": "http://h", "cache.capacity": 7, "cache.latest.ttl.sec": 2.5, "max.retries": 0},
        {"url": "http://h", "retries.wait.ms": 5, "retries.max.wait.ms": 50},
        {"url": "http://h", "bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": "t"}
        | {"bearer.auth.logical.cluster": "lsrc-1", "bearer.auth.identity.pool.id": "pool-1"},
        {"url": "http://h", "bearer.auth.credentials.source": "CUSTOM", "bearer.auth.custom.provider.function": _custom}
        | {"bearer.auth.custom.provider.config": {}},
        {},  # no url
        {"url": 5},
        {"url": "http://h", "colour": "blue"},
        {"url": "http://h", "basic.auth.user.info": "no-colon"},
        {"url": "http://u:p@h", "basic.auth.user.info": "a:b"},
        {"url": "http://h", "ssl.key.location": "/k.pem"},
        {"url": "http://h", "max.retries": "3"},
    ],
)
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_base_rest_client(conf: dict[str, Any], kind: str) -> None:
    """The registry configuration as confluent-kafka's ``_BaseRestClient`` parses it: the same
    attributes, or the same error class."""
    ours, theirs = {
        "sync": (our_client._BaseRestClient, their_client._BaseRestClient),
        "async": (our_async_client._AsyncBaseRestClient, their_async_client._AsyncBaseRestClient),
    }[kind]
    got, want = _outcome(lambda: _rest_base(ours, conf)), _outcome(lambda: _rest_base(theirs, conf))
    if kind == "async" and want[0] == "ok" and want[1][-1] is not None:
        # README "differs on purpose": the asyncio REST client's provider is the synchronous one
        # its requests use in worker threads (confluent-kafka's: the _Async twin)
        assert want[1][-1] == "_Async" + got[1][-1][1:]
        got, want = ("ok", got[1][:-1]), ("ok", want[1][:-1])
    assert got == want


@pytest.mark.parametrize(
    ("conf", "theirs"),
    [
        ({"url": "mock://x"}, ["mock://x"]),  # the in-process registry is SchemaRegistryClient.new_client's
        ({"url": "http://h", "max.retries": 2.9}, 2),  # confluent-kafka truncates; a count is an int
        ({"url": "http://h", "cache.capacity": True}, True),
    ],
)
def test_base_rest_client_refuses_what_differs_on_purpose(conf: dict[str, Any], theirs: Any) -> None:
    """README "differs on purpose": kafkawire refuses at construction what confluent-kafka's parse
    takes and gets wrong later, naming the key."""
    taken = their_client._BaseRestClient(conf)
    assert theirs in (taken.base_urls, taken.max_retries, taken.cache_capacity)
    with pytest.raises((TypeError, ValueError), match=r"url|max\.retries|cache\.capacity"):
        our_client._BaseRestClient(conf)


def test_base_rest_client_keeps_the_urls_password_out_of_base_urls() -> None:
    """confluent-kafka keeps ``http://user:secret@host`` in ``base_urls`` (and so in what prints
    it); kafkawire moves the credentials to ``auth``, as both send them."""
    conf = {"url": "http://user:secret@h:1/"}
    theirs, ours = their_client._BaseRestClient(conf), our_client._BaseRestClient(conf)
    assert theirs.base_urls == ["http://user:secret@h:1"] and ours.base_urls == ["http://h:1"]
    assert theirs.auth == ours.auth == ("user", "secret")


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_rest_client_calls(front: RegistryFront, kind: str) -> None:
    """``_RestClient``/``_AsyncRestClient`` against the tests' registry: the same answers (and
    errors) for the same calls, and the base classes' methods not implemented."""
    schema = {"schemaType": "AVRO", "schema": '"string"'}

    def story(module: Any, subject: str) -> list[Any]:
        cls = module._RestClient if kind == "sync" else module._AsyncRestClient
        client = cls({"url": front.url})

        def call(method: str, *args: Any) -> Any:
            if kind == "sync":
                return _outcome(lambda: getattr(client, method)(*args))
            return _outcome(lambda: asyncio.run(getattr(client, method)(*args)))

        out = [
            call("post", f"subjects/{subject}/versions", schema),
            call("get", f"subjects/{subject}/versions"),
            call("put", f"config/{subject}", {"compatibility": "NONE"}),
            call("get", "subjects/nothing-here/versions"),
            call("send_request", f"subjects/{subject}/versions/1", "GET"),
            call("delete", f"subjects/{subject}"),
        ]
        headers: dict[str, str] = {}
        out.append(call("handle_bearer_auth", headers))
        base = module._BaseRestClient if kind == "sync" else module._AsyncBaseRestClient
        bare = base({"url": front.url})
        if kind == "sync":
            out.append(_outcome(lambda: bare.get("subjects")))
            client.session.close()
        else:
            out.append(_outcome(lambda: asyncio.run(bare.get("subjects"))))
        return out

    theirs = story(their_client if kind == "sync" else their_async_client, "rest-theirs")
    ours = story(our_client if kind == "sync" else our_async_client, "rest-ours")
    assert [o if o[0] == "error" else ("ok", _renamed(o[1])) for o in ours] == [
        o if o[0] == "error" else ("ok", _renamed(o[1])) for o in theirs
    ]
    assert ours[0][0] == "ok" and ours[-1] == ("error", "NotImplementedError")


def _renamed(value: Any) -> Any:
    """An answer with the subject's name made neutral and its schema's id and guid left out (each
    client wrote its own subject to the one registry)."""
    value = json.loads(json.dumps(value).replace("rest-theirs", "S").replace("rest-ours", "S"))
    return {k: v for k, v in value.items() if k not in ("id", "guid")} if isinstance(value, dict) else value
