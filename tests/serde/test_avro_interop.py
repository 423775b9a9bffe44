"""Avro: our serializer's bytes equal confluent-kafka's for the same schema id, and each side
decodes the other's, through one registry (confluent's logic, behind registry_front.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirSerializer
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext

from kafkawire.schema_registry import (
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    header_schema_id_serializer,
    record_subject_name_strategy,
)
from kafkawire.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafkawire.serialization import MessageField, SerializationContext, SerializationError
from tests.serde.registry_front import RegistryFront

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "customer", "type": "string"},
            {"name": "amount", "type": "double"},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "attrs", "type": {"type": "map", "values": "int"}},
            {"name": "raw", "type": "bytes"},
        ],
    }
)
ORDERS: list[dict[str, Any]] = [
    {
        "id": i,
        "customer": f"c\u00e9{i}",
        "amount": i * 1.5,
        "tags": ["x"] * i,
        "note": None if i % 2 else "n",
        "kind": "AB"[i % 2],
        "attrs": {"k": i},
        "raw": bytes([i]),
    }
    for i in range(5)
]
CTX = SerializationContext("orders", MessageField.VALUE)
THEIR_CTX = TheirContext("orders", TheirField.VALUE)


def both(front: RegistryFront, schema: str = SCHEMA, conf: dict[str, Any] | None = None) -> tuple[Any, Any]:
    ours = AvroSerializer(SchemaRegistryClient({"url": front.url}), schema, conf=conf)
    theirs = TheirSerializer(front.registry, schema, conf=conf)
    return ours, theirs


def test_bytes_equal_and_cross_decoded(front: RegistryFront) -> None:
    ours, theirs = both(front)
    ours_de = AvroDeserializer(SchemaRegistryClient({"url": front.url}))
    theirs_de = TheirDeserializer(front.registry)
    for order in ORDERS:
        data = ours(order, CTX)
        assert data == theirs(order, THEIR_CTX)
        assert data is not None and data[0] == 0
        assert theirs_de(data, THEIR_CTX) == order
        assert ours_de(theirs(order, THEIR_CTX), CTX) == order


def test_primitive_and_key_subject(front: RegistryFront) -> None:
    ours, theirs = both(front, '"string"')
    key_ctx = SerializationContext("orders", MessageField.KEY)
    assert ours("k1", key_ctx) == theirs("k1", TheirContext("orders", TheirField.KEY))
    assert front.registry.get_subjects() == ["orders-key"]


def test_record_strategy_and_reader_schema_resolution(front: RegistryFront) -> None:
    conf = {"subject.name.strategy": record_subject_name_strategy}
    ours = AvroSerializer(SchemaRegistryClient({"url": front.url}), SCHEMA, conf=conf)
    data = ours(ORDERS[1], CTX)
    assert front.registry.get_subjects() == ["shop.Order"]
    reader = json.loads(SCHEMA)
    reader["fields"] = [f for f in reader["fields"] if f["name"] in ("id", "customer")]
    reader["fields"].append({"name": "extra", "type": "int", "default": 7})
    got = AvroDeserializer(SchemaRegistryClient({"url": front.url}), json.dumps(reader))(data, CTX)
    assert got == {"id": 1, "customer": "c\u00e91", "extra": 7}


def test_references_resolved_from_the_registry(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    kind = '{"type":"enum","name":"Kind","namespace":"shop","symbols":["A","B"]}'
    version = sr.register_schema_full_response("kind", Schema(kind, "AVRO")).version
    outer = '{"type":"record","name":"Item","namespace":"shop","fields":[{"name":"k","type":"shop.Kind"}]}'
    ref = Schema(outer, "AVRO", [SchemaReference("shop.Kind", "kind", version)])
    ours = AvroSerializer(sr, ref)
    theirs = TheirSerializer(front.registry, TheirSchema.from_dict(ref.to_dict()))
    assert ours({"k": "B"}, CTX) == theirs({"k": "B"}, THEIR_CTX)
    assert AvroDeserializer(sr)(ours({"k": "B"}, CTX), CTX) == {"k": "B"}


def test_a_union_of_referenced_records_at_the_top_level(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    refs = []
    for name, field in (("A", "x"), ("B", "y")):
        text = json.dumps(
            {"type": "record", "name": name, "namespace": "u", "fields": [{"name": field, "type": "int"}]}
        )
        refs.append(
            SchemaReference(f"u.{name}", name, sr.register_schema_full_response(name, Schema(text, "AVRO")).version)
        )
    union = Schema(json.dumps(["u.A", "u.B"]), "AVRO", refs)
    ours = AvroSerializer(sr, union)
    theirs = TheirSerializer(front.registry, TheirSchema.from_dict(union.to_dict()))
    for value in ({"x": 1}, {"y": 2}):
        data = ours(value, CTX)
        assert data == theirs(value, THEIR_CTX)
        assert AvroDeserializer(sr)(data, CTX) == value == TheirDeserializer(front.registry)(data, THEIR_CTX)


def test_a_union_with_a_record_that_uses_a_referenced_type_twice(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    b = json.dumps({"type": "record", "name": "B", "namespace": "w", "fields": [{"name": "s", "type": "string"}]})
    ref = SchemaReference("w.B", "wb", sr.register_schema_full_response("wb", Schema(b, "AVRO")).version)
    a = {
        "type": "record",
        "name": "A",
        "namespace": "w",
        "fields": [{"name": "f", "type": "B"}, {"name": "g", "type": "B"}],
    }
    union = Schema(json.dumps(["null", a]), "AVRO", [ref])
    value = {"f": {"s": "x"}, "g": {"s": "y"}}
    data = AvroSerializer(sr, union)(value, CTX)
    assert data == TheirSerializer(front.registry, TheirSchema.from_dict(union.to_dict()))(value, THEIR_CTX)
    assert AvroDeserializer(sr)(data, CTX) == value


@pytest.mark.parametrize("schema", ['"bytes"', '{"type": "bytes"}'])
def test_a_bytes_schema_writes_the_bytes_raw(front: RegistryFront, schema: str) -> None:
    """As Java's serializer and confluent-kafka: no Avro length prefix for a "bytes" value."""
    ours, theirs = both(front, schema)
    data = ours(b"\x02\x03\x04", CTX)
    assert data == theirs(b"\x02\x03\x04", THEIR_CTX)
    assert data is not None and data[5:] == b"\x02\x03\x04"
    assert AvroDeserializer(SchemaRegistryClient({"url": front.url}))(theirs(b"", THEIR_CTX), CTX) == b""
    assert TheirDeserializer(front.registry)(data, THEIR_CTX) == b"\x02\x03\x04"
    with pytest.raises(SerializationError, match="expected bytes"):
        ours("text", CTX)


