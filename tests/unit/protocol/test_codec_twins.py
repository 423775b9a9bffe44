"""The protocol codec's two twins against each other: the C interpreter (native_c/protocol_codec.c)
and the closures compiled from the same plan (codec.py, decoding.py).

Every API's request and response at every version, its defaults and random values, encode to the
same bytes and decode to the same structs (keys in the same order, the same types); damaged bytes
(cut anywhere, bytes flipped, huge counts and lengths) and spent budgets fail the same way through
`codec.decode_from`, leaving the budget as the other twin leaves it.
"""

from __future__ import annotations

import math
import os
import random
import types
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kafkawire.native import native
from kafkawire.protocol import codec, decoding
from kafkawire.protocol.apis import ALL_APIS, API_VERSIONS, CONSUMER_GROUP_HEARTBEAT, FETCH, METADATA, PRODUCE
from kafkawire.protocol.frame import SPLICE_MIN, Frame
from kafkawire.protocol.plan import message_plan
from kafkawire.protocol.primitives import DecodeBudget, DecodeError
from kafkawire.protocol.schema import Array, Field, MessageSchema
from kafkawire.protocol.values import Struct, UnsupportedFieldError, default_value
from tests.unit.protocol.test_codec_budget import metadata_body

pytestmark = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)

SCHEMAS = [
    (schema, v)
    for api in ALL_APIS
    for schema in (api.request, api.response)
    for v in range(api.min_version, api.max_version + 1)
]
TWINS = ("python", "c")


def _compiled(which: str, schema: MessageSchema, version: int) -> tuple[Any, Any]:
    plan = message_plan(schema, version)
    if which == "python":
        return codec._struct_encoder(plan), decoding.struct_decoder(plan)
    return codec._compile(plan)


@contextmanager
def twin(which: str, schema: MessageSchema, version: int) -> Iterator[None]:
    """``codec``'s entry points running one twin's encoder and decoder of (schema, version)."""
    key = (id(schema), version)
    saved = codec._PLANS.get(key)
    codec._PLANS[key] = (schema, *_compiled(which, schema, version))
    try:
        yield
    finally:
        if saved is None:
            del codec._PLANS[key]
        else:
            codec._PLANS[key] = saved


