"""An empty read is a normal read: an empty DataFrame with the source's columns, batch and streaming.

The cases: an empty topic, a start equal to its end, and startingOffsetsByTimestampStrategy=latest
with a timestamp after every record (the start becomes the log's end). The timestamp case runs on
librdkafka's mock cluster, whose ListOffsets finds no offset for any timestamp (the case the strategy
is for); the others on Tansu.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kafkawire.local_broker import TansuBroker
from tests.harness.judge import Record, produce_with_confluent
from tests.harness.mock_cluster import MockCluster
from tests.harness.topics import create_topic

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker]

COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
FUTURE_MS = 4_102_444_800_000  # 2100-01-01


def batch(spark: SparkSession, bootstrap: str, **options: str) -> DataFrame:
    r = spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def streamed(spark: SparkSession, bootstrap: str, where: Path, name: str, **options: str) -> tuple[int, list[int]]:
    """Rows a Trigger.AvailableNow query saw, and its micro-batches' sizes."""
    r = spark.readStream.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        r = r.option(k, v)
    query = (
        r.load()
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(where))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(120)
        assert query.exception() is None
        sizes = [p["numInputRows"] for p in query.recentProgress]
    finally:
        query.stop()
    return spark.table(name).count(), sizes


def test_empty_topic(spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path) -> None:
    topic = topic_name("empty")
    create_topic(tansu.bootstrap, topic, 3)
    df = batch(spark, tansu.bootstrap, subscribe=topic)
    assert df.columns == COLUMNS
    assert df.collect() == []
    assert df.count() == 0
    name = "kw_" + topic.replace("-", "_")
    rows, sizes = streamed(spark, tansu.bootstrap, tmp_path, name, subscribe=topic, startingOffsets="earliest")
    assert rows == 0 and not any(sizes)


def test_start_equal_to_end(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    topic = topic_name("same")
    create_topic(tansu.bootstrap, topic, 2)
    produce_with_confluent(tansu.bootstrap, topic, [Record(b"%d" % i, partition=i % 2) for i in range(10)])
    at = json.dumps({topic: {"0": 3, "1": 3}})
    df = batch(spark, tansu.bootstrap, assign=json.dumps({topic: [0, 1]}), startingOffsets=at, endingOffsets=at)
    assert df.columns == COLUMNS and df.collect() == []
    name = "kw_" + topic.replace("-", "_")
    # A stream starting at each partition's end: nothing to read.
    end = json.dumps({topic: {"0": 5, "1": 5}})
    rows, sizes = streamed(spark, tansu.bootstrap, tmp_path, name, subscribe=topic, startingOffsets=end)
    assert rows == 0 and not any(sizes)


def test_future_timestamp_with_latest_strategy(
    spark: SparkSession, mock_cluster: MockCluster, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    topic = topic_name("future")
    mock_cluster.create_topic(topic, partitions=2)
    produce_with_confluent(mock_cluster.bootstraps, topic, [Record(b"%d" % i, partition=i % 2) for i in range(8)])
    options = {
        "subscribe": topic,
        "startingTimestamp": str(FUTURE_MS),
        "startingOffsetsByTimestampStrategy": "latest",
    }
    df = batch(spark, mock_cluster.bootstraps, **options)
    assert df.columns == COLUMNS and df.collect() == []
    by_partition = json.dumps({topic: {"0": FUTURE_MS, "1": FUTURE_MS}})
    df = batch(
        spark,
        mock_cluster.bootstraps,
        subscribe=topic,
        startingOffsetsByTimestamp=by_partition,
        startingOffsetsByTimestampStrategy="latest",
    )
    assert df.count() == 0
    name = "kw_" + topic.replace("-", "_")
    rows, sizes = streamed(spark, mock_cluster.bootstraps, tmp_path, name, **options)
    assert rows == 0 and not any(sizes)