@pytest.mark.parametrize(
    ("conf", "value", "refused"),
    [
        ({"validate.strict": True}, {"a": 1, "extra": 2}, True),
        ({"validate.strict": True}, {}, True),  # a missing field, even with a default
        ({"validate.strict.allow.default": True}, {}, False),
        ({"validate.strict.allow.default": True}, {"a": 1, "extra": 2}, True),
        ({}, {"a": 1, "extra": 2}, False),
        ({}, {}, False),  # not strict: the default is written
    ],
)
def test_strict_validation_refuses_as_confluent(
    front: RegistryFront, conf: dict[str, Any], value: Any, refused: bool
) -> None:
    """Refusals are SerializationError and the ValueError confluent-kafka raises (from fastavro)."""
    schema = json.dumps({"type": "record", "name": "S", "fields": [{"name": "a", "type": "int", "default": 0}]})
    ours, theirs = both(front, schema, conf)
    outcomes = []
    for ser, ctx in ((ours, CTX), (theirs, THEIR_CTX)):
        try:
            outcomes.append(ser(value, ctx))
        except ValueError as e:
            outcomes.append(type(e).__mro__[1].__name__ if ser is ours else "refused")
    if refused:
        assert outcomes == ["SerializationError", "refused"]
    else:
        assert outcomes[0] == outcomes[1]


def test_guid_in_header_read_by_confluent(front: RegistryFront) -> None:
    ours = AvroSerializer(
        SchemaRegistryClient({"url": front.url}), SCHEMA, conf={"schema.id.serializer": header_schema_id_serializer}
    )
    ctx = SerializationContext("orders", MessageField.VALUE, [])
    data = ours(ORDERS[2], ctx)
    assert ctx.headers[0][0] == "__value_schema_id" and ctx.headers[0][1][0] == 1
    assert TheirDeserializer(front.registry)(data, TheirContext("orders", TheirField.VALUE, ctx.headers)) == ORDERS[2]


def test_bad_payloads_are_serialization_errors(front: RegistryFront) -> None:
    ours, _ = both(front)
    good = ours(ORDERS[3], CTX)
    assert good is not None
    de = AvroDeserializer(SchemaRegistryClient({"url": front.url}))
    for bad in [b"\x07" + good[1:], good[:3], good[:-3], b"\x00\x00\x00\x03\xe7" + good[5:]]:
        with pytest.raises(SerializationError):
            de(bad, CTX)
    with pytest.raises(SerializationError):
        ours({"id": "not a long"}, CTX)