def shape(value: Any) -> Any:
    """A value with its types and its keys' order made comparable (a Struct is not a dict)."""
    if isinstance(value, dict):
        return (type(value).__name__, [(k, shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [shape(v) for v in value])
    if isinstance(value, memoryview):
        return ("memoryview", bytes(value))
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


def decode_both(
    schema: MessageSchema, version: int, data: Any, budget: Callable[[], DecodeBudget | None] = lambda: None
) -> list[tuple[Any, ...]]:
    """Each twin's outcome of codec.decode_from: the struct and its end, or the error's class; and
    what it left of its budget."""
    results = []
    for which in TWINS:
        spent = budget()
        with twin(which, schema, version):
            try:
                obj, end = codec.decode_from(schema, version, data, 0, spent)
                result: tuple[Any, ...] = ("ok", shape(obj), end)
            except Exception as exc:  # the class is compared (the text is not always the codec's own)
                result = ("raised", type(exc), None)
        results.append((*result, None if spent is None else spent.remaining))
    return results


def encode_both(schema: MessageSchema, version: int, value: Any, out: type[bytearray] = bytearray) -> list[Any]:
    """Each twin's bytes of ``value``, or the class of its error."""
    results: list[Any] = []
    for which in TWINS:
        buf = out()
        try:
            _compiled(which, schema, version)[0](buf, value)
            results.append(("ok", bytes(buf)))
        except Exception as exc:
            results.append(("raised", type(exc)))
    return results


# --- random values of a schema ------------------------------------------------------------------

TEXTS = ["", "a", "topic-1", "é", "日本語", "\U0001f600 x", "ü" * 40]
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
}


def random_primitive(rng: random.Random, type_: str) -> Any:
    if type_ in INT_RANGES:
        lo, hi = INT_RANGES[type_]
        return rng.choice([lo, hi, 0, -1 if lo else 1, rng.randint(lo, hi)])
    if type_ == "float64":
        return rng.choice([0.0, -0.0, 1.5, math.inf, -math.inf, rng.uniform(-1e300, 1e300)])
    if type_ == "bool":
        return rng.random() < 0.5
    if type_ == "uuid":
        u = uuid.UUID(int=rng.getrandbits(128))
        return u if rng.random() < 0.8 else u.bytes  # encoding takes bytes too
    if type_ == "string":
        return rng.choice(TEXTS)
    raw = rng.randbytes(rng.choice([0, 1, 7, 24]))
    return rng.choice([raw, raw, bytearray(raw), memoryview(raw)])


def random_value(rng: random.Random, fld: Field, version: int) -> Any:
    if version in fld.nullable and rng.random() < 0.25:
        return None
    t = fld.type
    if isinstance(t, Array):
        n = rng.choice([0, 1, 2, 3])
        if isinstance(t.of, tuple):
            return [random_struct(rng, t.of, version) for _ in range(n)]
        return [random_primitive(rng, str(t.of)) for _ in range(n)]
    if isinstance(t, tuple):
        return random_struct(rng, t, version)
    return random_primitive(rng, t)


def random_struct(rng: random.Random, fields: tuple[Field, ...], version: int) -> Any:
    """Fields of the version drawn (a tagged one left out or at its default half the time); the
    others left out or at their default; as a Struct, a dict, or another mapping."""
    value: dict[str, Any] = {}
    for fld in fields:
        if version in fld.versions and (fld.tag is None or rng.random() < 0.5):
            value[fld.name] = random_value(rng, fld, version)
        elif rng.random() < 0.3:
            value[fld.name] = default_value(fld)
    choice = rng.random()
    if choice < 0.4:
        return Struct(value)
    return value if choice < 0.9 else types.MappingProxyType(value)


# --- every API, every version -------------------------------------------------------------------


def test_the_extension_is_built_where_it_is_required() -> None:
    assert native is not None, "kafkawire._native did not build (or KAFKAWIRE_PURE_PYTHON is set)"


@pytest.mark.parametrize(("schema", "version"), SCHEMAS, ids=lambda x: getattr(x, "name", str(x)))
def test_both_twins_encode_and_decode_alike(schema: MessageSchema, version: int) -> None:
    rng = random.Random(f"{schema.name}{version}")
    values = [None, {}, *(random_struct(rng, schema.fields, version) for _ in range(6))]
    for value in values:
        python, c = encode_both(schema, version, value)
        assert python == c
        assert python[0] == "ok", python
        data = python[1]
        for buf in (data, memoryview(data), bytearray(data)):
            python_decoded, c_decoded = decode_both(schema, version, buf)
            assert python_decoded == c_decoded
            assert python_decoded[0] == "ok" and python_decoded[2] == len(data)


def test_decoding_starts_where_it_is_told() -> None:
    data = codec.encode(PRODUCE.response, 9, {"responses": [{"name": "t", "partition_responses": [{"index": 3}]}]})
    framed = b"\x01\x02\x03" + data + b"\x09"
    for which in TWINS:
        decode = _compiled(which, PRODUCE.response, 9)[1]
        obj, end = decode(framed, 3, DecodeBudget())
        assert end == 3 + len(data) and obj.responses[0].partition_responses[0].index == 3


# --- encoding errors ----------------------------------------------------------------------------

BAD_VALUES = [
    {"acks": 1 << 15},  # int16 out of range
    {"acks": "1"},
    {"acks": 1.0},
    {"timeout_ms": 1 << 31},
    {"timeout_ms": -(1 << 70)},
    {"topic_data": None},  # not nullable
    {"topic_data": [{"name": None}]},
    {"topic_data": [{"name": b"bytes, not str"}]},
    {"topic_data": [{"name": "\udc80"}]},  # not encodable
    {"topic_data": [{"name": "x" * 40_000}]},  # past an int16 length
    {"topic_data": [{"partition_data": [{"records": "str"}]}]},
    {"topic_data": [{"partition_data": [{"records": 5}]}]},
    {"topic_data": [{"partition_data": [None]}]},  # a struct given None: its defaults
    {"topic_data": 5},
    {"topic_data": [5]},
    {"transactional_id": 7},
]


@pytest.mark.parametrize("value", BAD_VALUES, ids=repr)
@pytest.mark.parametrize("version", [3, 8, 9, 12])
def test_both_twins_refuse_the_same_values(value: dict[str, Any], version: int) -> None:
    python, c = encode_both(PRODUCE.request, version, value)
    assert python == c


def test_absent_and_null_fields_raise_the_same_message() -> None:
    for schema, version, value in [
        (PRODUCE.request, 2, {"transactional_id": "tx"}),  # a field of v3+
        (METADATA.request, 3, {"allow_auto_topic_creation": False}),
        (PRODUCE.request, 9, {"topic_data": None}),
        (METADATA.request, 0, {"topics": None}),
    ]:
        messages = []
        for which in TWINS:
            with pytest.raises(UnsupportedFieldError) as caught:
                _compiled(which, schema, version)[0](bytearray(), value)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]


