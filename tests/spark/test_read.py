"""Reading Kafka with Spark (format "kafkawire"): batch and streaming, what confluent-kafka wrote.

Offset resolution (``latest``, ``endingOffsets`` -1) is judged on the mock cluster: Tansu's
ListOffsets "latest" answers the last batch's base offset + 1. read_committed is judged on Tansu:
the mock cluster writes its transaction markers with a zero CRC.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import confluent_kafka
import pytest

from kafkawire.local_broker import TansuBroker
from tests.harness.judge import Record, judge_config, produce_with_confluent
from tests.harness.mock_cluster import MockCluster
from tests.harness.topics import create_topic

if TYPE_CHECKING:
    from pyspark.sql import DataFrameReader, SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker]

WAIT = 30.0
T0 = 1_700_000_000_000


def reader(spark: SparkSession, bootstrap: str, **options: str) -> DataFrameReader:
    r = spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        r = r.option(k, v)
    return r


def test_batch_read_of_what_confluent_wrote(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("sread")
    create_topic(tansu.bootstrap, topic, 2)
    written = [
        Record(
            b"value-%d" % i,
            key=None if i % 10 == 0 else b"key-%d" % i,
            headers=[("n", b"%d" % i), ("empty", None)] if i % 3 else [],
            partition=i % 2,
            timestamp_ms=T0 + i,
        )
        for i in range(200)
    ]
    delivered = produce_with_confluent(
        tansu.bootstrap, topic, written, config={"compression.type": "lz4", "linger.ms": 20}
    )
    ends = {str(p): max(o for q, o in delivered if q == p) + 1 for p in (0, 1)}
    df = reader(
        spark,
        tansu.bootstrap,
        subscribe=topic,
        includeHeaders="true",
        startingOffsets=json.dumps({topic: {"0": -2, "1": -2}}),
        endingOffsets=json.dumps({topic: ends}),
    ).load()
    rows = {(r.partition, r.offset): r for r in df.selectExpr("*", "unix_millis(timestamp) AS ts_ms").collect()}
    assert len(rows) == 200
    for (p, o), rec in zip(delivered, written, strict=True):
        row = rows[(p, o)]
        assert row.topic == topic and row.key == rec.key and row.value == rec.value
        assert row.ts_ms == rec.timestamp_ms
        assert row.timestampType == 0
        assert (None if row.headers is None else [(h.key, h.value) for h in row.headers]) == (list(rec.headers) or None)

    # An offset range of one partition; the other partition's range is empty.
    ranged = reader(
        spark,
        tansu.bootstrap,
        assign=json.dumps({topic: [0, 1]}),
        startingOffsets=json.dumps({topic: {"0": 17, "1": 3}}),
        endingOffsets=json.dumps({topic: {"0": 42, "1": 3}}),
        maxRecordsPerPartition="10",
    ).load()
    assert ranged.rdd.getNumPartitions() == 3
    got = sorted((r.partition, r.offset, r.value) for r in ranged.select("partition", "offset", "value").collect())
    assert got == [(0, o, rows[(0, o)].value) for o in range(17, 42)]


def test_headers_of_more_records_than_one_arrow_batch(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    """One Fetch answer holding more records than an Arrow batch (ARROW_BATCH_ROWS): every row keeps
    its own headers."""
    topic = topic_name("hdrs")
    create_topic(tansu.bootstrap, topic, 1)
    count = 20_000
    written = [Record(b"v%d" % i, headers=[("i", b"%d" % i)] if i % 2 else [], partition=0) for i in range(count)]
    produce_with_confluent(
        tansu.bootstrap, topic, written, config={"linger.ms": 50, "batch.num.messages": 10_000}, timeout=60
    )
    df = reader(
        spark, tansu.bootstrap, subscribe=topic, includeHeaders="true", endingOffsets=json.dumps({topic: {"0": count}})
    ).load()
    got = {row.offset: row.headers for row in df.select("offset", "headers").collect()}
    assert sorted(got) == list(range(count))
    for i, headers in got.items():
        assert (None if headers is None else [(h.key, h.value) for h in headers]) == (written[i].headers or None)


def test_latest_and_ending_offsets_on_the_mock_cluster(
    spark: SparkSession, mock_cluster: MockCluster, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("latest")
    mock_cluster.create_topic(topic, partitions=3)
    produce_with_confluent(
        mock_cluster.bootstraps,
        topic,
        [Record(b"%d" % i, partition=i % 3) for i in range(90)],
        config={"linger.ms": 20},
    )
    everything = reader(spark, mock_cluster.bootstraps, subscribe=topic).load()
    summary = everything.groupBy("partition").agg({"offset": "max", "*": "count"}).toDF("partition", "last", "n")
    counts = {r.partition: (r.n, r.last) for r in summary.collect()}
    assert counts == {0: (30, 29), 1: (30, 29), 2: (30, 29)}
    ends = json.dumps({topic: {"0": -1, "1": 12, "2": -1}})
    part = reader(spark, mock_cluster.bootstraps, subscribePattern=topic.replace("-", "."), endingOffsets=ends).load()
    assert part.filter("partition = 1").count() == 12 and part.count() == 72


def test_streaming_read_in_micro_batches(
    spark: SparkSession, mock_cluster: MockCluster, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    topic = topic_name("stream")
    mock_cluster.create_topic(topic, partitions=2)
    produce_with_confluent(mock_cluster.bootstraps, topic, [Record(b"s%d" % i, partition=i % 2) for i in range(100)])
    name = "kw_" + topic.replace("-", "_")
    query = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", mock_cluster.bootstraps)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "30")
        .load()
        .selectExpr("CAST(value AS STRING) AS v", "partition", "offset")
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(120)
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    finally:
        query.stop()
    rows = spark.sql(f"SELECT v, partition, offset FROM {name}").collect()
    assert sorted(r.v for r in rows) == sorted(f"s{i}" for i in range(100))
    assert sizes == [30, 30, 30, 10]
    assert all(r.v == f"s{2 * r.offset + r.partition}" for r in rows)


def test_read_committed_shows_only_committed_rows(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("rc")
    create_topic(tansu.bootstrap, topic, 1)
    producer = confluent_kafka.Producer(
        judge_config(tansu.bootstrap, **{"transactional.id": topic_name("tid"), "linger.ms": 5})
    )
    producer.init_transactions(WAIT)
    for name, commit in (("yes1", True), ("no1", False), ("yes2", True)):
        producer.begin_transaction()
        for i in range(4):
            producer.produce(topic, b"%s-%d" % (name.encode(), i), partition=0)
        producer.flush(WAIT)
        (producer.commit_transaction if commit else producer.abort_transaction)(WAIT)
    # A last one-record batch, so Tansu's "latest" (last base offset + 1) is the true end.
    produce_with_confluent(tansu.bootstrap, topic, [Record(b"plain", partition=0)])

    def values(**options: str) -> list[bytes]:
        df = reader(spark, tansu.bootstrap, subscribe=topic, **options).load()
        return [r.value for r in df.orderBy("offset").collect()]

    expected = [b"yes1-%d" % i for i in range(4)] + [b"yes2-%d" % i for i in range(4)] + [b"plain"]
    assert values(**{"kafka.isolation.level": "read_committed"}) == expected
    assert len(values()) == 13  # read_uncommitted: the aborted records too, never the markers


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "One of the following options must be specified for Kafka source"),
        (
            {"subscribe": "t", "kafka.auto.offset.reset": "earliest"},
            "Kafka option 'auto.offset.reset' is not supported",
        ),
        ({"subscribe": "t", "startingOffsets": "latest"}, "starting offset can't be latest for batch queries on Kafka"),
    ],
)
def test_bad_options_say_why(spark: SparkSession, options: dict[str, Any], message: str) -> None:
    with pytest.raises(Exception, match=message):
        reader(spark, "127.0.0.1:9", **options).load().collect()


def test_streaming_refuses_ending_offsets(spark: SparkSession, tmp_path: Path) -> None:
    stream = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", "127.0.0.1:9")
        .option("subscribe", "t")
        .option("endingOffsets", "latest")
        .load()
    )
    with pytest.raises(Exception, match="ending offset not valid in streaming queries"):
        q = stream.writeStream.format("memory").queryName("kw_bad").option("checkpointLocation", str(tmp_path)).start()
        try:
            q.processAllAvailable()
        finally:
            q.stop()


def test_timestamp_options_without_a_match(mock_cluster: MockCluster, topic_name: Callable[[str], str]) -> None:
    """The mock cluster answers every ListOffsets timestamp lookup with "no match" (-1), which is the
    connector's interesting case: a start then fails (or goes to latest with
    startingOffsetsByTimestampStrategy=latest), an end becomes latest. No session needed."""
    from kafkawire.client.network_client import Client
    from kafkawire.spark.read_options import ReadOptionError, batch_options
    from kafkawire.spark.reader import assigned_partitions, resolve

    topic = topic_name("ts")
    mock_cluster.create_topic(topic, partitions=2)
    produce_with_confluent(mock_cluster.bootstraps, topic, [Record(b"x", partition=i % 2) for i in range(6)])
    base = {"kafka.bootstrap.servers": mock_cluster.bootstraps, "subscribe": topic}
    opts = batch_options({**base, "startingTimestamp": str(T0), "endingTimestamp": str(T0 + 1)})
    with Client(opts.kafka) as client:
        tps = assigned_partitions(client, opts)
        assert tps == [(topic, 0), (topic, 1)]
        with pytest.raises(ReadOptionError, match=f"No offset matched from request of topic-partition {topic}-0"):
            resolve(client, opts, opts.starting, tps, starting=True)
        assert resolve(client, opts, opts.ending, tps, starting=False) == dict.fromkeys(tps, 3)
        lenient = batch_options({**base, "startingTimestamp": str(T0), "startingOffsetsByTimestampStrategy": "latest"})
        assert resolve(client, lenient, lenient.starting, tps, starting=True) == dict.fromkeys(tps, 3)
