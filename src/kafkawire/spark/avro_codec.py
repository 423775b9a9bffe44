"""Avro for whole Arrow batches in the Python workers: a binary column from a column of values,
and back, schemaless (Spark's ``to_avro``/``from_avro``) or framed for a Schema Registry.

Records of primitive fields are encoded a column at a time (`kafkawire.spark.avro_columns`), other
values row by row with fastavro; the bytes are the same. Everything costly happens once per worker process, not per row or batch: schemas are parsed,
registry clients opened and schemas registered or looked up by cached factories keyed by the
(picklable) `AvroWrite`/`AvroRead` the driver built. Framed values go through
`kafkawire.schema_registry`'s AvroSerializer/AvroDeserializer, so the bytes are the ones
confluent-kafka writes and reads. fastavro and the registry client are imported on first use.
"""

from __future__ import annotations

import importlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pyspark.sql.pandas.types import from_arrow_type, to_arrow_type
from pyspark.sql.types import DataType, _parse_datatype_json_string

from .avro_columns import NeedsRows, column_encoder
from .avro_types import map_fixer, schema_json
from .cache import ProcessCache

pa: Any = importlib.import_module("pyarrow")  # typed as Any: pyarrow ships no type information
pc: Any = importlib.import_module("pyarrow.compute")
Array = Any

Where = Callable[[int], str]  # a row's place, for error messages: " at row 3", " (topic 't' [0] offset 7)"
RegistryConf = tuple[tuple[str, Any], ...]


class AvroCodecError(ValueError):
    """A value that cannot be encoded or decoded, naming where it is."""


def _registry_client(conf: dict[str, Any]) -> Any:
    from ..schema_registry import SchemaRegistryClient

    return SchemaRegistryClient.new_client(conf)


registries: ProcessCache[Any] = ProcessCache(_registry_client, lambda client: client.close())


@dataclass(frozen=True)
class AvroWrite:
    """How to encode: ``schema`` (Avro JSON; None derives it from each batch's type), and, with a
    registry (its client config), the subject to register (or, without auto-register, look up) under."""

    schema: str | None = None
    registry: RegistryConf | None = None
    subject: str | None = None
    auto_register: bool = True

    def encode(self, values: Array, where: Where) -> Array:
        schema = self.schema if self.schema is not None else _derived_schema(str(values.type), values.type)
        columns = _column_encoder(schema)
        body = None
        if columns is not None:  # a record of primitive fields: Arrow compute, no Python per row
            try:
                body = columns(values)
            except (NeedsRows, pa.ArrowException):
                body = None  # row by row: fastavro takes it or names the row it refuses
        if body is not None:
            if self.registry is not None:
                assert self.subject is not None
                prefix = _frame_prefix(self.registry, schema, self.subject, self.auto_register)
                body = pc.binary_join_element_wise(pa.scalar(prefix, pa.binary()), body, b"")
            return pc.if_else(values.is_null(), pa.scalar(None, pa.binary()), body)
        fix = _fixer(str(values.type), values.type)
        rows = values.to_pylist()
        if fix is not None:
            rows = [fix(r) for r in rows]
        if self.registry is not None:
            assert self.subject is not None
            serialize = _framed_writer(self.registry, schema, self.subject, self.auto_register)
        else:
            serialize = _plain_writer(schema)
        out: list[bytes | None] = []
        for i, row in enumerate(rows):
            if row is None:
                out.append(None)  # a null value stays null (a tombstone), as the serializers do
                continue
            try:
                out.append(serialize(row))
            except Exception as e:
                raise AvroCodecError(f"Avro encoding failed{where(i)}: {e}") from e
        return pa.array(out, type=pa.binary())