def test_a_tagged_field_is_written_only_when_it_differs_from_its_default() -> None:
    value = {"responses": [{"name": "t", "partition_responses": [{"index": 0}]}]}
    leader = {"leader_id": 2, "leader_epoch": 5}
    value["responses"][0]["partition_responses"][0]["current_leader"] = leader
    python, c = encode_both(PRODUCE.response, 10, value)
    assert python == c and python[0] == "ok"
    plain = codec.encode(PRODUCE.response, 10, {"responses": [{"name": "t", "partition_responses": [{"index": 0}]}]})
    assert len(python[1]) > len(plain)


# --- splicing into a Frame ----------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 80, SPLICE_MIN - 1, SPLICE_MIN, 3 * SPLICE_MIN])
def test_records_are_spliced_into_a_frame_alike(size: int) -> None:
    records = [bytes([i]) * size for i in range(2)]
    value = {
        "acks": -1,
        "topic_data": [{"name": "t", "partition_data": [{"index": i, "records": r} for i, r in enumerate(records)]}],
    }
    frames = []
    for which in TWINS:
        frame = Frame(4)
        frame.extend(b"head")
        _compiled(which, PRODUCE.request, 9)[0](frame, value)
        frames.append(frame)
    python, c = frames
    assert bytes(python) == bytes(c) and python.joined() == c.joined()
    assert [(pos, id(data)) for pos, data in python.refs] == [(pos, id(data)) for pos, data in c.refs]
    assert len(c.refs) == (2 if size >= SPLICE_MIN else 0) and c.referenced == python.referenced


# --- damaged bytes and spent budgets ------------------------------------------------------------


def _metadata() -> dict[str, Any]:
    """Three brokers (one with a rack: a nullable string both ways), two topics of four partitions."""
    body = metadata_body(3, topics=2, partitions=4)
    body["brokers"][1]["rack"] = "r"  # type: ignore[index]
    return body


def _damageable() -> list[tuple[MessageSchema, int, bytes]]:
    fetch = {
        "responses": [{"topic": "t", "partitions": [{"partition_index": p, "records": b"r" * 30} for p in range(3)]}]
    }
    heartbeat = {
        "member_id": "m",
        "assignment": {"topic_partitions": [{"topic_id": uuid.UUID(int=9), "partitions": [0, 1, 2]}]},
    }
    produce = {
        "responses": [
            {
                "name": "t",
                "partition_responses": [
                    {"index": 0, "record_errors": [{"batch_index": 1, "batch_index_error_message": "é"}]},
                    {"index": 1, "current_leader": {"leader_id": 1, "leader_epoch": 2}},
                ],
            }
        ]
    }
    versions = {"api_keys": [{"api_key": k, "max_version": 9} for k in range(5)], "finalized_features_epoch": 3}
    cases = [
        (METADATA.response, 1, _metadata()),
        (METADATA.response, 9, _metadata()),
        (METADATA.response, 12, _metadata()),
        (FETCH.response, 4, fetch),
        (FETCH.response, 12, fetch),
        (PRODUCE.response, 9, produce),
        (PRODUCE.response, 10, produce),
        (CONSUMER_GROUP_HEARTBEAT.response, 0, heartbeat),
        (API_VERSIONS.response, 3, versions),
    ]
    return [(schema, v, codec.encode(schema, v, value)) for schema, v, value in cases]


DAMAGEABLE = _damageable()


