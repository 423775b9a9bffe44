"""The streaming pipeline (``kafkawire pipeline --from-topic``): a topic read by Structured Streaming
through the kafkawire data source, transformed with SQL, written to a topic or files; judged by
confluent-kafka (read_committed) and by Spark reading the files back."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kafkawire.local_broker import TansuBroker
from kafkawire.pipeline import PipelineError
from kafkawire.pipeline.stream import StreamOptions, check_stream_options, parse_trigger, run_stream
from tests.harness.judge import Record, consume_all, produce_with_confluent
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker]

SCHEMA = "id long, customer string, qty int, status string"


def _order(i: int) -> dict[str, Any]:
    return {"id": i, "customer": f"c{i % 7}", "qty": 1 + i % 3, "status": "paid" if i % 4 else "cancelled"}


def _fill(bootstrap: str, topic: str, ids: range, partitions: int = 3) -> None:
    records = [Record(json.dumps(_order(i)).encode(), f"c{i % 7}".encode(), partition=i % partitions) for i in ids]
    produce_with_confluent(bootstrap, topic, records, timeout=60)


def _run(opts: StreamOptions, spark: SparkSession) -> tuple[Any, str, str]:
    out, err = io.StringIO(), io.StringIO()
    summary = run_stream(opts, spark=spark, out=out, err=err)
    return summary, out.getvalue(), err.getvalue()


TRANSFORM = (
    "SELECT value.id AS id, value.customer AS customer, value.qty * 10 AS cents, partition AS source_partition "
    "FROM source WHERE value.status = 'paid'"
)


@pytest.mark.slow
def test_topic_to_topic_with_a_transform_in_micro_batches(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    source, sink = topic_name("in"), topic_name("out")
    create_topic(tansu.bootstrap, source, 3)
    _fill(tansu.bootstrap, source, range(600))
    opts = StreamOptions(
        source,
        topic=sink,
        transform=TRANSFORM,
        key_column="customer",
        bootstrap_servers=tansu.bootstrap,
        checkpoint=str(tmp_path / "ckpt"),
        max_offsets_per_trigger=250,
        progress=True,
    )
    summary, out, err = _run(opts, spark)

    paid = [_order(i) for i in range(600) if _order(i)["status"] == "paid"]
    assert summary.ok and summary.error is None, out
    assert summary.rows_in == 600 and summary.rows_out == len(paid) == summary.written == summary.read_back
    assert [b.rows_in for b in summary.batches] == [249, 249, 102]  # 250 shared by backlog, rounded down
    assert summary.lag == {0: 0, 1: 0, 2: 0}
    assert summary.bytes_in > 600 * 40 and summary.bytes_out > 0
    assert "batch 0: 249 rows in" in err and "batch 2: 102 rows in" in err and "lag 0" in err
    assert "read back" in out and ": OK" in out
    got = consume_all(tansu.bootstrap, sink, len(paid), timeout=60, settle=0.5)
    values = [json.loads(m.value()) for m in got]
    assert sorted(v["id"] for v in values) == sorted(o["id"] for o in paid)
    for m, v in zip(got, values, strict=True):
        assert m.key() == v["customer"].encode() and v["cents"] == 10 * _order(v["id"])["qty"]
        assert v["source_partition"] == v["id"] % 3

    # More input and a rerun from the checkpoint: only the new records go through.
    _fill(tansu.bootstrap, source, range(600, 700))
    again, _, _ = _run(opts, spark)
    assert again.rows_in == 100 and again.ok
    assert len(consume_all(tansu.bootstrap, sink, 10**6, timeout=5)) == len(paid) + 75


def test_a_wrong_sql_fails_before_any_broker_work(spark: SparkSession) -> None:
    # Nothing listens on port 1: any broker work would fail differently, and slowly.
    opts = StreamOptions(
        "orders",
        topic="out",
        value_schema=SCHEMA,
        bootstrap_servers="127.0.0.1:1",
        transform="SELECT value.nope FROM source",
    )
    started = time.monotonic()
    with pytest.raises(PipelineError, match=r"--transform: .*nope"):
        _run(opts, spark)
    assert time.monotonic() - started < 30
    with pytest.raises(PipelineError, match="SELECT"):
        _run(StreamOptions("orders", topic="out", transform="DROP TABLE x"), spark)


@pytest.mark.slow
def test_a_bad_record_is_named_by_topic_partition_offset(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    source = topic_name("in")
    create_topic(tansu.bootstrap, source, 1)
    _fill(tansu.bootstrap, source, range(40), partitions=1)
    produce_with_confluent(tansu.bootstrap, source, [Record(b'{"id": "forty"', partition=0)])  # offset 40
    _fill(tansu.bootstrap, source, range(41, 60), partitions=1)
    opts = StreamOptions(
        source,
        to=str(tmp_path / "out"),
        value_schema=SCHEMA,
        transform="SELECT value.* FROM source",
        bootstrap_servers=tansu.bootstrap,
        checkpoint=str(tmp_path / "ckpt"),
    )
    summary, out, _ = _run(opts, spark)
    assert not summary.ok and summary.error
    assert summary.bad_row is not None and summary.bad_row.startswith(f"{source}/0@40:"), out
    assert f"bad record  {source}/0@40" in out


@pytest.mark.slow
def test_file_sink_holds_each_record_once_after_a_replayed_batch(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    source = topic_name("in")
    create_topic(tansu.bootstrap, source, 3)
    _fill(tansu.bootstrap, source, range(300))
    checkpoint = tmp_path / "ckpt"
    opts = StreamOptions(
        source,
        to=str(tmp_path / "out"),
        file_format="json",
        transform=TRANSFORM,
        bootstrap_servers=tansu.bootstrap,
        checkpoint=str(checkpoint),
        max_offsets_per_trigger=150,
    )
    first, _, _ = _run(opts, spark)
    assert first.ok and [b.rows_in for b in first.batches] == [150, 150]
    # The driver died after the sink wrote batch 1's files but before Spark logged its commit.
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    again, out, _ = _run(opts, spark)
    assert again.ok and [b.batch_id for b in again.batches] == [1]
    rows = spark.read.json(str(tmp_path / "out")).collect()
    paid = [i for i in range(300) if _order(i)["status"] == "paid"]
    assert Counter(r["id"] for r in rows) == Counter(paid)
    assert again.read_back == len(paid)
    assert f"the files hold {len(paid):,} rows" in out


def test_trigger_forms() -> None:
    assert parse_trigger("available-now") == {"availableNow": True}
    assert parse_trigger("processing-time=10s") == {"processingTime": "10 seconds"}
    assert parse_trigger("processing-time=250ms") == {"processingTime": "250 milliseconds"}
    with pytest.raises(PipelineError, match="processing-time"):
        parse_trigger("once")


def _submit_command(args: list[str]) -> tuple[list[str], dict[str, str]]:
    import pyspark

    import kafkawire.pipeline.submit as entry

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    env = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    env.pop("PYSPARK_GATEWAY_PORT", None)
    env.pop("PYSPARK_GATEWAY_SECRET", None)
    command = [
        str(submit),
        "--master",
        "local[2]",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        str(Path(entry.__file__)),
        *args,
    ]
    return command, env


@pytest.mark.slow
def test_killed_exactly_once_query_restarts_from_its_checkpoint_without_duplicates(
    kafka23: KafkaBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    """spark-submit runs the streaming pipeline; it is killed (SIGKILL, the whole process group)
    once the first micro-batch is done, then run again on the same checkpoint. Kafka 2.3 filters
    aborted transactions for confluent-kafka's read_committed consumer: each input record once."""
    bootstrap = kafka23.bootstrap()
    source, sink = topic_name("in"), topic_name("out")
    create_topic(bootstrap, source, 3)
    _fill(bootstrap, source, range(3000))
    args = [
        "--from-topic",
        source,
        "--topic",
        sink,
        "--bootstrap-servers",
        bootstrap,
        "--transform",
        TRANSFORM,
        "--key-column",
        "customer",
        "--checkpoint",
        str(tmp_path / "ckpt"),
        "--exactly-once",
        "--max-offsets-per-trigger",
        "300",
        "--progress",
    ]
    command, env = _submit_command(args)
    log = tmp_path / "first.err"
    with log.open("w") as err:
        # spark-submit's Python runner sends the driver's stderr (the --progress lines) to stdout.
        first = subprocess.Popen(
            command, env=env, stdout=err, stderr=subprocess.STDOUT, cwd="/", start_new_session=True
        )
        try:
            deadline = time.monotonic() + 240
            while "batch 0:" not in log.read_text() and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
            first.wait(30)
    said = "\n".join(line for line in log.read_text().splitlines() if " INFO " not in line)
    assert "batch 0:" in said and first.returncode == -signal.SIGKILL, said[-3000:]
    assert "batch 9:" not in log.read_text()  # killed mid-way

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "read back" in done.stdout and ": OK" in done.stdout
    paid = [i for i in range(3000) if _order(i)["status"] == "paid"]
    got = consume_all(bootstrap, sink, len(paid), timeout=60, settle=2.0, isolation_level="read_committed")
    assert Counter(json.loads(m.value())["id"] for m in got) == Counter(paid)


