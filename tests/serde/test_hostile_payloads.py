"""Whatever bytes arrive, the deserializers raise SerializationError (or return a value), never
another exception: a hostile or corrupt record fails that record, not the consumer."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkawire.schema_registry import Schema, SchemaRegistryClient
from kafkawire.schema_registry.avro import AvroDeserializer
from kafkawire.schema_registry.json_schema import JSONDeserializer
from kafkawire.serialization import MessageField, SerializationContext, SerializationError

AVSC = json.dumps(
    {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "s", "type": "string"},
            {"name": "a", "type": {"type": "array", "items": "long"}},
            {"name": "m", "type": {"type": "map", "values": "bytes"}},
            {"name": "u", "type": ["null", "double", {"type": "fixed", "name": "F", "size": 4}]},
        ],
    }
)
JSONS = json.dumps({"type": "object", "properties": {"x": {"type": "integer"}}})
REGISTRY = SchemaRegistryClient.new_client({"url": "mock://hostile"})
AVRO_ID = REGISTRY.register_schema("h-value", Schema(AVSC, "AVRO"))
JSON_ID = REGISTRY.register_schema("j-value", Schema(JSONS, "JSON"))
CTX = SerializationContext("h", MessageField.VALUE)


def _header(schema_id: int) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big")


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(body=st.binary(max_size=64), framed=st.booleans())
def test_avro_random_bodies(body: bytes, framed: bool) -> None:
    data = _header(AVRO_ID) + body if framed else body
    try:
        AvroDeserializer(REGISTRY)(data, CTX)
    except SerializationError:
        pass


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=64))
def test_json_random_bodies(body: bytes) -> None:
    try:
        JSONDeserializer(None, schema_registry_client=REGISTRY)(_header(JSON_ID) + body, CTX)
    except SerializationError:
        pass


def test_huge_declared_lengths_fail_fast() -> None:
    # A string claiming ~2^62 bytes, an array claiming ~2^62 items: refused, nothing allocated.
    huge = b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f"
    for body in (huge, b"\x00" + huge, b"\x00\x00" + huge):
        try:
            AvroDeserializer(REGISTRY)(_header(AVRO_ID) + body, CTX)
        except SerializationError:
            pass
