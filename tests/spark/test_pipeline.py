"""The pipeline command: Spark reads a dataset, the kafkawire data source writes it to Tansu, and
confluent-kafka (the judge) finds exactly the rows on the broker. One shared Spark session; only the
spark-submit test starts a JVM of its own."""

from __future__ import annotations

import datetime
import decimal
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kafkawire.app.cli import main
from kafkawire.core.partitioners import partition_for_key
from kafkawire.local_broker import TansuBroker
from kafkawire.pipeline import PipelineError, PipelineOptions, run, sample_path
from kafkawire.pipeline.progress import TaskCounts, render
from kafkawire.pipeline.sample import SAMPLE_ROWS, generate_orders, orders_jsonl
from tests.harness.judge import consume_all

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker]

ORDERS = {order["order_id"]: order for order in generate_orders()}


def _quiet(opts: PipelineOptions, spark: SparkSession) -> tuple[Any, str, str]:
    out, err = io.StringIO(), io.StringIO()
    summary = run(opts, spark=spark, out=out, err=err)
    return summary, out.getvalue(), err.getvalue()


def test_shipped_sample_is_what_the_generator_makes() -> None:
    assert sample_path().read_text(encoding="utf-8") == orders_jsonl()
    assert len(ORDERS) == SAMPLE_ROWS


@pytest.mark.slow
def test_sample_dataset_keyed_json(spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("orders")
    opts = PipelineOptions(str(sample_path()), topic, tansu.bootstrap, key_column="customer_id", partitions=4)
    summary, out, err = _quiet(opts, spark)

    assert summary.ok, out
    assert summary.error is None and summary.rows == SAMPLE_ROWS
    assert summary.read_back_total == SAMPLE_ROWS and summary.topic_created
    assert summary.partitions_used == [0, 1, 2, 3]  # 431 customers hash over every partition
    assert f"read back   {SAMPLE_ROWS:,} records from the topic with Fetch: OK" in out
    assert "rows        5,000" in out and "failures    none" in out
    assert "tasks" in err  # the progress lines (stderr is no terminal here)

    got = consume_all(tansu.bootstrap, topic, SAMPLE_ROWS, timeout=60)
    assert len(got) == SAMPLE_ROWS
    seen = set()
    for message in got:
        value = json.loads(message.value())
        expected = {k: v for k, v in ORDERS[value["order_id"]].items() if v is not None}  # to_json drops nulls
        assert value == expected
        assert message.key() == value["customer_id"].encode()
        seen.add(value["order_id"])
    assert len(seen) == SAMPLE_ROWS
    # Each customer on the partition the Java producer (Spark's connector) puts its key on: murmur2
    partitions: dict[bytes | None, set[int | None]] = {}
    for message in got:
        partitions.setdefault(message.key(), set()).add(message.partition())
    assert all(p == {partition_for_key(key, 4)} for key, p in partitions.items() if key is not None)


def _flat_orders(spark: SparkSession) -> Any:
    return spark.read.json(str(sample_path())).select("order_id", "customer_id", "status", "total", "express")


def test_csv_input_string_values(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    path = tmp_path / "orders_csv"
    _flat_orders(spark).limit(800).coalesce(2).write.option("header", "true").csv(str(path))
    topic = topic_name("csv")
    opts = PipelineOptions(str(path), topic, tansu.bootstrap, key_column="order_id", value_format="string")
    summary, out, _ = _quiet(opts, spark)
    assert summary.ok, out
    assert summary.input_format == "csv" and summary.rows == 800

    got = consume_all(tansu.bootstrap, topic, 800, timeout=30)
    assert len(got) == 800
    for message in got:
        order_id, customer, status, total, express = message.value().decode().split(",")
        order = ORDERS[order_id]
        assert message.key() == order_id.encode()
        assert (customer, status, float(total), express) == (
            order["customer_id"],
            order["status"],
            order["total"],
            str(order["express"]).lower(),
        )


def _avro_reader(spark: SparkSession, schema_json: str) -> Callable[[bytes], dict[str, Any]]:
    """An independent decoder: Apache Avro's Java library (shipped in PySpark's jars), through py4j."""
    avro = spark.sparkContext._jvm.org.apache.avro  # type: ignore[union-attr]
    schema = avro.Schema.Parser().parse(schema_json)
    data = avro.generic.GenericData()
    data.addLogicalTypeConversion(avro.Conversions.DecimalConversion())
    data.addLogicalTypeConversion(avro.data.TimeConversions.TimestampMicrosConversion())
    data.addLogicalTypeConversion(avro.data.TimeConversions.DateConversion())
    reader = avro.generic.GenericDatumReader(schema, schema, data)

    def decode(value: bytes) -> dict[str, Any]:
        decoder = avro.io.DecoderFactory.get().binaryDecoder(bytearray(value), None)
        record = reader.read(None, decoder)
        assert decoder.isEnd(), "bytes left after the datum"
        decoded: dict[str, Any] = json.loads(record.toString())
        return decoded

    return decode


@pytest.mark.slow
def test_parquet_input_avro_values(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    from pyspark.sql import types as T

    schema = T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("name", T.StringType()),
            T.StructField("price", T.DecimalType(10, 2)),
            T.StructField("at", T.TimestampType()),
            T.StructField("day", T.DateType()),
            T.StructField("tags", T.ArrayType(T.StringType())),
            T.StructField("attrs", T.MapType(T.StringType(), T.IntegerType())),
            T.StructField("ok", T.BooleanType()),
            T.StructField("ratio", T.FloatType()),
            T.StructField(
                "nested", T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.DoubleType())])
            ),
        ]
    )
    at = datetime.datetime(2024, 3, 1, 8, 0, 1, 123456)
    rows = [
        (
            i,
            f"n{i}" if i % 3 else None,
            decimal.Decimal(i * 7 - 500) / 100,
            at + datetime.timedelta(minutes=i),
            datetime.date(2024, 3, 1) + datetime.timedelta(days=i % 40),
            [f"t{i % 5}"] * (i % 3),
            {"k": i} if i % 2 else {},
            i % 4 == 0,
            0.5 * (i % 8),
            (i, -1.5 * i) if i % 5 else None,
        )
        for i in range(300)
    ]
    path = tmp_path / "things_parquet"
    spark.createDataFrame(rows, schema).coalesce(2).write.parquet(str(path))
    topic = topic_name("avro")
    opts = PipelineOptions(str(path), topic, tansu.bootstrap, key_column="id", value_format="avro")
    summary, out, _ = _quiet(opts, spark)
    assert summary.ok, out
    assert summary.input_format == "parquet" and summary.rows == 300
    assert summary.avro_schema is not None and f"avro schema {summary.avro_schema}" in out

    decode = _avro_reader(spark, summary.avro_schema)
    got = consume_all(tansu.bootstrap, topic, 300, timeout=30)
    assert len(got) == 300
    by_id = {r[0]: r for r in rows}
    for message in got:
        record = decode(message.value())
        i = record["id"]
        assert message.key() == str(i).encode()
        row = by_id[i]
        assert record["name"] == row[1]
        assert decimal.Decimal(str(record["price"])) == row[2]
        expected_at = row[3].astimezone(datetime.timezone.utc)  # naive = the session's local time
        assert record["at"] == expected_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert record["day"] == row[4].isoformat()
        assert record["tags"] == row[5] and record["attrs"] == row[6]
        assert record["ok"] == row[7] and record["ratio"] == row[8]
        assert record["nested"] == (None if row[9] is None else {"a": row[9][0], "b": row[9][1]})


