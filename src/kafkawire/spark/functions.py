"""``to_avro`` and ``from_avro`` for PySpark without the spark-avro jar, with a Schema Registry.

Both are Arrow UDFs (PySpark 4.1+): a worker gets whole Arrow batches, and the work per row is
fastavro's alone (see `kafkawire.spark.avro_codec`). Without a registry they read and write
Spark's schemaless Avro (one datum per value, as spark-avro's functions); with
``schemaRegistryUrl`` and ``subject`` they write and read the Confluent framing (magic byte 0, the
schema id, the datum), the bytes confluent-kafka's AvroSerializer writes.

The schema: ``jsonFormatSchema`` when given, else derived from the column's Spark type, as
spark-avro names it (``topLevelRecord``; a nullable field is a union with null). A null value
stays null. ``from_avro`` needs its reader schema on the driver (the column's Spark type comes from
it): ``jsonFormatSchema``, or the subject's latest version in the registry.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from .avro_codec import AvroRead, AvroWrite, RegistryConf, at_row
from .avro_types import AvroSchemaError, spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql._typing import ColumnOrName

__all__ = ["from_avro", "to_avro"]

FROM_AVRO_MODES = ("FAILFAST", "PERMISSIVE")


def registry_conf(url: str | None, conf: Mapping[str, Any] | None) -> RegistryConf | None:
    """The registry client's config (``url`` plus ``conf``: auth, TLS...) as a picklable, hashable
    tuple, or None without a url."""
    if url is None:
        if conf:
            raise ValueError("registry options were given without schemaRegistryUrl")
        return None
    return tuple(sorted({**dict(conf or {}), "url": url}.items()))


def client(registry: RegistryConf) -> Any:
    """A registry client for the driver's own look-ups."""
    from ..schema_registry import SchemaRegistryClient

    return SchemaRegistryClient.new_client(dict(registry))


def _arrow_udf(func: Any, return_type: Any) -> Any:
    udf = getattr(F, "arrow_udf", None)
    if udf is None:
        raise ImportError("kafkawire.spark.functions needs PySpark 4.1 or later (pyspark.sql.functions.arrow_udf)")
    pa = importlib.import_module("pyarrow")
    func.__annotations__ = {"values": pa.Array, "return": pa.Array}  # the hints PySpark reads the UDF kind from
    return udf(func, return_type)


def to_avro(
    data: ColumnOrName,
    jsonFormatSchema: str | None = None,
    *,
    schemaRegistryUrl: str | None = None,
    subject: str | None = None,
    autoRegister: bool = True,
    registryConf: Mapping[str, Any] | None = None,
) -> Column:
    """``data`` as Avro binary: schemaless, or framed for the registry at ``schemaRegistryUrl``
    under ``subject`` (the schema registered there unless ``autoRegister=False``, which only looks
    it up). ``registryConf``: more SchemaRegistryClient config (``basic.auth.user.info``...).
    Given ``jsonFormatSchema``, the schema is registered now, on the driver; else (derived from the
    column's type, which a Column does not know yet) by each worker process on first use."""
    registry = registry_conf(schemaRegistryUrl, registryConf)
    if registry is not None and not subject:
        raise ValueError("to_avro with schemaRegistryUrl needs a subject")
    if jsonFormatSchema is not None:
        schema = checked_schema(jsonFormatSchema)
        if registry is not None:  # fail now, on the driver, if the registry refuses the schema
            from ..schema_registry import Schema

            reg = client(registry)
            (reg.register_schema if autoRegister else reg.lookup_schema)(subject, Schema(schema, "AVRO"))
    write = AvroWrite(jsonFormatSchema, registry, subject, autoRegister)

    def encode(values: Any) -> Any:
        return write.encode(values, at_row)

    return _arrow_udf(encode, "binary")(data)  # type: ignore[no-any-return]


def from_avro(
    data: ColumnOrName,
    jsonFormatSchema: str | None = None,
    options: Mapping[str, str] | None = None,
    *,
    schemaRegistryUrl: str | None = None,
    subject: str | None = None,
    registryConf: Mapping[str, Any] | None = None,
) -> Column:
    """Avro binary ``data`` as a column of ``jsonFormatSchema``'s Spark type. With a registry each
    value's writer schema is the one its id names, resolved into the reader schema
    (``jsonFormatSchema``, or ``subject``'s latest version). ``options``: spark-avro's ``mode``,
    ``FAILFAST`` (default: an undecodable value fails the task) or ``PERMISSIVE`` (it becomes null)."""
    registry = registry_conf(schemaRegistryUrl, registryConf)
    read = avro_read(jsonFormatSchema, registry, subject, from_avro_permissive(options))

    def decode(values: Any) -> Any:
        return read.decode(values, at_row)

    return _arrow_udf(decode, read.data_type())(data)  # type: ignore[no-any-return]


def from_avro_permissive(options: Mapping[str, str] | None) -> bool:
    options = dict(options or {})
    mode = str(options.pop("mode", "FAILFAST")).upper()
    if options:
        raise ValueError(f"from_avro option(s) not supported: {', '.join(map(repr, sorted(options)))} (only 'mode')")
    if mode not in FROM_AVRO_MODES:
        raise ValueError(f"from_avro option 'mode' must be FAILFAST or PERMISSIVE, not {mode!r}")
    return mode == "PERMISSIVE"


def avro_read(schema: str | None, registry: RegistryConf | None, subject: str | None, permissive: bool) -> AvroRead:
    """The decoding plan: the reader schema (given, or the subject's latest) and its Spark type."""
    if schema is None:
        if registry is None or not subject:
            raise ValueError("from_avro needs jsonFormatSchema, or schemaRegistryUrl and a subject")
        schema = client(registry).get_latest_version(subject).schema.schema_str
    assert schema is not None
    schema = checked_schema(schema)
    dt, _nullable = spark_type(json.loads(schema))
    return AvroRead(schema, dt.json(), registry, permissive)


def checked_schema(schema: str) -> str:
    """The schema text, refused at once (on the driver) if fastavro cannot parse it."""
    from fastavro import parse_schema

    try:
        parse_schema(json.loads(schema))
    except Exception as e:
        raise AvroSchemaError(f"invalid Avro schema: {e}") from e
    return schema