@dataclass(frozen=True)
class AvroRead:
    """How to decode: into ``schema`` (Avro JSON; the reader schema) whose Spark type is
    ``spark_type`` (its JSON); with a registry, each value's framed id names its writer schema.
    ``permissive``: an undecodable value becomes null instead of failing the task."""

    schema: str
    spark_type: str
    registry: RegistryConf | None = None
    permissive: bool = False

    def data_type(self) -> DataType:
        return _parse_datatype_json_string(self.spark_type)

    def decode(self, values: Array, where: Where) -> Array:
        arrow_type = _arrow_type(self.spark_type)
        deserialize = (
            _framed_reader(self.registry, self.schema) if self.registry is not None else _plain_reader(self.schema)
        )
        out: list[Any] = []
        for i, data in enumerate(values.to_pylist()):
            if data is None:
                out.append(None)
                continue
            try:
                out.append(deserialize(data))
            except Exception as e:
                if self.permissive:
                    out.append(None)
                    continue
                raise AvroCodecError(f"Avro decoding failed{where(i)}: {e}") from e
        return pa.array(out, type=arrow_type)


def at_row(i: int) -> str:
    return f" at row {i} of the batch"


# --- per-process factories (one schema parse, one registry look-up per process) ----------------


@lru_cache(maxsize=64)
def _derived_schema(type_name: str, arrow_type: Any) -> str:
    return schema_json(from_arrow_type(arrow_type))


@lru_cache(maxsize=64)
def _fixer(type_name: str, arrow_type: Any) -> Callable[[Any], Any] | None:
    return map_fixer(from_arrow_type(arrow_type))


@lru_cache(maxsize=64)
def _arrow_type(spark_type: str) -> Any:
    return to_arrow_type(_parse_datatype_json_string(spark_type), timezone="UTC")  # fastavro's instants are UTC


@lru_cache(maxsize=64)
def _column_encoder(schema: str) -> Callable[[Any], Any] | None:
    """The columnar encoder (`avro_columns`) of a record schema of primitive fields, else None."""
    loaded = json.loads(schema)
    return column_encoder(loaded) if isinstance(loaded, dict) and loaded.get("type") == "record" else None


@lru_cache(maxsize=64)
def _frame_prefix(registry: RegistryConf, schema: str, subject: str, auto_register: bool) -> bytes:
    """Magic byte 0 and the schema's id, as AvroSerializer writes them: registered (or looked up)
    once per process, as the serializer would register ``schema``."""
    from ..schema_registry import Schema

    client = registries.get(dict(registry))
    wanted = Schema(schema.strip(), "AVRO")
    schema_id = (
        client.register_schema(subject, wanted) if auto_register else client.lookup_schema(subject, wanted).schema_id
    )
    return b"\x00" + int(schema_id).to_bytes(4, "big")


@lru_cache(maxsize=64)
def _parsed(schema: str) -> Any:
    from fastavro import parse_schema

    return parse_schema(json.loads(schema))


@lru_cache(maxsize=64)
def _plain_writer(schema: str) -> Callable[[Any], bytes]:
    from fastavro import schemaless_writer

    parsed = _parsed(schema)
    buf = io.BytesIO()

    def write(value: Any) -> bytes:
        buf.seek(0)
        buf.truncate()
        schemaless_writer(buf, parsed, value)
        return buf.getvalue()

    return write


@lru_cache(maxsize=64)
def _plain_reader(schema: str) -> Callable[[bytes], Any]:
    from fastavro import schemaless_reader

    parsed = _parsed(schema)

    def read(data: bytes) -> Any:
        buf = io.BytesIO(data)
        value = schemaless_reader(buf, parsed, parsed)
        if buf.tell() != len(data):
            raise ValueError(f"{len(data) - buf.tell()} byte(s) left after the Avro datum")
        return value

    return read


@lru_cache(maxsize=64)
def _framed_writer(registry: RegistryConf, schema: str, subject: str, auto_register: bool) -> Callable[[Any], Any]:
    from ..schema_registry.avro import AvroSerializer

    conf = {"auto.register.schemas": auto_register, "subject.name.strategy": lambda ctx, name: subject}
    return AvroSerializer(registries.get(dict(registry)), schema, conf=conf)


@lru_cache(maxsize=64)
def _framed_reader(registry: RegistryConf, schema: str) -> Callable[[bytes], Any]:
    from ..schema_registry.avro import AvroDeserializer

    return AvroDeserializer(registries.get(dict(registry)), schema)
