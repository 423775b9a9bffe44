"""Byte-for-byte agreement with an independent implementation: kafka-python 3's JSON-driven messages.

For every API, direction and version that both sides implement, a few hypothesis-generated values
(tests/harness/strategies.py) are each built twice: as our `Struct` and, through a converter driven
by OUR schema (no per-API code), as kafka-python message objects. The bodies must encode to the same
bytes, whole messages (header included) too, and kafka-python must decode our bytes back to the
same value. Anything kafka-python does not implement is reported as skipped, never passed silently.

Two representation differences of kafka-python are bridged generically, by its field types:
- fields it patches to a ``bitfield`` (authorized operations) hold a set of bit numbers, not an int32;
- an absent tagged field reads as kafka-python's own default, which for uuids is None (Kafka's, and
  ours, is the zero uuid), so a tagged field holding our default is simply not passed to it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from kafkawire.protocol import codec, headers
from kafkawire.protocol.apis import ALL_APIS
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api, Array, Field, MessageSchema
from tests.harness.strategies import _struct

_NULL_BITFIELD = -(2**31)  # kafka-python's None bitfield is bit 31 alone

# kafka-python loads its JSON through deprecated importlib.resources calls
pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated. Use files\\(\\) instead:DeprecationWarning")


@cache
def _kafka_python_classes() -> dict[str, Any]:
    """kafka-python's primary message classes by spec name (``"ProduceRequest"``); empty if too old."""
    try:
        api_message = importlib.import_module("kafka.protocol.api_message")
    except ImportError:
        return {}
    protocol = importlib.import_module("kafka.protocol")
    for mod in pkgutil.walk_packages(protocol.__path__, "kafka.protocol."):
        if ".old" in mod.name or mod.name.endswith(("generate_stubs", "__main__")):
            continue
        try:
            importlib.import_module(mod.name)
        except ImportError:
            continue
    found: dict[str, Any] = {}
    todo = list(api_message.ApiMessage.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if getattr(cls, "_class_version", None) is None and getattr(cls, "_json", None) is not None:
            found.setdefault(cls.name, cls)
    return found


def _kafka_decode(kcls: Any, data: bytes, version: int) -> Any:
    base = importlib.import_module("kafka.protocol.api_message").ApiMessage
    return base.decode.__func__(kcls, data, version=version)


def _bitfield_type() -> Any:
    return importlib.import_module("kafka.protocol.schemas.fields.codecs").BitField


# --- our values -> kafka-python objects ---------------------------------------------------------


def _is_tagged(fld: Field, version: int, flexible: bool) -> bool:
    return flexible and fld.tag is not None and version in fld.tagged


def _check_shape(fields: tuple[Field, ...], kfields: tuple[Any, ...], where: str) -> None:
    """Both sides describe the same JSON spec, so fields pair up by position; check the kinds agree."""
    assert len(fields) == len(kfields), f"{where}: {len(fields)} fields here, {len(kfields)} in kafka-python"
    for fld, kf in zip(fields, kfields, strict=True):
        kind = "array" if isinstance(fld.type, Array) else "struct" if isinstance(fld.type, tuple) else "primitive"
        theirs = "array" if kf.is_array() else "struct" if kf.is_struct() else "primitive"
        assert kind == theirs, f"{where}.{fld.name}: {kind} here, {theirs} in kafka-python ({kf.name})"


def _primitive_to_kafka(value: Any, kf: Any) -> Any:
    if getattr(kf, "_type", None) is _bitfield_type():
        if value is None or value == _NULL_BITFIELD:
            return None
        bits = value & 0xFFFFFFFF
        return {i for i in range(32) if bits >> i & 1}
    return value


def _to_kafka_fields(
    value: Any, fields: tuple[Field, ...], kfields: tuple[Any, ...], version: int, flexible: bool, where: str
) -> dict[str, Any]:
    _check_shape(fields, kfields, where)
    kwargs: dict[str, Any] = {}
    for fld, kf in zip(fields, kfields, strict=True):
        if version not in fld.versions:
            continue
        item = value.get(fld.name, codec.default_struct((fld,))[fld.name])
        if _is_tagged(fld, version, flexible) and item == codec.default_struct((fld,))[fld.name]:
            continue
        kwargs[kf.name] = _value_to_kafka(item, fld, kf, version, flexible, f"{where}.{fld.name}")
    return kwargs


def _value_to_kafka(item: Any, fld: Field, kf: Any, version: int, flexible: bool, where: str) -> Any:
    t = fld.type
    if item is None and isinstance(t, (Array, tuple)):
        return None
    if isinstance(t, Array):
        if isinstance(t.of, tuple):
            sub = tuple(kf.array_of._fields)
            return [kf.data_class(**_to_kafka_fields(x, t.of, sub, version, flexible, where)) for x in item]
        return [_primitive_to_kafka(x, kf.array_of) for x in item]
    if isinstance(t, tuple):
        return kf.data_class(**_to_kafka_fields(item, t, tuple(kf._fields), version, flexible, where))
    return _primitive_to_kafka(item, kf)


def _to_kafka(kcls: Any, schema: MessageSchema, version: int, value: Struct) -> Any:
    flexible = version in schema.flexible
    kwargs = _to_kafka_fields(value, schema.fields, tuple(kcls._struct._fields), version, flexible, schema.name)
    return kcls[version](**kwargs)


# --- kafka-python objects -> our values ---------------------------------------------------------


def _primitive_from_kafka(value: Any, kf: Any) -> Any:
    if getattr(kf, "_type", None) is _bitfield_type():
        if value is None:
            return _NULL_BITFIELD
        bits = sum(1 << i for i in value)
        return bits - (1 << 32) if bits & 0x80000000 else bits
    if isinstance(value, (memoryview, bytearray)):
        return bytes(value)
    return value


def _from_kafka_fields(
    obj: Any, fields: tuple[Field, ...], kfields: tuple[Any, ...], version: int, flexible: bool
) -> Struct:
    present_tags = obj.tags or set()
    out = Struct()
    for fld, kf in zip(fields, kfields, strict=True):
        if version not in fld.versions or (_is_tagged(fld, version, flexible) and kf.name not in present_tags):
            out[fld.name] = codec.default_struct((fld,))[fld.name]
        else:
            out[fld.name] = _value_from_kafka(getattr(obj, kf.name), fld, kf, version, flexible)
    return out


def _value_from_kafka(item: Any, fld: Field, kf: Any, version: int, flexible: bool) -> Any:
    t = fld.type
    if item is None and isinstance(t, (Array, tuple)):
        return None
    if isinstance(t, Array):
        if isinstance(t.of, tuple):
            sub = tuple(kf.array_of._fields)
            return [_from_kafka_fields(x, t.of, sub, version, flexible) for x in item]
        return [_primitive_from_kafka(x, kf.array_of) for x in item]
    if isinstance(t, tuple):
        return _from_kafka_fields(item, t, tuple(kf._fields), version, flexible)
    return _primitive_from_kafka(item, kf)


def _from_kafka(obj: Any, kcls: Any, schema: MessageSchema, version: int) -> Struct:
    flexible = version in schema.flexible
    return _from_kafka_fields(obj, schema.fields, tuple(kcls._struct._fields), version, flexible)


# --- the test -----------------------------------------------------------------------------------

CASES = [
    (api, direction, version)
    for api in ALL_APIS
    for direction in ("request", "response")
    for version in range(api.min_version, api.max_version + 1)
]


def _encode_whole(api: Api, direction: str, version: int, value: Struct) -> bytes:
    if direction == "request":
        return headers.encode_request(api, version, 7, "kafkawire-test", value)
    return headers.encode_response(api, version, 7, value)


@pytest.mark.parametrize(
    "api,direction,version", CASES, ids=[f"{a.name}-{d}-v{v}" for a, d, v in CASES]
)  # fmt: skip
def test_bytes_match_kafka_python(api: Api, direction: str, version: int) -> None:
    schema: MessageSchema = getattr(api, direction)
    kcls = _kafka_python_classes().get(schema.name)
    if kcls is None:
        pytest.skip(f"kafka-python (installed version) has no JSON-based {schema.name}")
    lo, hi = kcls.valid_versions
    if not lo <= version <= hi:
        pytest.skip(f"kafka-python implements {schema.name} v{lo}-{hi} only, not v{version}")
    flexible = version in schema.flexible

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(_struct(schema.fields, version, flexible))
    def check(value: Struct) -> None:
        ours = codec.encode(schema, version, value)
        theirs = _to_kafka(kcls, schema, version, value)
        assert theirs.encode(version=version) == ours, "body bytes differ"
        theirs.with_header(correlation_id=7, client_id="kafkawire-test")
        # no version= here: kafka-python's version setter fails once a response header is attached
        assert theirs.encode(header=True) == _encode_whole(api, direction, version, value), (
            "whole-message (header + body) bytes differ"
        )
        # ApiMessage's own decode: a class's override may apply client policy (kafka-python reads any
        # failed ApiVersions response as v0) rather than the wire format compared here
        decoded = _kafka_decode(kcls, ours, version)
        assert _from_kafka(decoded, kcls, schema, version) == value, "kafka-python decodes our bytes differently"

    check()
