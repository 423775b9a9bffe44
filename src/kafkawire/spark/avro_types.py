"""Spark types and Avro schemas, both ways, as spark-avro's ``SchemaConverters`` maps them.

Spark to Avro: boolean; byte/short/int -> int; long; float; double; string; binary -> bytes;
date -> int (date); timestamp -> long (timestamp-micros); timestamp_ntz -> long
(local-timestamp-micros); decimal(p, s) -> bytes (decimal); array; map with string keys; struct ->
record, the top one named ``topLevelRecord``, nested ones after their field in a namespace made of
the path to them. A nullable field is the union ``["null", T]``.

Avro to Spark adds what Avro has and Spark lacks: enum -> string, fixed -> binary,
timestamp-millis -> timestamp, a union of null and one type -> that type, nullable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pyspark.sql import types as T

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class AvroSchemaError(ValueError):
    """A Spark type Avro cannot carry, or an Avro schema Spark has no type for."""


def _check_name(name: str, where: str) -> str:
    if not _NAME.match(name):
        raise AvroSchemaError(f"column {where!r} is not a valid Avro name ([A-Za-z_][A-Za-z0-9_]*); rename it")
    return name


def avro_schema(schema: T.StructType, name: str = "topLevelRecord", namespace: str = "") -> dict[str, Any]:
    """The Avro record schema (a JSON-ready dict) for rows of ``schema``."""
    fields = []
    for field in schema.fields:
        _check_name(field.name, f"{namespace}.{field.name}".lstrip("."))
        inner_ns = f"{namespace}.{field.name}" if namespace else field.name
        fields.append({"name": field.name, "type": _avro_type(field.dataType, field.nullable, field.name, inner_ns)})
    record: dict[str, Any] = {"type": "record", "name": name, "fields": fields}
    if namespace:
        record["namespace"] = namespace
    return record


def schema_json(schema: T.DataType) -> str:
    """The Avro schema of values of ``schema`` as compact JSON text (what a registry stores)."""
    if isinstance(schema, T.StructType):
        return json.dumps(avro_schema(schema), separators=(",", ":"))
    return json.dumps(_avro_type(schema, False, "topLevelRecord", ""), separators=(",", ":"))


_SIMPLE: list[tuple[type, Any]] = [
    (T.BooleanType, "boolean"),
    (T.ByteType, "int"),
    (T.ShortType, "int"),
    (T.IntegerType, "int"),
    (T.LongType, "long"),
    (T.FloatType, "float"),
    (T.DoubleType, "double"),
    (T.StringType, "string"),
    (T.BinaryType, "bytes"),
    (T.DateType, {"type": "int", "logicalType": "date"}),
    (T.TimestampNTZType, {"type": "long", "logicalType": "local-timestamp-micros"}),
    (T.TimestampType, {"type": "long", "logicalType": "timestamp-micros"}),
]


def _avro_type(dt: T.DataType, nullable: bool, name: str, namespace: str) -> Any:
    kind: Any = next((avro for spark, avro in _SIMPLE if isinstance(dt, spark)), None)
    if kind is not None:
        pass
    elif isinstance(dt, T.DecimalType):
        kind = {"type": "bytes", "logicalType": "decimal", "precision": dt.precision, "scale": dt.scale}
    elif isinstance(dt, T.ArrayType):
        kind = {"type": "array", "items": _avro_type(dt.elementType, dt.containsNull, name, namespace)}
    elif isinstance(dt, T.MapType):
        if not isinstance(dt.keyType, T.StringType):
            raise AvroSchemaError(f"column {namespace!r}: Avro maps need string keys, not {dt.keyType.simpleString()}")
        kind = {"type": "map", "values": _avro_type(dt.valueType, dt.valueContainsNull, name, namespace)}
    elif isinstance(dt, T.StructType):
        kind = avro_schema(dt, name, namespace)
    else:
        raise AvroSchemaError(f"column {namespace!r} has type {dt.simpleString()}, which Avro cannot carry")
    return ["null", kind] if nullable else kind


# --- Avro to Spark -------------------------------------------------------------------------------

_PRIMITIVE_TYPES: dict[str, T.DataType] = {
    "boolean": T.BooleanType(),
    "int": T.IntegerType(),
    "long": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "string": T.StringType(),
    "bytes": T.BinaryType(),
    "enum": T.StringType(),
    "fixed": T.BinaryType(),
}
_LOGICAL_TYPES: dict[str, T.DataType] = {
    "date": T.DateType(),
    "timestamp-millis": T.TimestampType(),
    "timestamp-micros": T.TimestampType(),
    "local-timestamp-millis": T.TimestampNTZType(),
    "local-timestamp-micros": T.TimestampNTZType(),
}


def spark_type(schema: Any) -> tuple[T.DataType, bool]:
    """The Spark type of values of a (JSON-loaded) Avro schema, and whether they may be null."""
    return _spark_type(schema, {})


def _spark_type(schema: Any, named: dict[str, T.DataType]) -> tuple[T.DataType, bool]:
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null" and b != {"type": "null"}]
        if len(branches) != 1:
            raise AvroSchemaError(f"the Avro union {json.dumps(schema)} has no Spark type (only [null, T] has)")
        return _spark_type(branches[0], named)[0], len(branches) < len(schema)
    if isinstance(schema, str):
        if schema == "null":
            return T.NullType(), True
        if schema in _PRIMITIVE_TYPES:
            return _PRIMITIVE_TYPES[schema], False
        if schema in named:
            return named[schema], False
        raise AvroSchemaError(f"the Avro type {schema!r} is not defined here (schema references are not supported)")
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return T.DecimalType(schema["precision"], schema.get("scale", 0)), False
    if logical in _LOGICAL_TYPES:
        return _LOGICAL_TYPES[logical], False
    if kind == "record":
        fields = []
        for f in schema["fields"]:
            dt, nullable = _spark_type(f["type"], named)
            fields.append(T.StructField(f["name"], dt, nullable))
        result: T.DataType = T.StructType(fields)
    elif kind == "array":
        items, contains_null = _spark_type(schema["items"], named)
        result = T.ArrayType(items, contains_null)
    elif kind == "map":
        values, contains_null = _spark_type(schema["values"], named)
        result = T.MapType(T.StringType(), values, contains_null)
    elif isinstance(kind, (str, list, dict)) and kind not in ("enum", "fixed"):
        return _spark_type(kind, named)
    else:
        result = _PRIMITIVE_TYPES[kind]
    if kind in ("record", "enum", "fixed"):
        full = (
            schema["name"]
            if "." in schema["name"] or not schema.get("namespace")
            else f"{schema['namespace']}.{schema['name']}"
        )
        named[full] = named[schema["name"]] = result
    return result, False


# --- Arrow values as fastavro wants them ---------------------------------------------------------


def map_fixer(dt: T.DataType) -> Callable[[Any], Any] | None:
    """Arrow gives a map as a list of (key, value) pairs, fastavro wants a dict: the function that
    rebuilds the dicts inside a value of ``dt``, or None when ``dt`` holds no map (the usual case)."""
    if isinstance(dt, T.MapType):
        inner = map_fixer(dt.valueType)
        if inner is None:
            return lambda v: None if v is None else dict(v)
        return lambda v: None if v is None else {k: inner(x) for k, x in v}
    if isinstance(dt, T.ArrayType):
        item = map_fixer(dt.elementType)
        return None if item is None else (lambda v: None if v is None else [item(x) for x in v])
    if isinstance(dt, T.StructType):
        fixes = [(f.name, fix) for f in dt.fields if (fix := map_fixer(f.dataType)) is not None]
        if not fixes:
            return None

        def fix_record(v: Any) -> Any:
            if v is not None:
                for name, fix in fixes:
                    v[name] = fix(v[name])
            return v

        return fix_record
    return None
