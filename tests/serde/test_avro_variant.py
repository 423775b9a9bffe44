"""Avro's ``variant`` logical type (a {metadata, value} record holding a Variant), differential:
the same record written and read by confluent-kafka's AvroSerializer/AvroDeserializer and by
kafkawire's, each in a process of its own (both install the logical type in fastavro's
process-wide tables, so one process would judge a client with the other's handler)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kafkawire

pytest.importorskip("confluent_kafka.schema_registry.confluent.type.variant_utils")

SRC = str(Path(kafkawire.__file__).resolve().parents[1])

PROGRAM = textwrap.dedent(
    """
    import json, sys
    client = sys.argv[1]
    if client == "kafkawire":
        sys.path.insert(0, sys.argv[2])
    package = __import__(client)
    from importlib import import_module
    avro = import_module(client + ".schema_registry.avro")
    mock = import_module(client + ".schema_registry._sync.mock_schema_registry_client")
    variants = import_module(client + ".schema_registry.confluent.type.variant_utils")
    serialization = import_module(client + ".serialization")
    schema = json.dumps({
        "type": "record", "name": "Row", "fields": [
            {"name": "id", "type": "int"},
            {"name": "doc", "type": {"type": "record", "name": "VariantRecord", "logicalType": "variant",
                                     "fields": [{"name": "metadata", "type": "bytes"},
                                                {"name": "value", "type": "bytes"}]}},
            {"name": "maybe", "type": ["null", "VariantRecord"], "default": None},
        ]})
    registry = mock.MockSchemaRegistryClient({"url": "mock://"})
    serializer = avro.AvroSerializer(registry, schema, conf={"auto.register.schemas": True})
    deserializer = avro.AvroDeserializer(registry)
    ctx = serialization.SerializationContext("t", serialization.MessageField.VALUE)
    document = variants.parse_json('{"b": [1, 2.5, "x"], "a": {"é": null}}')
    inner = document.get_field_by_key("b")
    out = []
    for row in (
        {"id": 1, "doc": document, "maybe": None},
        {"id": 2, "doc": inner, "maybe": document},
        {"id": 3, "doc": {"metadata": document.metadata, "value": document.value}, "maybe": None},
    ):
        data = serializer(row, ctx)
        back = deserializer(data, ctx)
        out.append([data.hex(), type(back["doc"]).__name__, back["doc"].to_json(),
                    None if back["maybe"] is None else back["maybe"].to_json()])
    print(json.dumps(out))
    """
)


def _run(client: str, tmp_path: Path) -> list[list[str]]:
    program = tmp_path / f"{client}_variant.py"
    program.write_text(PROGRAM)
    done = subprocess.run(
        [sys.executable, str(program), client, SRC], capture_output=True, text=True, timeout=120, cwd=str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    rows: list[list[str]] = json.loads(done.stdout)
    return rows


def test_variant_fields_are_written_and_read_as_on_confluent(tmp_path: Path) -> None:
    ours, theirs = _run("kafkawire", tmp_path), _run("confluent_kafka", tmp_path)
    assert ours == theirs
    assert [row[1] for row in ours] == ["Variant"] * 3
    assert ours[1][2] == '[1,2.5,"x"]'
