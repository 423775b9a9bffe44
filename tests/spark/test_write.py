"""Writing to Kafka from Spark (format "kafkawire"), judged by confluent-kafka and by the raw log.

Real PySpark (the shared local[2,4] session) against Tansu. Transactions are judged from the raw
log and its control markers with kafka-python's decoder (Tansu does not hide aborted data from
read_committed readers).
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kafkawire.local_broker import TansuBroker
from tests.harness.judge import consume_all
from tests.harness.raw_log import committed_view, raw_log
from tests.harness.topics import create_topic

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker]

TS0 = 1_700_000_000_000


def _writer(df: DataFrame, bootstrap: str, **options: Any) -> Any:
    w = df.write.format("kafkawire").mode("append").option("kafka.bootstrap.servers", bootstrap)
    for k, v in options.items():
        w = w.option(k, str(v))
    return w


def _summaries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_batch_write_keys_headers_partitions_timestamps(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    n = 200_000
    topic = topic_name("big")
    create_topic(tansu.bootstrap, topic, 3)
    df = spark.range(n, numPartitions=4).selectExpr(
        "concat('k', id) as key",
        "cast(concat('v', id) as binary) as value",
        "cast(id % 3 as int) as partition",
        "array(named_struct('key', 'h', 'value', cast(cast(id as string) as binary))) as headers",
        f"timestamp_millis({TS0} + id) as timestamp",
    )
    summary = tmp_path / "summary.jsonl"
    before = time.time()
    _writer(df, tansu.bootstrap, topic=topic, summaryPath=summary).save()
    after = time.time()

    [s] = _summaries(summary)
    assert s["outcome"] == "committed" and s["rows"] == n and s["failed_tasks"] == 0
    assert s["partitions"] == [[topic, 0], [topic, 1], [topic, 2]]
    assert s["tasks"] == 4 and sum(m["rows"] for m in s["task_messages"]) == n
    # Each task's writing lies inside the job; the write's span runs from the first row to the last task done.
    spans = [(m["first_row_at"], m["done_at"]) for m in s["task_messages"]]
    assert all(before <= start <= end <= after for start, end in spans)
    assert s["writing_seconds"] == max(e for _, e in spans) - min(b for b, _ in spans)

    messages = consume_all(tansu.bootstrap, topic, n, timeout=120)
    assert len(messages) == n
    seen = set()
    for m in messages:
        i = int(m.value()[1:])
        assert m.key() == f"k{i}".encode()
        assert m.partition() == i % 3
        assert m.headers() == [("h", str(i).encode())]
        assert m.timestamp() == (1, TS0 + i)  # CREATE_TIME
        seen.add(i)
    assert len(seen) == n


def test_topic_per_row_and_the_topic_option_overrides(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    a, b, c = topic_name("a"), topic_name("b"), topic_name("c")
    for t in (a, b, c):
        create_topic(tansu.bootstrap, t, 1)
    rows = [(a if i % 2 else b, f"v{i}") for i in range(100)]
    df = spark.createDataFrame(rows, "topic string, value string")
    _writer(df, tansu.bootstrap).save()
    got_a = consume_all(tansu.bootstrap, a, 50)
    got_b = consume_all(tansu.bootstrap, b, 50)
    assert sorted(m.value() for m in got_a) == sorted(f"v{i}".encode() for i in range(1, 100, 2))
    assert sorted(m.value() for m in got_b) == sorted(f"v{i}".encode() for i in range(0, 100, 2))
    # The topic option wins over the column, as in Spark's connector.
    _writer(df, tansu.bootstrap, topic=c).save()
    assert len(consume_all(tansu.bootstrap, c, 100, settle=0.5)) == 100


def _error_text(exc: BaseException) -> str:
    return str(exc)


@pytest.mark.parametrize(
    ("select", "options", "expected"),
    [
        (["cast(id as string) as key"], {"topic": "x"}, "Required attribute 'value' not found"),
        (
            ["id as value"],
            {"topic": "x"},
            "value attribute unsupported type bigint. value must be a(n) string or binary",
        ),
        (["'v' as value", "id as key"], {"topic": "x"}, "key attribute unsupported type bigint"),
        (["'v' as value", "'p' as partition"], {"topic": "x"}, "partition must be a(n) int"),
        (
            ["'v' as value", "'h' as headers"],
            {"topic": "x"},
            "headers must be a(n) array<struct<key:string,value:binary>>",
        ),
        (["'v' as value"], {}, "topic option required when no 'topic' attribute is present"),
        (["'v' as value", "1 as topic"], {}, "topic attribute unsupported type int"),
        (
            ["'v' as value"],
            {"topic": "x", "kafka.key.serializer": "foo"},
            "Kafka option 'key.serializer' is not supported",
        ),
        (
            ["'v' as value"],
            {"topic": "x", "kafka.value.serializer": "foo"},
            "Kafka option 'value.serializer' is not supported",
        ),
        (
            ["'v' as value"],
            {"topic": "x", "kafka.no.such.option": "1"},
            'No such configuration property: "no.such.option"',
        ),
        (["'v' as value"], {"topic": "x", "exactlyOnce": "true"}, "needs the option 'transactionalIdPrefix'"),
    ],
)
def test_bad_input_fails_on_the_driver_with_the_connectors_message(
    spark: SparkSession, tansu: TansuBroker, select: list[str], options: dict[str, str], expected: str
) -> None:
    df = spark.range(3).selectExpr(*select)
    with pytest.raises(Exception) as info:
        _writer(df, tansu.bootstrap, **options).save()
    assert expected in _error_text(info.value)


def test_a_null_topic_fails_the_task_clearly(spark: SparkSession, tansu: TansuBroker) -> None:
    df = spark.createDataFrame([("t1", "a"), (None, "b")], "topic string, value string").coalesce(1)
    with pytest.raises(Exception) as info:
        _writer(df, tansu.bootstrap).save()
    assert "null topic present in the data. Use the topic option for setting a default topic." in _error_text(
        info.value
    )


def test_save_modes(spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("modes")
    create_topic(tansu.bootstrap, topic, 1)
    df = spark.range(10).selectExpr("cast(id as string) as value")
    base = df.write.format("kafkawire").option("kafka.bootstrap.servers", tansu.bootstrap).option("topic", topic)
    # Spark refuses the default mode (ErrorIfExists) for any Python data source before our code runs.
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        base.save()
    with pytest.raises(Exception, match=r'cannot overwrite\. Use \.mode\("append"\)'):
        base.mode("overwrite").save()
    base.mode("append").save()
    assert sorted(m.value() for m in consume_all(tansu.bootstrap, topic, 10, settle=0.5)) == sorted(
        str(i).encode() for i in range(10)
    )


def _json_files(directory: Path, batches: list[list[int]]) -> None:
    directory.mkdir()
    for b, ids in enumerate(batches):
        (directory / f"part-{b:03d}.json").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))


def _stream(spark: SparkSession, source: Path) -> DataFrame:
    return (
        spark.readStream.schema("id long")
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
        .selectExpr("cast(id as string) as key", "concat('v', id) as value")
        .repartition(2)
    )


def _start(df: DataFrame, bootstrap: str, checkpoint: Path, **options: Any) -> Any:
    w = df.writeStream.format("kafkawire").option("kafka.bootstrap.servers", bootstrap)
    w = w.option("checkpointLocation", str(checkpoint))
    for k, v in options.items():
        w = w.option(k, str(v))
    return w.start()


def test_streaming_write_over_several_micro_batches(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    topic = topic_name("stream")
    create_topic(tansu.bootstrap, topic, 2)
    batches = [list(range(b * 100, b * 100 + 100)) for b in range(3)]
    _json_files(tmp_path / "in", batches)
    summary = tmp_path / "summary.jsonl"
    query = _start(
        _stream(spark, tmp_path / "in"), tansu.bootstrap, tmp_path / "ckpt", topic=topic, summaryPath=summary
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    summaries = _summaries(summary)
    assert [s["batch_id"] for s in summaries] == [0, 1, 2]
    assert [s["rows"] for s in summaries] == [100, 100, 100]
    for s in summaries:
        assert {m["batch_id"] for m in s["task_messages"]} == {s["batch_id"]}
    values = sorted(m.value() for m in consume_all(tansu.bootstrap, topic, 300, settle=0.5))
    assert values == sorted(f"v{i}".encode() for b in batches for i in b)


# --- exactly-once --------------------------------------------------------------------------------


def _log_values(bootstrap: str, topic: str, partitions: int) -> tuple[list[bytes], list[bytes]]:
    """(every data record in the raw log, the committed view), over all partitions."""
    raw: list[bytes] = []
    committed: list[bytes] = []
    for p in range(partitions):
        batches = raw_log(bootstrap, topic, p)
        raw += [v for b in batches if not b.control for v in b.values]
        committed += committed_view(batches)
    return raw, committed


def test_exactly_once_batch_write_survives_failed_attempts(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    topic = topic_name("eos")
    control = topic_name("eos-ctl")
    create_topic(tansu.bootstrap, topic, 2)
    n = 4_000
    df = spark.range(n, numPartitions=4).selectExpr("cast(id as string) as key", "concat('v', id) as value")
    summary = tmp_path / "summary.jsonl"
    _writer(
        df,
        tansu.bootstrap,
        topic=topic,
        exactlyOnce="true",
        transactionalIdPrefix=topic_name("txn"),
        exactlyOnceControlTopic=control,
        summaryPath=summary,
        testFailFirstAttemptAfterRows=300,  # every task's attempt 0 dies after flushing 300 rows
    ).save()

    [s] = _summaries(summary)
    assert s["rows"] == n
    assert {m["attempt"] for m in s["task_messages"]} == {1}  # every task needed a second attempt
    raw, committed = _log_values(tansu.bootstrap, topic, 2)
    assert Counter(committed) == Counter(f"v{i}".encode() for i in range(n))  # every row exactly once
    assert len(raw) == n + 4 * 300  # the dead attempts' rows are in the log, never committed


@pytest.mark.slow
def test_exactly_once_streaming_write_with_failures_and_a_replayed_batch(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    topic = topic_name("eos-stream")
    control = topic_name("eos-ctl")
    create_topic(tansu.bootstrap, topic, 1)
    batches = [list(range(b * 500, b * 500 + 500)) for b in range(3)]
    _json_files(tmp_path / "in", batches)
    summary = tmp_path / "summary.jsonl"
    checkpoint = tmp_path / "ckpt"
    options = {
        "topic": topic,
        "exactlyOnce": "true",
        "transactionalIdPrefix": topic_name("txn"),
        "exactlyOnceControlTopic": control,
        "summaryPath": summary,
    }
    query = _start(
        _stream(spark, tmp_path / "in"), tansu.bootstrap, checkpoint, testFailFirstAttemptAfterRows=50, **options
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    first = _summaries(summary)
    assert [(s["batch_id"], s["rows"], s["skipped_tasks"]) for s in first] == [(0, 500, 0), (1, 500, 0), (2, 500, 0)]

    # The driver "crashed" after the sink committed batch 2 but before Spark logged it: Spark
    # replays batch 2 on restart; its tasks find their markers committed and write nothing.
    for name in ("2", ".2.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    query = _start(_stream(spark, tmp_path / "in"), tansu.bootstrap, checkpoint, **options)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    replay = _summaries(summary)[len(first) :]
    assert [s["batch_id"] for s in replay] == [2]
    assert replay[0]["rows"] == 0 and replay[0]["skipped_tasks"] == replay[0]["tasks"] > 0

    raw, committed = _log_values(tansu.bootstrap, topic, 1)
    assert Counter(committed) == Counter(f"v{i}".encode() for b in batches for i in b)
    assert len(raw) > len(committed)  # the killed attempts' rows are there, aborted
    shutil.rmtree(checkpoint)
