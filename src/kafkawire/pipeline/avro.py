"""Avro binary values without the spark-avro jar: a schema from a Spark schema, and an encoder for its rows.

PySpark's ``to_avro`` calls into the ``spark-avro`` module, which the pip-installed PySpark does not
ship (it comes with ``--packages org.apache.spark:spark-avro_2.13``, a download at run time). So the
pipeline encodes Avro itself, in the Python workers: each value is one Avro datum in the binary
encoding (no container file, no schema-registry prefix), exactly what ``to_avro`` writes, and the
writer's schema is printed with the run's summary so that consumers can decode it.

Mapping (as spark-avro's ``SchemaConverters``): boolean; byte/short/int -> int; long; float; double;
string; binary -> bytes; date -> int (date); timestamp -> long (timestamp-micros); timestamp_ntz ->
long (local-timestamp-micros); decimal(p, s) -> bytes (decimal); array; map with string keys; struct
-> record. A nullable field is the union ``["null", T]``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from kafkawire.protocol.primitives import encode_varlong
from kafkawire.spark.avro_types import AvroSchemaError, avro_schema, schema_json

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

__all__ = ["AvroSchemaError", "row_encoder", "schema_json"]

Encoder = Callable[[Any, bytearray], None]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")


def _long(value: int, out: bytearray) -> None:
    out += encode_varlong(value)


def _bytes(value: bytes, out: bytearray) -> None:
    out += encode_varlong(len(value))
    out += value


def _string(value: str, out: bytearray) -> None:
    _bytes(value.encode("utf-8"), out)


def _boolean(value: bool, out: bytearray) -> None:
    out.append(1 if value else 0)


def _float(value: float, out: bytearray) -> None:
    out += _FLOAT.pack(value)


def _double(value: float, out: bytearray) -> None:
    out += _DOUBLE.pack(value)


def _date(value: date | int, out: bytearray) -> None:
    _long(value if isinstance(value, int) else value.toordinal() - _EPOCH_DAY, out)


def _since(value: datetime, epoch: datetime) -> int:
    delta = value - epoch
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _instant(value: datetime | int, out: bytearray) -> None:
    """A TimestampType value: PySpark hands rows a naive datetime in the worker's local time zone
    (``datetime.fromtimestamp``), which ``timestamp()`` inverts exactly, fold included."""
    if isinstance(value, int):
        _long(value, out)
    elif value.tzinfo is not None:
        _long(_since(value, _EPOCH), out)
    else:
        _long(int(value.replace(microsecond=0).timestamp()) * 1_000_000 + value.microsecond, out)


def _wall_clock(value: datetime | int, out: bytearray) -> None:
    """A TimestampNTZType value: a naive wall-clock time, counted from 1970-01-01T00:00."""
    _long(value if isinstance(value, int) else _since(value.replace(tzinfo=None), _EPOCH_NAIVE), out)


def _decimal_encoder(scale: int) -> Encoder:
    def encode(value: Decimal, out: bytearray) -> None:
        unscaled = int(value.scaleb(scale))
        size = max(1, (unscaled.bit_length() + 8) // 8)  # room for the sign bit
        _bytes(unscaled.to_bytes(size, "big", signed=True), out)

    return encode


def _nullable(inner: Encoder) -> Encoder:
    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            out.append(0)  # union branch 0: null
        else:
            out.append(2)  # union branch 1 (zigzag 1)
            inner(value, out)

    return encode


def _array_encoder(items: Encoder) -> Encoder:
    def encode(value: list[Any], out: bytearray) -> None:
        if value:
            _long(len(value), out)
            for item in value:
                items(item, out)
        out.append(0)  # end of blocks

    return encode


def _map_encoder(values: Encoder) -> Encoder:
    def encode(value: Any, out: bytearray) -> None:
        pairs = value.items() if isinstance(value, dict) else value  # Arrow gives a list of (key, value)
        pairs = list(pairs)
        if pairs:
            _long(len(pairs), out)
            for key, item in pairs:
                _string(key, out)
                values(item, out)
        out.append(0)

    return encode


def _record_encoder(schema: StructType) -> Encoder:
    fields = [(field.name, _encoder(field.dataType, field.nullable)) for field in schema.fields]

    def encode(value: Any, out: bytearray) -> None:
        if isinstance(value, dict):
            for name, enc in fields:
                enc(value.get(name), out)
        else:  # a Row or a tuple, in field order
            for (_name, enc), item in zip(fields, value, strict=True):
                enc(item, out)

    return encode


def _encoder(dt: DataType, nullable: bool) -> Encoder:
    from pyspark.sql import types as T

    enc: Encoder
    if isinstance(dt, T.BooleanType):
        enc = _boolean
    elif isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        enc = _long
    elif isinstance(dt, T.FloatType):
        enc = _float
    elif isinstance(dt, T.DoubleType):
        enc = _double
    elif isinstance(dt, T.StringType):
        enc = _string
    elif isinstance(dt, T.BinaryType):
        enc = _bytes
    elif isinstance(dt, T.DateType):
        enc = _date
    elif isinstance(dt, T.TimestampNTZType):
        enc = _wall_clock
    elif isinstance(dt, T.TimestampType):
        enc = _instant
    elif isinstance(dt, T.DecimalType):
        enc = _decimal_encoder(dt.scale)
    elif isinstance(dt, T.ArrayType):
        enc = _array_encoder(_encoder(dt.elementType, dt.containsNull))
    elif isinstance(dt, T.MapType):
        enc = _map_encoder(_encoder(dt.valueType, dt.valueContainsNull))
    elif isinstance(dt, T.StructType):
        enc = _record_encoder(dt)
    else:
        raise AvroSchemaError(f"type {dt.simpleString()} is not supported by the Avro encoder")
    return _nullable(enc) if nullable else enc


def row_encoder(schema: StructType) -> Callable[[Any], bytes]:
    """A function from one row (a Row, a tuple in field order, or a dict by column name), as PySpark
    hands a Python UDF its struct argument, to the row's Avro binary datum.

    Raises :class:`AvroSchemaError` at once for a schema Avro cannot carry."""
    avro_schema(schema)  # the same checks as the schema the consumers get
    encode_record = _record_encoder(schema)

    def encode(row: Any) -> bytes:
        out = bytearray()
        encode_record(row, out)
        return bytes(out)

    return encode