def test_auto_register_off_looks_up_and_use_latest_writes_the_latest(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    lookup_only = AvroSerializer(sr, SCHEMA, conf={"auto.register.schemas": False})
    with pytest.raises(Exception, match=r"not found|Not Found"):
        lookup_only(ORDERS[0], CTX)
    theirs = both(front)[1]
    theirs(ORDERS[0], THEIR_CTX)
    assert lookup_only(ORDERS[0], CTX) == theirs(ORDERS[0], THEIR_CTX)
    latest = AvroSerializer(sr, None, conf={"auto.register.schemas": False, "use.latest.version": True})
    assert latest(ORDERS[0], CTX) == theirs(ORDERS[0], THEIR_CTX)


def test_a_five_byte_payload_decodes(front: RegistryFront) -> None:
    """An empty record's payload is the 5-byte framing alone: ours reads it; confluent-kafka's
    AvroDeserializer refuses any payload of 5 bytes or fewer (a judge's quirk, contributing/judges.md)."""
    empty = '{"type":"record","name":"Empty","fields":[]}'
    data = AvroSerializer(SchemaRegistryClient({"url": front.url}), empty)({}, CTX)
    assert data is not None and len(data) == 5
    assert AvroDeserializer(SchemaRegistryClient({"url": front.url}))(data, CTX) == {}
    with pytest.raises(Exception, match=r"5 bytes|framing"):
        TheirDeserializer(front.registry)(data, THEIR_CTX)


def test_later_records_take_the_ready_framing_and_ask_the_registry_nothing(front: RegistryFront) -> None:
    """After a (topic, key or value)'s first record, the serializer writes the cached framing and
    fastavro's body: each place keeps its own subject's id, the body stays confluent-kafka's, no
    request is made, and refusals stay SerializationErrors that leave the next record unharmed."""
    ours, theirs = both(front, conf={"validate.strict": True})
    places = [("orders", MessageField.VALUE), ("orders", MessageField.KEY), ("refunds", MessageField.VALUE)]
    for topic, field in places:
        ours(ORDERS[0], SerializationContext(topic, field))
    asked = len(front.requests)
    for _ in range(2):
        for topic, field in places:
            schema_id = front.registry.get_latest_version(f"{topic}-{field.value}").schema_id
            for order in ORDERS:
                data = ours(order, SerializationContext(topic, field))
                assert data is not None and data[:5] == b"\x00" + schema_id.to_bytes(4, "big")
                assert data[5:] == theirs(order, THEIR_CTX)[5:]  # type: ignore[index]
    assert len(front.requests) == asked  # (theirs asks confluent's registry in-process, not over HTTP)
    with pytest.raises(SerializationError) as refused:
        ours({**ORDERS[1], "extra": 1}, CTX)
    assert isinstance(refused.value, ValueError)
    with pytest.raises(SerializationError):
        ours({"id": "not a long"}, CTX)
    assert ours(ORDERS[4], CTX) == theirs(ORDERS[4], THEIR_CTX)


def test_payloads_of_a_seen_schema_id_decode_and_fail_as_before(front: RegistryFront) -> None:
    """Once a schema id was read, its payloads go straight to fastavro: still equal objects,
    truncated ones still SerializationErrors, other ids and header framing still looked up."""
    theirs = both(front)[1]
    de = AvroDeserializer(SchemaRegistryClient({"url": front.url}))
    datas = [theirs(order, THEIR_CTX) for order in ORDERS]
    for _ in range(2):
        assert [de(d, CTX) for d in datas] == ORDERS
    assert [de(bytearray(d), CTX) for d in datas] == [de(memoryview(d), CTX) for d in datas] == ORDERS  # type: ignore[arg-type]
    asked = len(front.requests)
    for bad in [datas[3][:-3], datas[3][:6], b"\x00" + datas[3][1:5]]:  # type: ignore[index]
        with pytest.raises(SerializationError):
            de(bad, CTX)
    assert len(front.requests) == asked
    other = json.dumps({"type": "record", "name": "Other", "fields": [{"name": "n", "type": "int"}]})
    assert de(both(front, other)[1]({"n": 7}, TheirContext("other", TheirField.VALUE)), CTX) == {"n": 7}
    by_header = AvroSerializer(
        SchemaRegistryClient({"url": front.url}), SCHEMA, conf={"schema.id.serializer": header_schema_id_serializer}
    )
    ctx = SerializationContext("orders", MessageField.VALUE, [])
    assert de(by_header(ORDERS[1], ctx), ctx) == ORDERS[1]
