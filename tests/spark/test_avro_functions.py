"""kafkawire.spark.functions.to_avro/from_avro in real PySpark: schemaless Avro judged by fastavro,
framed Avro judged by confluent-kafka's AvroSerializer/AvroDeserializer through one registry
(confluent's logic behind registry_front.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from fastavro import parse_schema, schemaless_reader, schemaless_writer

from kafkawire.spark.avro_types import schema_json
from kafkawire.spark.functions import from_avro, to_avro
from tests.serde.registry_front import RegistryFront, registry_front

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = [pytest.mark.spark]

DDL = (
    "id long not null, name string, score double, ok boolean, born date, seen timestamp, "
    "price decimal(10,2), tags array<string>, attrs map<string,int>, inner struct<a:int,b:string>, raw binary"
)
CTX = SerializationContext("orders", MessageField.VALUE)


@pytest.fixture
def front() -> Iterator[RegistryFront]:
    with registry_front() as f:
        yield f


def _rows(n: int) -> list[tuple[Any, ...]]:
    return [
        (
            i,
            None if i % 3 == 0 else f"n\u00e9{i}",
            i * 0.5,
            i % 2 == 0,
            date(2024, 1, 1 + i % 28),
            datetime(2024, 5, 1, 12, 0, i % 60, tzinfo=timezone.utc),
            Decimal(f"{i}.25"),
            ["t"] * (i % 3),
            {"k": i},
            (i, f"b{i}"),
            bytes([i % 256]),
        )
        for i in range(n)
    ]


def _frame(spark: SparkSession, n: int = 40) -> DataFrame:
    return spark.createDataFrame(_rows(n), DDL).repartition(2)


def _dicts(df: DataFrame) -> list[dict[str, Any]]:
    return sorted((r.asDict(recursive=True) for r in df.collect()), key=lambda d: d["id"])


def test_schemaless_derived_schema_bytes_and_round_trip(spark: SparkSession) -> None:
    from pyspark.sql import functions as F

    df = _frame(spark)
    schema = schema_json(df.schema)
    loaded = json.loads(schema)
    assert loaded["name"] == "topLevelRecord"
    by_name = {f["name"]: f["type"] for f in loaded["fields"]}
    assert by_name["id"] == "long" and by_name["name"] == ["null", "string"]
    assert by_name["inner"][1]["name"] == "inner" and by_name["inner"][1]["namespace"] == "inner"
    encoded = df.select("id", to_avro(F.struct(*df.columns)).alias("v"))
    parsed = parse_schema(loaded)
    got = {r.id: bytes(r.v) for r in encoded.collect()}
    # fastavro decodes what Spark wrote, and writes the same bytes for the decoded value
    for i, data in got.items():
        value = schemaless_reader(io.BytesIO(data), parsed, parsed)
        assert value["id"] == i and value["attrs"] == {"k": i} and value["inner"] == {"a": i, "b": f"b{i}"}
        again = io.BytesIO()
        schemaless_writer(again, parsed, value)
        assert again.getvalue() == data
    back = encoded.select(from_avro("v", schema).alias("r")).select("r.*")
    assert _dicts(back) == _dicts(df)


def test_registry_bytes_equal_confluents_and_cross_decoded(spark: SparkSession, front: RegistryFront) -> None:
    from pyspark.sql import functions as F

    df = _frame(spark, 20).drop("seen", "born", "price")  # plain Avro types: both sides' dicts compare
    schema = schema_json(df.schema)
    ours = df.select(
        "id", to_avro(F.struct(*df.columns), schemaRegistryUrl=front.url, subject="orders-value").alias("v")
    )
    got = {r.id: bytes(r.v) for r in ours.collect()}
    theirs = TheirSerializer(front.registry, schema)
    their_reader = TheirDeserializer(front.registry)
    for row in df.collect():
        value = row.asDict(recursive=True)
        assert got[value["id"]] == theirs(value, CTX)
        assert got[value["id"]][0] == 0
        assert their_reader(got[value["id"]], CTX) == value
    # Spark reads what confluent-kafka wrote, its reader schema the subject's latest version
    written = spark.createDataFrame([(theirs(r.asDict(recursive=True), CTX),) for r in df.collect()], "v binary")
    decoded = written.select(from_avro("v", schemaRegistryUrl=front.url, subject="orders-value").alias("r"))
    assert _dicts(decoded.select("r.*")) == _dicts(df)
    assert ("POST", "/subjects/orders-value/versions") in front.requests


def test_auto_register_off_needs_the_schema_registered(spark: SparkSession, front: RegistryFront) -> None:
    from pyspark.sql import functions as F

    df = spark.range(3)
    with pytest.raises(Exception, match=r"(?i)schema not found"):
        to_avro(
            F.struct("id"), schema_json(df.schema), schemaRegistryUrl=front.url, subject="x-value", autoRegister=False
        )


@pytest.mark.slow  # each failing task is retried 4 times
def test_wrong_magic_or_unknown_id_fails_naming_the_row(spark: SparkSession, front: RegistryFront) -> None:
    from confluent_kafka.schema_registry import Schema

    schema = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
    front.registry.register_schema("r-value", Schema(schema, "AVRO"))
    bad = spark.createDataFrame([(b"\x07\x00\x00\x00\x01\x02",), (b"\x00\x00\x00\x03\xe7\x02",)], "v binary")
    for i in range(2):
        one = bad.limit(i + 1).tail(1)
        df = spark.createDataFrame(one, "v binary")
        with pytest.raises(Exception, match=r"(?s)Avro decoding failed at row 0.*(magic byte|unknown schema)"):
            df.select(from_avro("v", schemaRegistryUrl=front.url, subject="r-value")).collect()
    lenient = bad.select(from_avro("v", options={"mode": "PERMISSIVE"}, schemaRegistryUrl=front.url, subject="r-value"))
    assert [r[0] for r in lenient.collect()] == [None, None]
    with pytest.raises(ValueError, match="'nope'"):
        from_avro("v", schema, {"nope": "1"})