@pytest.mark.slow
def test_two_step_demo_ingests_then_streams_each_order_once(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    """``make demo`` at a small size: generated orders to one topic, then the enrichment streamed to
    a second topic exactly once; both summaries printed, the sink judged by confluent-kafka."""
    from kafkawire.pipeline.sample import spark_orders
    from kafkawire.pipeline.two_step import run_demo

    rows = 3000
    source, sink = topic_name("orders"), topic_name("enriched")
    out, err = io.StringIO(), io.StringIO()
    ingest, stream = run_demo(rows, tansu.bootstrap, (source, sink), out=out, err=err)
    text = out.getvalue()
    assert ingest.ok and ingest.rows == rows, text
    assert stream is not None and stream.ok and stream.rows_in == rows, text
    assert len(stream.batches) == 4 and stream.lag == dict.fromkeys(range(6), 0)
    kept = {r.order_id: r for r in spark_orders(spark, rows).where("status <> 'cancelled'").collect()}
    assert stream.rows_out == stream.written == stream.read_back == len(kept) < rows
    assert f"Pipeline {rows:,} orders (generated by Spark) -> topic {source}" in text
    assert f"Streaming pipeline topic {source} -> topic {sink}" in text and "of micro-batches" in text
    assert "batch 3:" in err.getvalue() and text.count(": OK") == 2

    got = consume_all(tansu.bootstrap, sink, len(kept), timeout=60, isolation_level="read_committed", settle=1.0)
    values = [json.loads(m.value()) for m in got]
    assert sorted(v["order_id"] for v in values) == sorted(kept)
    for m, v in zip(got, values, strict=True):
        order = kept[v["order_id"]]
        assert m.key() == order.customer_id.encode() and v["currency"] == order.currency
        assert v["size"] == ("large" if order.total >= 300 else "medium" if order.total >= 50 else "small")
        if order.currency == "EUR":
            assert v["total_eur"] == float(order.total)


AVRO_CUSTOMER = json.dumps(
    {
        "type": "record",
        "name": "Customer",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": "string"},
            {"name": "score", "type": "double"},
            {"name": "active", "type": "boolean"},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
)


def _customer(i: int) -> dict[str, Any]:
    return {"id": i, "name": f"n{i}", "score": i / 4, "active": i % 3 != 0, "note": None if i % 2 else f"note {i}"}


@pytest.mark.slow
def test_avro_values_framed_by_confluent_are_decoded_and_written_back_framed(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    """``--value-format avro --schema-registry``: confluent-kafka's AvroSerializer writes the source
    through a registry (confluent's logic behind the loopback front); the stream decodes it as the
    subject's schema, transforms it, and its Avro output (registered under the sink's subject) is
    read by confluent-kafka's AvroDeserializer."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from tests.serde.registry_front import registry_front

    source, sink = topic_name("in"), topic_name("out")
    create_topic(tansu.bootstrap, source, 2)
    with registry_front() as front:
        registry = SchemaRegistryClient({"url": front.url})
        serializer = AvroSerializer(registry, AVRO_CUSTOMER)
        ctx = SerializationContext(source, MessageField.VALUE)
        records = [Record(serializer(_customer(i), ctx), partition=i % 2) for i in range(120)]
        produce_with_confluent(tansu.bootstrap, source, records, timeout=60)
        transform = (
            "SELECT value.id AS id, upper(value.name) AS name, value.note AS note FROM source WHERE value.active"
        )
        opts = StreamOptions(
            source,
            topic=sink,
            transform=transform,
            value_format="avro",
            schema_registry=front.url,
            bootstrap_servers=tansu.bootstrap,
            checkpoint=str(tmp_path / "ckpt"),
        )
        summary, out, _ = _run(opts, spark)
        kept = [_customer(i) for i in range(120) if _customer(i)["active"]]
        assert summary.ok and summary.rows_in == 120 and summary.written == len(kept) == summary.read_back, out
        assert f"{sink}-value" in front.registry.get_subjects()
        deserializer = AvroDeserializer(registry)
        got = consume_all(tansu.bootstrap, sink, len(kept), timeout=60, settle=0.5)
        values = [deserializer(m.value(), SerializationContext(sink, MessageField.VALUE)) for m in got]
        expected = [{"id": c["id"], "name": c["name"].upper(), "note": c["note"]} for c in kept]
        assert sorted(values, key=lambda v: v["id"]) == expected

        # A value that is not framed Avro fails the run, named by topic/partition@offset.
        produce_with_confluent(tansu.bootstrap, source, [Record(b'{"id": 1}', partition=0)])
        bad, out, _ = _run(opts, spark)
        assert not bad.ok and bad.bad_row is not None and bad.bad_row.startswith(f"{source}/0@60"), out


def test_avro_values_need_their_registry() -> None:
    with pytest.raises(PipelineError, match="--schema-registry"):
        check_stream_options(StreamOptions("orders", topic="out", value_format="avro"))
    with pytest.raises(PipelineError, match="--schema-registry"):
        check_stream_options(StreamOptions("orders", topic="out", schema_registry="http://127.0.0.1:1"))


def test_avro_values_without_a_registered_schema_fail_before_any_broker_work(spark: SparkSession) -> None:
    from tests.serde.registry_front import registry_front

    with registry_front() as front:  # nothing registered: the subject orders-value is unknown
        opts = StreamOptions(
            "orders", topic="out", value_format="avro", schema_registry=front.url, bootstrap_servers="127.0.0.1:1"
        )
        with pytest.raises(PipelineError, match=r"no usable schema under subject 'orders-value'"):
            _run(opts, spark)
