"""Avro binary encoding of whole Arrow columns at once (pyarrow.compute, no Python per row), for
records of primitive fields: the fast path of `kafkawire.spark.avro_codec` (``to_avro``).

Each field becomes a binary column of its encoded bytes (a zigzag varint for int/long, 4 or 8
little-endian bytes for float/double, a length varint and the bytes for string/bytes, one byte for
boolean, the union branch before a nullable field's value); a record is its fields' columns joined
row by row. A column that does not fit (`NeedsRows`) and schemas with anything else (logical types, arrays, maps, enums...) return None from
`column_encoder` and are encoded by fastavro row by row; the bytes are the same either way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

pa: Any = importlib.import_module("pyarrow")
pc: Any = importlib.import_module("pyarrow.compute")

Encoder = Callable[[Any], Any]  # an Arrow column -> a binary column of its Avro encoding


class NeedsRows(Exception):
    """The column does not fit the schema as the columnar path needs (a null where the schema has
    none, another type): encode it row by row, where fastavro accepts it or names the bad row."""


_KINDS: dict[str, Callable[[Any], bool]] = {
    "int": lambda t: pa.types.is_integer(t),
    "long": lambda t: pa.types.is_integer(t),
    "float": lambda t: pa.types.is_floating(t) or pa.types.is_integer(t),
    "double": lambda t: pa.types.is_floating(t) or pa.types.is_integer(t),
    "boolean": lambda t: pa.types.is_boolean(t),
    "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    "bytes": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t),
}


def _checked(kind: str, inner: Encoder) -> Encoder:
    """A field that is not a union: of a fitting type, and no null in it where its record has a value."""
    fits = _KINDS[kind]

    def encode(values: Any) -> Any:
        if not fits(values.type) or values.null_count:
            raise NeedsRows(kind)
        return inner(values)

    return encode


_MAX_VARINT = 10


def _bytes_of(byte_values: Any) -> Any:
    """A uint8 column as a column of one-byte binaries."""
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(1), len(byte_values), [None, byte_values.buffers()[1]])
    return fixed.cast(pa.binary())


def _u64(value: int) -> Any:
    return pa.scalar(value, pa.uint64())


def _below(k: int) -> Any:
    """The largest value that fits in ``k`` varint bytes."""
    return _u64((1 << (7 * k)) - 1)


def _varint(values: Any) -> Any:
    """Zigzag varints of an int64 column without nulls (Avro's int and long)."""
    v = values.cast(pa.int64())
    sign = pc.if_else(pc.less(v, 0), pa.scalar(-1, pa.int64()), pa.scalar(0, pa.int64()))  # v >> 63 (Arrow's
    zz = pc.bit_wise_xor(pc.shift_left(v, 1), sign).cast(pa.uint64(), safe=False)  # shift_right by 63 is a no-op)
    pieces = []
    empty = pa.scalar(b"", pa.binary())
    for k in range(_MAX_VARINT):
        rest = pc.shift_right(zz, _u64(7 * k))
        more = pc.greater(rest, _below(1))
        low = pc.bit_wise_and(rest, _u64(0x7F))
        byte = pc.if_else(more, pc.bit_wise_or(low, _u64(0x80)), low).cast(pa.uint8())
        piece = _bytes_of(byte.combine_chunks() if hasattr(byte, "combine_chunks") else byte)
        if k:
            piece = pc.if_else(pc.greater(zz, _below(k)), piece, empty)
        pieces.append(piece)
        if k + 1 == _MAX_VARINT or not pc.any(pc.greater(zz, _below(k + 1))).as_py():
            break
    return pieces[0] if len(pieces) == 1 else pc.binary_join_element_wise(*pieces, b"")


def _fixed(width: int, arrow_type: Any) -> Encoder:
    def encode(values: Any) -> Any:
        filled = values.cast(arrow_type).fill_null(0)
        return pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(width), len(filled), [None, filled.buffers()[1]], offset=filled.offset
        ).cast(pa.binary())

    return encode


def _long(values: Any) -> Any:
    return _varint(values.fill_null(0))


def _boolean(values: Any) -> Any:
    return _bytes_of(values.fill_null(False).cast(pa.uint8()))


def _blob(values: Any) -> Any:
    data = values.cast(pa.binary()).fill_null(b"")
    return pc.binary_join_element_wise(_varint(pc.binary_length(data)), data, b"")


_PRIMITIVES: dict[str, Encoder] = {
    "int": _long,
    "long": _long,
    "float": _fixed(4, pa.float32()),
    "double": _fixed(8, pa.float64()),
    "boolean": _boolean,
    "string": _blob,
    "bytes": _blob,
}
_NULL = pa.scalar(b"\x00", pa.binary())
_BRANCH_1 = pa.scalar(b"\x02", pa.binary())


def _refuse(kind: str) -> Any:
    raise NeedsRows(kind)


def _nullable(inner: Encoder) -> Encoder:
    """``["null", T]``: branch 0 for a null, branch 1 (zigzag 2) then the value."""

    def encode(values: Any) -> Any:
        present = pc.binary_join_element_wise(_BRANCH_1, inner(values), b"")
        return pc.if_else(values.is_null(), _NULL, present)

    return encode


def _record(fields: list[tuple[str, Encoder]]) -> Encoder:
    def encode(values: Any) -> Any:
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if not pa.types.is_struct(values.type) or {n for n, _ in fields} - {f.name for f in values.type}:
            raise NeedsRows("record")
        parts = [enc(values.field(name)) for name, enc in fields]
        if not parts:
            return pa.array([b""] * len(values), pa.binary())
        return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, b"")

    return encode


def column_encoder(schema: Any) -> Encoder | None:
    """The columnar encoder of a (JSON-loaded) Avro schema, or None if it has other types."""
    if isinstance(schema, str):
        return _checked(schema, _PRIMITIVES[schema]) if schema in _PRIMITIVES else None
    if isinstance(schema, list):
        if len(schema) == 2 and schema[0] == "null" and isinstance(schema[1], str) and schema[1] in _PRIMITIVES:
            kind = schema[1]
            fits, inner = _KINDS[kind], _PRIMITIVES[kind]
            return _nullable(lambda v: inner(v) if fits(v.type) else _refuse(kind))
        if len(schema) == 2 and schema[0] == "null" and isinstance(schema[1], dict):
            record = column_encoder(schema[1])
            return _nullable(record) if record is not None else None
        return None
    if not isinstance(schema, dict) or "logicalType" in schema:
        return None
    if schema.get("type") == "record":
        fields = []
        for f in schema["fields"]:
            enc = column_encoder(f["type"])
            if enc is None:
                return None
            fields.append((f["name"], enc))
        return _record(fields)
    return column_encoder(schema.get("type")) if isinstance(schema.get("type"), str) else None
