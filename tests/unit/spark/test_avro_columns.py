"""The columnar Avro encoder (to_avro's fast path) writes fastavro's bytes, value for value."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pytest
from fastavro import parse_schema, schemaless_writer

from kafkawire.spark.avro_columns import NeedsRows, column_encoder

INNER = {
    "type": "record",
    "name": "inner",
    "namespace": "inner",
    "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": ["null", "string"]}],
}
SCHEMA = {
    "type": "record",
    "name": "topLevelRecord",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "qty", "type": ["null", "int"]},
        {"name": "price", "type": ["null", "double"]},
        {"name": "customer", "type": "string"},
        {"name": "sku", "type": ["null", "string"]},
        {"name": "paid", "type": ["null", "boolean"]},
        {"name": "f", "type": "float"},
        {"name": "raw", "type": "bytes"},
        {"name": "inner", "type": ["null", INNER]},
    ],
}
ARROW = pa.struct(
    [
        ("id", pa.int64()),
        ("qty", pa.int32()),
        ("price", pa.float64()),
        ("customer", pa.string()),
        ("sku", pa.string()),
        ("paid", pa.bool_()),
        ("f", pa.float32()),
        ("raw", pa.binary()),
        ("inner", pa.struct([("a", pa.int64()), ("b", pa.string())])),
    ]
)
EDGES = [0, -1, 1, 63, -64, 64, -65, 2**31 - 1, -(2**31), 2**62, -(2**63), 2**63 - 1]


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": EDGES[i % len(EDGES)] if i % 2 else i * 1_000_003,
            "qty": None if i % 4 == 0 else i - 500,
            "price": i * 1.5,
            "customer": "c\u00e9" * (i % 70),
            "sku": None if i % 3 == 0 else f"s{i}",
            "paid": None if i % 5 == 0 else i % 2 == 0,
            "f": 0.25 * i,
            "raw": bytes([i % 256]) * (i % 150),
            "inner": None if i % 6 == 0 else {"a": -i, "b": None if i % 2 else "x"},
        }
        for i in range(n)
    ]


def _fastavro(rows: list[dict[str, Any]]) -> list[bytes]:
    parsed = parse_schema(SCHEMA)
    out = []
    for row in rows:
        buf = io.BytesIO()
        schemaless_writer(buf, parsed, row)
        out.append(buf.getvalue())
    return out


def test_bytes_equal_fastavros_including_slices() -> None:
    rows = _rows(3000)
    column = pa.array(rows, type=ARROW)
    encode = column_encoder(SCHEMA)
    assert encode is not None
    want = _fastavro(rows)
    assert encode(column).to_pylist() == want
    assert encode(column.slice(1001, 777)).to_pylist() == want[1001:1778]


def test_what_it_cannot_encode_goes_row_by_row() -> None:
    assert (
        column_encoder(
            {"type": "record", "name": "r", "fields": [{"name": "d", "type": {"type": "int", "logicalType": "date"}}]}
        )
        is None
    )
    assert (
        column_encoder(
            {"type": "record", "name": "r", "fields": [{"name": "t", "type": {"type": "array", "items": "int"}}]}
        )
        is None
    )
    encode = column_encoder({"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]})
    assert encode is not None
    with pytest.raises(NeedsRows):  # a null where the schema has none: fastavro names the row
        encode(pa.array([{"a": 1}, {"a": None}], pa.struct([("a", pa.int64())])))
    with pytest.raises(NeedsRows):  # text where the schema says long
        encode(pa.array([{"a": "1"}], pa.struct([("a", pa.string())])))
    with pytest.raises(NeedsRows):  # a field the schema has and the column lacks
        encode(pa.array([{"b": 1}], pa.struct([("b", pa.int64())])))
