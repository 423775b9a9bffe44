"""The data source's ``keyFormat``/``valueFormat`` options: Avro key and value columns, framed for
a Schema Registry when ``schemaRegistryUrl`` is given.

- ``keyFormat``/``valueFormat``: ``binary`` (default: the connector's bytes) or ``avro``.
- ``schemaRegistryUrl``, plus ``schemaRegistry.<name>`` for any other SchemaRegistryClient
  setting (``schemaRegistry.basic.auth.user.info``...).
- ``keySubject``/``valueSubject``: default ``<topic>-key``/``<topic>-value`` (confluent's topic
  strategy) when the write's ``topic`` option, or the read's one subscribed topic, names it.
- ``keyAvroSchema``/``valueAvroSchema``: write: the writer schema (default: derived from the
  column's Spark type); read: the reader schema (default: the subject's latest version; required
  without a registry).
- ``autoRegisterSchemas`` (write, default true): register the schema, else only look it up.

Everything is checked on the driver, the writer schema registered there; the workers encode and
decode whole Arrow batches (`kafkawire.spark.avro_codec`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .options import REGISTRY_PREFIX, bool_option, source_option

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

    from .avro_codec import AvroRead, AvroWrite, RegistryConf

FIELDS = ("key", "value")


def _format(options: Mapping[str, str], field: str) -> str:
    name = f"{field}Format"
    raw = (source_option(options, name) or "binary").strip().lower()
    if raw not in ("binary", "avro"):
        raise ValueError(f"option '{name}' must be binary or avro, not {raw!r}")
    return raw


def avro_fields(options: Mapping[str, str]) -> list[str]:
    """The columns (``key``, ``value``) the options make Avro."""
    return [f for f in FIELDS if _format(options, f) == "avro"]


def _registry(options: Mapping[str, str]) -> RegistryConf | None:
    from .functions import registry_conf

    extra = {k[len(REGISTRY_PREFIX) :]: v for k, v in options.items() if k.lower().startswith(REGISTRY_PREFIX)}
    return registry_conf(source_option(options, "schemaRegistryUrl"), extra)


def _subject(options: Mapping[str, str], field: str, topic: str | None) -> str:
    subject = source_option(options, f"{field}Subject")
    if subject:
        return subject
    if not topic:
        raise ValueError(f"option '{field}Subject' is needed when no single topic names the subject (<topic>-{field})")
    return f"{topic}-{field}"


def write_formats(options: Mapping[str, str], schema: StructType, topic: str | None) -> dict[str, AvroWrite]:
    """The Avro columns of a write and how to encode each; the schemas registered (or looked up)."""
    fields = avro_fields(options)
    if not fields:
        return {}
    from .avro_codec import AvroWrite
    from .avro_types import schema_json
    from .functions import checked_schema, client

    registry = _registry(options)
    auto_register = bool_option(options, "autoRegisterSchemas", True)
    types = {f.name: f.dataType for f in schema.fields}
    plans: dict[str, AvroWrite] = {}
    for field in fields:
        if field not in types:
            continue  # no key column: no key; a missing value column is refused by validate_schema
        given = source_option(options, f"{field}AvroSchema")
        avro = checked_schema(given) if given else schema_json(types[field])
        subject = _subject(options, field, topic) if registry is not None else None
        if registry is not None:
            from ..schema_registry import Schema

            reg = client(registry)
            (reg.register_schema if auto_register else reg.lookup_schema)(subject, Schema(avro, "AVRO"))
        plans[field] = AvroWrite(avro, registry, subject, auto_register)
    return plans


def _read_topic(options: Mapping[str, str]) -> str | None:
    topics = [t.strip() for t in (source_option(options, "subscribe") or "").split(",") if t.strip()]
    return topics[0] if len(topics) == 1 else None


def read_formats(options: Mapping[str, str]) -> dict[str, AvroRead]:
    """The Avro columns of a read and how to decode each (reader schemas fetched on the driver)."""
    from .functions import avro_read

    registry = _registry(options)
    plans: dict[str, AvroRead] = {}
    for field in avro_fields(options):
        given = source_option(options, f"{field}AvroSchema")
        subject = _subject(options, field, _read_topic(options)) if registry is not None and not given else None
        if registry is None and not given:
            raise ValueError(f"{field}Format=avro without schemaRegistryUrl needs the option '{field}AvroSchema'")
        plans[field] = avro_read(given, registry, subject, permissive=False)
    return plans


def column_type(plans: Mapping[str, AvroRead], field: str, default: DataType) -> DataType:
    plan = plans.get(field)
    return plan.data_type() if plan is not None else default


def encode_batch(batch: Any, plans: Mapping[str, AvroWrite], where: str) -> Any:
    """``batch`` with its Avro columns encoded to binary."""
    if not plans:
        return batch
    pa = __import__("pyarrow")
    names = batch.schema.names
    columns = [
        plans[name].encode(batch.column(i), lambda row: f" at row {row} of {where}")
        if name in plans
        else batch.column(i)
        for i, name in enumerate(names)
    ]
    return pa.RecordBatch.from_arrays(columns, names=names)
