"""kafkawire.schema_registry's names and its asyncio serdes, against confluent-kafka's.

The export lists are compared name by name; the asyncio serdes (the synchronous ones run off the
loop) are judged by confluent-kafka's own asyncio serdes: the same bytes for the same record, and
each side decodes the other's."""

from __future__ import annotations

import asyncio
import importlib
import json
import types
from typing import Any

import confluent_kafka.schema_registry as theirs
import pytest

import kafkawire.schema_registry as ours
from kafkawire.serialization import MessageField, SerializationContext

AVRO = json.dumps(
    {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "int"}, {"name": "item", "type": "string"}]}
)
JSON = json.dumps(
    {"type": "object", "title": "Order", "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}}
)


def _public(module: types.ModuleType) -> set[str]:
    return {
        n
        for n in dir(module)
        if not n.startswith("_")
        and not isinstance(getattr(module, n), types.ModuleType)
        and getattr(getattr(module, n), "__module__", None) != "typing"
    }


def test_every_name_confluent_exports_from_schema_registry_is_exported() -> None:
    assert set(theirs.__all__) - set(ours.__all__) == set()
    assert _public(theirs) - _public(ours) == set()
    assert ours.reference_subject_name_strategy(None, ours.SchemaReference("ref", "subject", 1)) == "ref"
    assert ours.reference_subject_name_strategy(None, None) is None


@pytest.mark.parametrize(
    "module", ["avro", "json_schema", "protobuf", "serde", "schema_registry_client", "mock_schema_registry_client"]
)
def test_the_async_modules_hold_confluents_names(module: str) -> None:
    mine = importlib.import_module(f"kafkawire.schema_registry._async.{module}")
    reference = importlib.import_module(f"confluent_kafka.schema_registry._async.{module}")
    defined = {n for n in _public(reference) if getattr(getattr(reference, n), "__module__", "") == reference.__name__}
    assert defined - _public(mine) == set()


async def _frame(lib: Any, fmt: str, schema: str, record: dict[str, Any]) -> tuple[bytes, Any]:
    """Framed bytes of ``record`` by ``lib``'s asyncio serializer (its mock registry), and that
    side's asyncio deserializer."""
    name = "Avro" if fmt == "avro" else "JSON"
    client = importlib.import_module(f"{lib}.schema_registry._async.mock_schema_registry_client")
    serdes = importlib.import_module(f"{lib}.schema_registry._async.{fmt}")
    registry = client.AsyncMockSchemaRegistryClient({"url": f"mock://{fmt}-{lib}"})
    schema_arg = schema if fmt == "avro" else importlib.import_module(f"{lib}.schema_registry").Schema(schema, "JSON")
    writer = getattr(serdes, f"Async{name}Serializer")
    serializer = await (writer(registry, schema_arg) if fmt == "avro" else writer(schema_arg, registry))
    reader = getattr(serdes, f"Async{name}Deserializer")
    deserializer = await (reader(registry) if fmt == "avro" else reader(schema_arg, schema_registry_client=registry))
    ctx = SerializationContext("orders", MessageField.VALUE)
    return await serializer(record, ctx), deserializer


@pytest.mark.parametrize("fmt", ["avro", "json_schema"])
def test_async_serdes_match_confluents(fmt: str) -> None:
    schema = AVRO if fmt == "avro" else JSON
    record = {"id": 7, "item": "tea"}
    ctx = SerializationContext("orders", MessageField.VALUE)

    async def run() -> tuple[bytes, bytes, Any, Any]:
        ours_bytes, our_reader = await _frame("kafkawire", fmt, schema, record)
        their_bytes, their_reader = await _frame("confluent_kafka", fmt, schema, record)
        return ours_bytes, their_bytes, await their_reader(ours_bytes, ctx), await our_reader(their_bytes, ctx)

    ours_bytes, their_bytes, read_by_them, read_by_us = asyncio.run(run())
    assert ours_bytes == their_bytes
    assert read_by_them == read_by_us == record
