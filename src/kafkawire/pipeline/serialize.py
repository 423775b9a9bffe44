"""Rows to Kafka records: the ``key`` and ``value`` columns the kafkawire data source writes.

- ``json`` (default): Spark's ``to_json`` of the whole row (in the JVM, no Python per row).
- ``string``: a single column's text, or several columns' texts joined with ``,`` (null as empty).
- ``avro``: one Avro binary datum per row, encoded by ``avro.py`` in a Python UDF. Not
  ``mapInArrow``: PySpark requires pandas for that, and the pipeline needs only pyarrow.

The key is ``--key-column`` as a string (null stays null: the producer's sticky partitioner places
those rows). The value holds every column, the key column included, so a consumer needs only it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

VALUE_FORMATS = ("json", "avro", "string")
STRING_SEPARATOR = ","


class SerializeError(ValueError):
    """The input cannot be turned into records as asked (a missing column, an unsupported type)."""


@dataclass
class Serialized:
    frame: DataFrame  # columns key (string), value (string or binary)
    avro_schema: str | None = None  # the writer's schema, for --value-format avro


def serialize(df: DataFrame, value_format: str, key_column: str | None) -> Serialized:
    """``df`` as records: see the module docstring. Raises :class:`SerializeError` before any job runs."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType

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
        from kafkawire.pipeline.avro import AvroSchemaError, schema_json

        try:
            schema = schema_json(df.schema)
        except AvroSchemaError as exc:
            raise SerializeError(str(exc)) from None
        encode = F.udf(avro_udf(df.schema), BinaryType(), useArrow=False)
        return Serialized(df.select(key.alias("key"), encode(row).alias("value")), schema)

    if value_format == "json":
        value = F.to_json(row)
    elif len(columns) == 1:
        value = F.col(f"`{columns[0]}`").cast("string")
    else:
        texts = [F.coalesce(F.col(f"`{c}`").cast("string"), F.lit("")) for c in columns]
        value = F.concat_ws(STRING_SEPARATOR, *texts)
    return Serialized(df.select(key.alias("key"), value.alias("value")))


def avro_udf(schema: StructType) -> Callable[[Any], bytes]:
    """The UDF body: a Row in, its Avro datum out. The encoder is compiled once per worker process
    (on the first row), not pickled: only the Spark schema travels with the function."""
    compiled: list[Callable[[Any], bytes]] = []

    def encode(row: Any) -> bytes:
        if not compiled:
            from kafkawire.pipeline.avro import row_encoder

            compiled.append(row_encoder(schema))
        return compiled[0](row)

    return encode
