"""Rows to Kafka records: the ``key`` and ``value`` columns the kafkawire data source writes.

- ``json`` (default): Spark's ``to_json`` of the whole row (in the JVM, no Python per row).
- ``string``: a single column's text, or several columns' texts joined with ``,`` (null as empty).
- ``avro``: one Avro binary datum per row, by `kafkawire.spark.functions.to_avro` (whole Arrow
  batches through fastavro): the schema derived from the input's Spark schema; with a Schema
  Registry it is registered under ``<topic>-value`` and each value framed (magic byte 0, schema id).

The key is ``--key-column`` as a string (null stays null: the producer's sticky partitioner places
those rows). The value holds every column, the key column included, so a consumer needs only it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

VALUE_FORMATS = ("json", "avro", "string")
STRING_SEPARATOR = ","


class SerializeError(ValueError):
    """The input cannot be turned into records as asked (a missing column, an unsupported type)."""


@dataclass
class Serialized:
    frame: DataFrame  # columns key (string), value (string or binary)
    avro_schema: str | None = None  # the writer's schema, for --value-format avro
    subject: str | None = None  # where it is registered, with a Schema Registry


def serialize(
    df: DataFrame, value_format: str, key_column: str | None, registry: str | None = None, topic: str | None = None
) -> Serialized:
    """``df`` as records: see the module docstring. Raises :class:`SerializeError` before any job runs
    (with ``registry``, after the schema was registered under ``<topic>-value``)."""
    from pyspark.sql import functions as F

    if value_format not in VALUE_FORMATS:
        raise SerializeError(f"unknown value format {value_format!r}; choose one of {', '.join(VALUE_FORMATS)}")
    columns = df.columns
    if not columns:
        raise SerializeError("the input has no columns")
    if key_column is not None and key_column not in columns:
        raise SerializeError(f"key column {key_column!r} is not in the input; its columns are: {', '.join(columns)}")
    key = F.col(f"`{key_column}`").cast("string") if key_column is not None else F.lit(None).cast("string")
    row = F.struct(*[F.col(f"`{c}`") for c in columns])

    if value_format == "avro":
        from kafkawire.spark.avro_types import AvroSchemaError, schema_json
        from kafkawire.spark.functions import to_avro

        subject = f"{topic}-value" if registry is not None else None
        try:
            schema = schema_json(df.schema)
            value = to_avro(row, schema, schemaRegistryUrl=registry, subject=subject)
        except AvroSchemaError as exc:
            raise SerializeError(str(exc)) from None
        return Serialized(df.select(key.alias("key"), value.alias("value")), schema, subject)
    if registry is not None:
        raise SerializeError("a Schema Registry is for --value-format avro")

    if value_format == "json":
        value = F.to_json(row)
    elif len(columns) == 1:
        value = F.col(f"`{columns[0]}`").cast("string")
    else:
        texts = [F.coalesce(F.col(f"`{c}`").cast("string"), F.lit("")) for c in columns]
        value = F.concat_ws(STRING_SEPARATOR, *texts)
    return Serialized(df.select(key.alias("key"), value.alias("value")))
