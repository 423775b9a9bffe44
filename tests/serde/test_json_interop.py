"""JSON Schema: our bytes equal confluent-kafka's for the same schema id, each side reads the
other's, values are validated (references resolved from the registry)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as TheirSchema
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as TheirDeserializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as TheirSerializer
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext

from kafkawire.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from kafkawire.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from kafkawire.serialization import MessageField, SerializationContext, SerializationError
from tests.serde.registry_front import RegistryFront

SCHEMA = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Order",
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "customer": {"type": "string"},
            "amount": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["id", "customer"],
    }
)
ORDERS = [{"id": i, "customer": f"c\u00e9{i}", "amount": i / 3, "tags": ["t"] * i} for i in range(4)]
CTX = SerializationContext("orders", MessageField.VALUE)
THEIR_CTX = TheirContext("orders", TheirField.VALUE)


def test_bytes_equal_and_cross_decoded(front: RegistryFront) -> None:
    ours = JSONSerializer(SCHEMA, SchemaRegistryClient({"url": front.url}))
    theirs = TheirSerializer(SCHEMA, front.registry)
    ours_de = JSONDeserializer(None, schema_registry_client=SchemaRegistryClient({"url": front.url}))
    theirs_de = TheirDeserializer(None, schema_registry_client=front.registry)
    for order in ORDERS:
        data = ours(order, CTX)
        assert data == theirs(order, THEIR_CTX)
        assert theirs_de(data, THEIR_CTX) == order
        assert ours_de(data, CTX) == order


def test_invalid_values_and_payloads_are_serialization_errors(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    ours = JSONSerializer(SCHEMA, sr)
    with pytest.raises(SerializationError, match="customer"):
        ours({"id": 1}, CTX)
    with pytest.raises(SerializationError):
        ours({"id": "1", "customer": "x"}, CTX)
    good = ours(ORDERS[1], CTX)
    assert good is not None
    de = JSONDeserializer(SCHEMA, schema_registry_client=sr)
    for bad in [good[:5] + b"{not json", good[:5] + b'{"id": 1}', b"\x09" + good[1:]]:
        with pytest.raises(SerializationError):
            de(bad, CTX)
    assert JSONSerializer(SCHEMA, sr, conf={"validate": False})({"id": "x"}, CTX) is not None


def test_references_resolved_for_validation(front: RegistryFront) -> None:
    sr = SchemaRegistryClient({"url": front.url})
    address = json.dumps({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    version = sr.register_schema_full_response("address", Schema(address, "JSON")).version
    person = json.dumps(
        {"type": "object", "properties": {"name": {"type": "string"}, "home": {"$ref": "address.json"}}}
    )
    schema = Schema(person, "JSON", [SchemaReference("address.json", "address", version)])
    ours = JSONSerializer(schema, sr)
    value = {"name": "ann", "home": {"city": "Oslo"}}
    theirs = TheirSerializer(TheirSchema.from_dict(schema.to_dict()), front.registry)
    assert ours(value, CTX) == theirs(value, THEIR_CTX)
    with pytest.raises(SerializationError, match="city"):
        ours({"name": "ann", "home": {}}, CTX)


JSON_SCHEMAS: list[Any] = [
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
    {"type": "array", "items": {"type": "string"}}, {"type": "object"}, {"type": "object", "properties": {"a": {}}},
    {"properties": {"a": {}}}, {"enum": ["a", "b"]}, {"const": 3}, {"type": ["string", "null"]}, {}, True, False,
    {"type": "string", "confluent:tags": ["PII", "PII", "SECRET"]}, {"confluent:tags": []}, {"oneOf": [{}]},
]  # fmt: skip


def test_get_type_and_inline_tags_as_confluent_kafkas() -> None:
    import confluent_kafka.schema_registry.common.json_schema as their_common

    import kafkawire.schema_registry.common.json_schema as our_common

    def kinds(module: Any) -> list[Any]:
        return [
            (module.get_type(s).name, module.get_inline_tags(s) if isinstance(s, dict) else None) for s in JSON_SCHEMAS
        ]

    ours, theirs = kinds(our_common), kinds(their_common)
    assert ours == theirs
    assert ours[15] == ("STRING", {"PII", "SECRET"})
