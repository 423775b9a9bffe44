"""The Schema Registry serde builders of each format and face, judged against confluent-kafka's: the
same setters on both, the serdes built, and the same record through them gives the same bytes (and
each side's deserializer reads them back alike), so every argument reaches its serde."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from confluent_kafka.schema_registry._async import avro as their_async_avro
from confluent_kafka.schema_registry._async import json_schema as their_async_json
from confluent_kafka.schema_registry._async import protobuf as their_async_protobuf
from confluent_kafka.schema_registry._sync import avro as their_avro
from confluent_kafka.schema_registry._sync import json_schema as their_json
from confluent_kafka.schema_registry._sync import protobuf as their_protobuf
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext

from kafkawire.schema_registry import SchemaRegistryClient
from kafkawire.schema_registry._async import avro as async_avro
from kafkawire.schema_registry._async import json_schema as async_json
from kafkawire.schema_registry._async import protobuf as async_protobuf
from kafkawire.schema_registry._sync import avro, json_schema, protobuf
from kafkawire.serialization import MessageField, SerializationContext
from tests.serde.registry_front import RegistryFront
from tests.serde.test_protobuf_interop import Address

CTX = SerializationContext("orders", MessageField.VALUE)
THEIR_CTX = TheirContext("orders", TheirField.VALUE)
AVRO = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
JSON = json.dumps({"type": "object", "title": "R", "properties": {"a": {"type": "integer"}}})


class _Box:
    def __init__(self, a: int) -> None:
        self.a = a

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Box) and other.a == self.a


def _to_dict(box: Any, ctx: Any) -> dict[str, Any]:
    return {"a": box.a}


def _from_dict(d: Any, ctx: Any) -> _Box:
    return _Box(d["a"])


def _pairs() -> list[tuple[str, Any, Any, Any, Any, Any, Any]]:
    """(name, our serializer builder, theirs, our deserializer builder, theirs, value, setters)."""
    avro_setters = {"schema": AVRO, "to_dict": _to_dict}
    json_setters = {"schema": JSON, "to_dict": _to_dict}
    proto_setters = {"message_type": Address}
    return [
        ("avro", avro.AvroSerializerBuilder, their_avro.AvroSerializerBuilder, avro.AvroDeserializerBuilder,
         their_avro.AvroDeserializerBuilder, _Box(3), avro_setters),
        ("json", json_schema.JSONSerializerBuilder, their_json.JSONSerializerBuilder, json_schema.JSONDeserializerBuilder,
         their_json.JSONDeserializerBuilder, _Box(4), json_setters),
        ("protobuf", protobuf.ProtobufSerializerBuilder, their_protobuf.ProtobufSerializerBuilder,
         protobuf.ProtobufDeserializerBuilder, their_protobuf.ProtobufDeserializerBuilder, Address(city="Oslo"), proto_setters),
    ]  # fmt: skip


def _set(builder: Any, setters: dict[str, Any]) -> Any:
    for name, value in setters.items():
        builder = getattr(builder, f"set_{name}")(value)
    return builder


@pytest.mark.parametrize("case", _pairs(), ids=lambda c: c[0])
def test_sync_builders_build_the_same_serdes(front: RegistryFront, case: Any) -> None:
    _name, ours_ser, theirs_ser, ours_de, theirs_de, value, setters = case
    conf = {"serializer_config": {"auto.register.schemas": True}}
    ser_setters = {**setters, **conf}
    ours, left = _set(
        ours_ser(), {**ser_setters, "schema_registry_client": SchemaRegistryClient({"url": front.url})}
    ).build({"x": 1}, False)
    theirs, their_left = _set(theirs_ser(), {**ser_setters, "schema_registry_client": front.registry}).build(
        {"x": 1}, False
    )
    assert left == their_left == {"x": 1}
    data = ours(value, CTX)
    assert data == theirs(value, THEIR_CTX)
    de_setters = {k.replace("to_dict", "from_dict"): (_from_dict if k == "to_dict" else v) for k, v in setters.items()}
    de_setters["deserializer_config"] = {}
    reader, _ = _set(
        ours_de(), {**de_setters, "schema_registry_client": SchemaRegistryClient({"url": front.url})}
    ).build({}, False)
    their_reader, _ = _set(theirs_de(), {**de_setters, "schema_registry_client": front.registry}).build({}, False)
    assert reader(data, CTX) == their_reader(data, THEIR_CTX) == value


ASYNC = [
    ("avro", async_avro.AsyncAvroSerializerBuilder, their_async_avro.AsyncAvroSerializerBuilder, {"schema": AVRO, "to_dict": _to_dict}, _Box(5)),
    ("json", async_json.AsyncJSONSerializerBuilder, their_async_json.AsyncJSONSerializerBuilder, {"schema": JSON, "to_dict": _to_dict}, _Box(6)),
    ("protobuf", async_protobuf.AsyncProtobufSerializerBuilder, their_async_protobuf.AsyncProtobufSerializerBuilder, {"message_type": Address}, Address(city="Rome")),
]  # fmt: skip


@pytest.mark.parametrize("case", ASYNC, ids=lambda c: c[0])
def test_async_builders_build_the_same_serdes(front: RegistryFront, case: Any) -> None:
    _name, ours_builder, theirs_builder, setters, value = case

    async def run() -> tuple[Any, Any]:
        ours, _ = await _set(ours_builder(), {**setters, "schema_registry_config": {"url": front.url}}).build({}, False)
        theirs, _ = await _set(theirs_builder(), {**setters, "schema_registry_config": {"url": front.url}}).build(
            {}, False
        )
        try:
            return await ours(value, CTX), await theirs(value, THEIR_CTX)
        finally:
            await ours.aclose()

    ours, theirs = asyncio.run(run())
    assert ours == theirs and ours is not None