def _assert_alike(schema: MessageSchema, version: int, data: Any, **budget: Any) -> None:
    make = (lambda: DecodeBudget(**budget)) if budget else (lambda: None)
    python, c = decode_both(schema, version, data, make)
    assert python == c, (schema.name, version, bytes(data).hex())
    if python[0] == "raised":
        assert issubclass(python[1], DecodeError)


@pytest.mark.parametrize(("schema", "version", "data"), DAMAGEABLE, ids=lambda x: getattr(x, "name", ""))
def test_every_truncation_fails_alike(schema: MessageSchema, version: int, data: bytes) -> None:
    for end in range(len(data) + 1):
        _assert_alike(schema, version, data[:end])
        _assert_alike(schema, version, memoryview(data)[:end])


@pytest.mark.parametrize(("schema", "version", "data"), DAMAGEABLE, ids=lambda x: getattr(x, "name", ""))
def test_flipped_bytes_and_huge_counts_fail_alike(schema: MessageSchema, version: int, data: bytes) -> None:
    rng = random.Random(f"{schema.name}{version}")
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 4])):
            at = rng.randrange(len(damaged))
            kind = rng.random()
            if kind < 0.5:
                damaged[at] = rng.randrange(256)
            elif kind < 0.7:  # a count or length, as large as its bytes can say
                damaged[at : at + 4] = rng.choice([b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f"])
            elif kind < 0.85:  # a long varint
                damaged[at:at] = b"\xff" * rng.randrange(1, 12)
            else:
                damaged[at:at] = bytes([rng.randrange(256)])
        _assert_alike(schema, version, bytes(damaged))


@pytest.mark.parametrize(("schema", "version", "data"), DAMAGEABLE, ids=lambda x: getattr(x, "name", ""))
def test_budgets_and_count_limits_are_spent_alike(schema: MessageSchema, version: int, data: bytes) -> None:
    for limit in [0, 1, 50, 100, 300, 1000, 3000, 10_000]:
        _assert_alike(schema, version, data, limit=limit)
    paths = ["brokers", "topics", "topics.partitions", "responses", "responses.partitions", "api_keys"]
    paths += ["responses.partition_responses", "assignment.topic_partitions", "nothing"]
    for path in paths:
        for most in [0, 1, 2, 3]:
            _assert_alike(schema, version, data, limit=1 << 30, counts={path: most})


def test_unknown_tags_are_skipped_and_stray_bytes_refused_alike() -> None:
    schema, version = API_VERSIONS.response, 3
    head = codec.encode(schema, version, {"api_keys": []})[:-1]  # without its tagged fields' count
    epoch = (5).to_bytes(8, "big")
    for tail in [
        b"\x00",
        b"\x01\x01\x08" + epoch,  # finalized_features_epoch
        b"\x02\x01\x08" + epoch + b"\x7f\x02ab",  # then an unknown tag
        b"\x01\x01\x09" + epoch + b"\x00",  # a byte to spare
        b"\x01\x01\x07" + epoch,  # a byte short
        b"\x01\x81\x80\x80\x80\x80\x80\x80\x80\x80\x02\x08" + epoch,  # a tag past 64 bits (1 + 2**64)
        b"\x01\x81\x80\x80\x80\x80\x80\x80\x80\x80\x01\x08" + epoch,  # 1 + 2**63: unknown
        b"\x81\x80\x80\x80\x80\x80\x80\x80\x80\x7f\x00\x00",  # a count past 64 bits
        b"\x01\x01\xff\xff\xff\xff\x0f",  # a size past the end
        b"\x01\x01\x88\x80\x80\x80\x80\x80\x80\x80\x80\x02" + epoch,  # a size past 64 bits
        b"\x01\x01\x88\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00" + epoch,  # a varint past 10 bytes
    ]:
        _assert_alike(schema, version, head + tail)


def test_strings_of_bad_utf8_fail_alike() -> None:
    data = codec.encode(METADATA.response, 9, _metadata())
    at = data.index(b"topic-0")
    for bad in [b"\xff", b"\xc3", b"\xed\xa0\x80"]:  # not UTF-8, cut short, a surrogate
        damaged = data[:at] + bad + data[at + len(bad) :]
        _assert_alike(METADATA.response, 9, damaged)
        with pytest.raises(DecodeError, match="malformed"):
            codec.decode_from(METADATA.response, 9, damaged)
