"""Records to columns for a streaming transform: the source's ``key`` as a string and ``value``
decoded per ``--value-format``, next to ``topic``, ``partition``, ``offset``, ``timestamp``.

- ``json``: ``value`` becomes a struct of the given schema (``--value-schema`` DDL), else of a
  schema Spark infers from the first records of each partition. Parsed with ``FAILFAST``: a
  record that is not JSON fails the run (and ``badrow.py`` names it) instead of turning into nulls.
- ``string``: ``value`` as UTF-8 text.
- ``avro``: Confluent-framed Avro (``--schema-registry``): ``value`` becomes a struct of the
  subject ``<topic>-value``'s latest schema, each record's writer schema (the id it carries)
  resolved into it by `kafkawire.spark.functions.from_avro`; a value that is not such Avro fails
  the run, as a bad JSON record does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

DECODE_FORMATS = ("json", "string", "avro")
SAMPLE_PER_PARTITION = 200
SOURCE_VIEW = "source"


class DecodeError(ValueError):
    """The value format or schema cannot be used as given."""


def parse_schema(ddl: str) -> StructType:
    """A DDL string (``order_id long, customer string``) as a StructType, checked by Spark."""
    from pyspark.sql.types import StructType, _parse_datatype_string

    try:
        parsed = _parse_datatype_string(ddl)
    except Exception as exc:
        raise DecodeError(f"--value-schema {ddl!r} is not a Spark DDL schema: {str(exc).splitlines()[0]}") from None
    if not isinstance(parsed, StructType):
        raise DecodeError(f"--value-schema must list columns (name type, ...), not {parsed.simpleString()}")
    return parsed


def decode(
    frame: DataFrame, value_format: str, value_schema: StructType | None, registry: str | None = None, topic: str = ""
) -> DataFrame:
    """``frame`` (the kafkawire source's columns) with key and value decoded; ``registry`` and the
    source ``topic`` are for avro values."""
    from pyspark.sql import functions as F

    if value_format == "avro":
        value = avro_values(registry, topic)
    elif value_format == "json":
        if value_schema is None:
            raise DecodeError("json values need a schema")
        value = F.from_json(F.col("value").cast("string"), value_schema, {"mode": "FAILFAST"})
    elif value_format == "string":
        value = F.col("value").cast("string")
    else:
        raise DecodeError(f"unknown value format {value_format!r}; choose one of {', '.join(DECODE_FORMATS)}")
    return frame.select(
        F.col("key").cast("string").alias("key"),
        value.alias("value"),
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    )


def avro_values(registry: str | None, topic: str) -> Column:
    """The ``value`` column decoded from Confluent-framed Avro, read as ``<topic>-value``'s latest
    schema (asked of the registry now, on the driver)."""
    from pyspark.sql import functions as F

    from kafkawire.spark.functions import from_avro

    if registry is None:
        raise DecodeError("avro values need --schema-registry (the registry their schema ids refer to)")
    subject = f"{topic}-value"
    try:
        return from_avro(F.col("value"), schemaRegistryUrl=registry, subject=subject)
    except Exception as exc:  # the registry's answer (no such subject, unreachable) or a schema Spark cannot hold
        raise DecodeError(
            f"avro values of {topic!r}: no usable schema under subject {subject!r} at {registry}: {exc}"
        ) from None


def infer_json_schema(
    spark: SparkSession, bootstrap: str, topic: str, starts: dict[int, int], ends: dict[int, int]
) -> StructType:
    """The schema Spark infers from up to ``SAMPLE_PER_PARTITION`` values at each partition's start."""
    import json

    ranges = {p: (starts[p], min(ends[p], starts[p] + SAMPLE_PER_PARTITION)) for p in ends}
    ranges = {p: r for p, r in ranges.items() if r[1] > r[0]}
    if not ranges:
        raise DecodeError(f"topic {topic!r} holds no records to infer a JSON schema from: give --value-schema")
    sample = (
        spark.read.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("assign", json.dumps({topic: sorted(ranges)}))
        .option("startingOffsets", json.dumps({topic: {str(p): r[0] for p, r in ranges.items()}}))
        .option("endingOffsets", json.dumps({topic: {str(p): r[1] for p, r in ranges.items()}}))
        .load()
    )
    texts = sample.selectExpr("cast(value as string) AS value").where("value IS NOT NULL")
    from kafkawire.pipeline.session import is_connect

    if is_connect(spark):  # no RDDs: Spark (4.2+) infers from a frame of JSON texts
        schema = spark.read.json(texts).schema
    else:  # a classic session of any Spark 4 infers from an RDD of them
        lines = [row[0] for row in texts.collect()]
        schema = spark.read.json(spark.sparkContext.parallelize(lines, 1)).schema
    if "_corrupt_record" in schema.fieldNames() or not schema.fields:
        raise DecodeError(f"the first records of {topic!r} are not JSON objects: give --value-format string")
    return schema
