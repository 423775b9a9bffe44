"""Strict options through a real session (issue 29): a typo or an unknown option fails the query on
the driver, naming the nearest known option; a stream's refused option reaches the user intact
(not under PySpark's UnboundLocalError). Nothing here reaches a broker: the checks come first."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

NOWHERE = "127.0.0.1:9"  # nothing listens: a check that reached the broker would time out instead


def read_error(spark: SparkSession, **options: str) -> str:
    r = spark.read.format("kafkawire").option("kafka.bootstrap.servers", NOWHERE)
    for k, v in options.items():
        r = r.option(k, v)
    with pytest.raises(Exception) as exc:
        r.load().collect()
    return str(exc.value)


def stream_error(spark: SparkSession, where: Path, **options: str) -> str:
    r = spark.readStream.format("kafkawire").option("kafka.bootstrap.servers", NOWHERE)
    for k, v in options.items():
        r = r.option(k, v)
    with pytest.raises(Exception) as exc:
        query = (
            r.load()
            .writeStream.format("memory")
            .queryName("kw_strict")
            .option("checkpointLocation", str(where))
            .start()
        )
        try:
            query.processAllAvailable()
        finally:
            query.stop()
    return str(exc.value)


def test_read_typos_fail_the_query(spark: SparkSession) -> None:
    message = read_error(spark, subscribe="t", startingOffset="latest")
    assert "Unknown option 'startingoffset' for a kafkawire read. Did you mean 'startingOffsets'?" in message
    message = read_error(spark, subscribe="t", **{"kafka.bogus.option": "1"})
    assert 'Invalid kafka.* option: No such configuration property: "bogus.option"' in message
    assert "joins no consumer group" in read_error(spark, subscribe="t", groupIdPrefix="etl")


def test_write_typos_fail_the_query(spark: SparkSession) -> None:
    df = spark.createDataFrame([("v",)], "value string")
    with pytest.raises(
        Exception, match=re.escape("Unknown option 'topik' for a kafkawire write. Did you mean 'topic'?")
    ):
        df.write.format("kafkawire").mode("append").option("kafka.bootstrap.servers", NOWHERE).option(
            "topik", "t"
        ).save()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"endingOffsets": "latest"}, "ending offset not valid in streaming queries"),
        ({"minOffsetsPerTrigger": "10", "maxOffsetsPerTrigger": "5"}, "is higher than the maxOffsetsPerTrigger(5)"),
        ({"maxTriggerDelay": "soon"}, "option 'maxTriggerDelay' must be a duration"),
        ({"startingOffset": "earliest"}, "Did you mean 'startingOffsets'?"),
    ],
)
def test_stream_option_errors_arrive_intact(
    spark: SparkSession, tmp_path: Path, options: dict[str, str], message: str
) -> None:
    error = stream_error(spark, tmp_path, subscribe="t", **options)
    assert message in error
    assert "UnboundLocalError" not in error