@pytest.mark.slow
def test_avro_values_framed_for_a_schema_registry(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    """--schema-registry: the schema registered under <topic>-value, values framed; judged by
    confluent-kafka's AvroDeserializer through the same registry (confluent's logic, registry_front)."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from tests.serde.registry_front import registry_front

    path = tmp_path / "orders.json"
    path.write_text("".join(json.dumps({"id": i, "item": f"i{i}", "qty": i % 4}) + "\n" for i in range(120)))
    topic = topic_name("registry")
    with registry_front() as front:
        opts = PipelineOptions(
            str(path), topic, tansu.bootstrap, key_column="id", value_format="avro", schema_registry=front.url
        )
        summary, out, _ = _quiet(opts, spark)
        assert summary.ok, out
        assert summary.subject == f"{topic}-value" and summary.decoded == 120
        assert f"registry    subject {topic}-value; read back and decoded 120 values" in out
        registered = front.registry.get_latest_version(f"{topic}-value")
        assert registered.schema.schema_str == summary.avro_schema
        decode = AvroDeserializer(front.registry)
        ctx = SerializationContext(topic, MessageField.VALUE)
        got = {int(m.key()): decode(m.value(), ctx) for m in consume_all(tansu.bootstrap, topic, 120, timeout=30)}
        assert got == {i: {"id": i, "item": f"i{i}", "qty": i % 4} for i in range(120)}
        with pytest.raises(PipelineError, match="--schema-registry is for --value-format avro"):
            _quiet(PipelineOptions(str(path), topic, tansu.bootstrap, schema_registry=front.url), spark)


def test_exactly_once_on_the_sample(spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("eos")
    opts = PipelineOptions(
        str(sample_path()), topic, tansu.bootstrap, key_column="customer_id", exactly_once=True, spark_partitions=3
    )
    summary, out, _ = _quiet(opts, spark)
    assert summary.ok, out
    assert summary.rows == SAMPLE_ROWS and summary.tasks >= 3
    assert "exactly-once (transactions)" in out
    got = consume_all(tansu.bootstrap, topic, SAMPLE_ROWS, timeout=60, isolation_level="read_committed", settle=1.0)
    assert sorted(json.loads(m.value())["order_id"] for m in got) == sorted(ORDERS)


def test_embedded_broker_from_the_command_line(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    """No --bootstrap-servers: the command starts Tansu, writes, reads back, and stops it.
    (``spark`` keeps this in the shared session: the command reuses the active one.)"""
    code = main(["pipeline", "--sample", "--topic", "orders", "--key-column", "customer_id", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "started an embedded Tansu broker on 127.0.0.1:" in out
    assert "--bootstrap-servers host:9092" in out
    assert f"read back   {SAMPLE_ROWS:,} records from the topic with Fetch: OK" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pipeline", "--topic", "t"], "give one of INPUT, --sample, --generate N or --from-topic TOPIC"),
        (["pipeline", "x.json", "--sample", "--topic", "t"], "give one of INPUT"),
        (["pipeline", "--generate", "5", "--from-topic", "a", "--topic", "t"], "give one of INPUT"),
        (["pipeline", "--sample"], "give --topic"),
        (["pipeline", "x.json", "--topic", "t", "--to", "out"], "--to needs --from-topic"),
        (["pipeline", "--sample", "--topic", "t", "--value-format", "xml"], "invalid choice"),
        (["pipeline", "--sample", "--topic", "t", "--kafka-option", "acks"], "KEY=VALUE"),
        (["pipeline", "--sample", "--topic", "t", "--transactional-id-prefix", "p"], "needs --exactly-once"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_input_and_columns(spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pipeline", str(tmp_path / "missing.json"), "--topic", "t"]) == 2
    assert "does not exist" in capsys.readouterr().err

    assert main(["pipeline", "--sample", "--topic", "t", "--key-column", "nope"]) == 2
    err = capsys.readouterr().err
    assert "key column 'nope' is not in the input" in err and "customer_id" in err

    path = tmp_path / "odd.parquet"
    spark.createDataFrame([(1, 2)], "`a-b` int, c int").write.parquet(str(path))
    assert main(["pipeline", str(path), "--topic", "t", "--value-format", "avro"]) == 2
    assert "not a valid Avro name" in capsys.readouterr().err

    with pytest.raises(PipelineError, match="unknown input format"):
        run(PipelineOptions(str(sample_path()), "t", input_format="xml"), spark=spark)


def test_unreachable_cluster_fails_with_a_message(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["pipeline", "--sample", "--topic", "t", "--bootstrap-servers", "127.0.0.1:1", "--timeout", "1"])
    assert code == 1
    assert "kafkawire pipeline failed" in capsys.readouterr().err


def test_progress_line() -> None:
    assert render(TaskCounts(total=4, done=1, active=2), 3.25, width=8) == "[##------] 1/4 tasks, 2 running  3.2 s"
    assert render(TaskCounts(), 0.0, width=4) == "[----] starting  0.0 s"
    assert render(TaskCounts(total=2, done=2, failed=1), 1.0, width=2).endswith("1 failed")


@pytest.mark.slow
def test_spark_submit_local_mode(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    """The cluster path: spark-submit (from this venv's PySpark) runs the pipeline's entry file."""
    import pyspark

    import kafkawire.pipeline.submit as entry

    topic = topic_name("submit")
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
        str(sample_path()),
        "--topic",
        topic,
        "--bootstrap-servers",
        tansu.bootstrap,
        "--key-column",
        "customer_id",
        "--no-progress",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "read back   5,000 records from the topic with Fetch: OK" in done.stdout
    assert "spark       local[2]:" in done.stdout  # spark-submit's --master, not the default local[*]
    got = consume_all(tansu.bootstrap, topic, SAMPLE_ROWS, timeout=60)
    assert len(got) == SAMPLE_ROWS
