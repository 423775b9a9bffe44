"""The data source and the pipeline on a real Spark standalone cluster (issue 29): a master and two
workers on 127.0.0.1 (tests/harness/spark_cluster.py), 1 core and 1 GB each, drivers in their own
processes. Judged by confluent-kafka; read_committed on Apache Kafka 2.3 where aborted transactions
matter (Tansu does not filter them). Run one at a time: each starts JVMs on a scarce CPU."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkawire.local_broker import TansuBroker
from tests.harness.judge import Record, consume_all, produce_with_confluent
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.spark_cluster import SparkCluster
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow, pytest.mark.rotating]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    with SparkCluster(tmp_path_factory.mktemp("spark-cluster")) as running:
        yield running


def driver_env(**extra: str) -> dict[str, str]:
    """This interpreter for driver and executors (kafkawire importable from both), no inherited
    Spark gateway, no SPARK_LOCAL_IP: what the pipeline must set itself it sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_GATEWAY", "SPARK_"))}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, **extra)
    return env


def executors_ran_on_both(cluster: SparkCluster) -> bool:
    """Each worker's work dir holds an executor of the application (app-*/<id>/stderr)."""
    return all(any((cluster.directory / f"worker-{i}").glob("app-*/*/stderr")) for i in range(cluster.worker_count))


BATCH_DRIVER = r"""
import sys, time
from pyspark.sql import SparkSession
from kafkawire.spark import register
master, bootstrap, topic, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
spark = (SparkSession.builder.master(master).appName("kw-cluster-batch")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.ui.enabled", "false").config("spark.executor.memory", "512m").getOrCreate())
register(spark)
jsc = spark.sparkContext._jsc.sc()
deadline = time.monotonic() + 120
while jsc.getExecutorMemoryStatus().size() < 3 and time.monotonic() < deadline:  # the driver + 2 executors
    time.sleep(0.5)
df = spark.range(rows, numPartitions=8).selectExpr("CAST(id % 97 AS STRING) AS key", "CAST(id AS STRING) AS value")
df.write.format("kafkawire").mode("append").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).save()
back = (spark.read.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
        .option("minPartitions", "4").load())
row = back.selectExpr("count(*) AS n", "count(DISTINCT value) AS d").first()
print("RESULT", row.n, row.d, jsc.getExecutorMemoryStatus().size())
spark.stop()
"""


def test_batch_write_and_read(cluster: SparkCluster, kafka23: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    """On Kafka 2.3: the read ends at "latest", which Tansu answers short (contributing/judges.md)."""
    rows = 50_000
    bootstrap = kafka23.bootstrap()
    topic = topic_name("cluster-batch")
    create_topic(bootstrap, topic, 4)
    done = subprocess.run(
        [sys.executable, "-c", BATCH_DRIVER, cluster.master_url, bootstrap, topic, str(rows)],
        env=driver_env(),
        capture_output=True,
        text=True,
        timeout=600,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"RESULT {rows} {rows} 3" in done.stdout, done.stdout
    assert executors_ran_on_both(cluster)
    got = consume_all(bootstrap, topic, rows, timeout=120, isolation_level="read_uncommitted")
    assert Counter(m.value() for m in got) == Counter(str(i).encode() for i in range(rows))


def pipeline_command(cluster: SparkCluster, *args: str) -> list[str]:
    return [sys.executable, "-m", "kafkawire", "pipeline", "--master", cluster.master_url, *args]


def test_pipeline_file_to_topic(cluster: SparkCluster, tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    """`kafkawire pipeline --master spark://...` with no SPARK_LOCAL_IP: the pipeline sets the
    driver's address for the workers itself."""
    topic = topic_name("cluster-file")
    command = pipeline_command(
        cluster,
        "--sample",
        "--topic",
        topic,
        "--bootstrap-servers",
        tansu.bootstrap,
        "--key-column",
        "customer_id",
        "--no-progress",
        "--exactly-once",
    )
    done = subprocess.run(command, env=driver_env(), capture_output=True, text=True, timeout=600, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert "read back   5,000 records" in done.stdout and ": OK" in done.stdout
    assert f"spark       {cluster.master_url}" in done.stdout
    got = consume_all(tansu.bootstrap, topic, 5000, timeout=60)
    assert len({json.loads(m.value())["order_id"] for m in got}) == 5000


def _order(i: int) -> dict[str, Any]:
    return {"id": i, "customer": f"c{i % 7}", "status": "paid" if i % 4 else "cancelled"}


def _fill(bootstrap: str, topic: str, ids: range) -> None:
    records = [Record(json.dumps(_order(i)).encode(), f"c{i % 7}".encode(), partition=i % 3) for i in ids]
    produce_with_confluent(bootstrap, topic, records, timeout=60)


TRANSFORM = "SELECT value.id AS id, value.customer AS customer FROM source WHERE value.status = 'paid'"


def stream_command(cluster: SparkCluster, bootstrap: str, source: str, sink: str, checkpoint: Path) -> list[str]:
    return pipeline_command(
        cluster,
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
        str(checkpoint),
        "--exactly-once",
        "--max-offsets-per-trigger",
        "600",
        "--progress",
        "--value-schema",
        "id long, customer string, status string",
    )


def test_streaming_exactly_once_topic_to_topic(
    cluster: SparkCluster, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    source, sink = topic_name("cluster-in"), topic_name("cluster-out")
    create_topic(tansu.bootstrap, source, 3)
    _fill(tansu.bootstrap, source, range(3000))
    command = stream_command(cluster, tansu.bootstrap, source, sink, tmp_path / "ckpt")
    done = subprocess.run(command, env=driver_env(), capture_output=True, text=True, timeout=600, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert "batch 4:" in done.stderr  # 3000 offsets, 600 a micro-batch
    paid = [i for i in range(3000) if _order(i)["status"] == "paid"]
    got = consume_all(tansu.bootstrap, sink, len(paid), timeout=60, settle=2.0)
    assert Counter(json.loads(m.value())["id"] for m in got) == Counter(paid)


def test_a_worker_killed_mid_stream(
    cluster: SparkCluster, kafka23: KafkaBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    """Worker 0 (with its executor) is SIGKILLed once a micro-batch is done; the query goes on on
    worker 1. Then the driver is killed, the worker restarted, more input written, and the query
    restarted from its checkpoint. read_committed sees each paid order once."""
    bootstrap = kafka23.bootstrap()
    source, sink = topic_name("kill-in"), topic_name("kill-out")
    create_topic(bootstrap, source, 3)
    _fill(bootstrap, source, range(6000))
    command = stream_command(cluster, bootstrap, source, sink, tmp_path / "ckpt")
    log = tmp_path / "first.err"
    with log.open("w") as err:
        first = subprocess.Popen(
            command, env=driver_env(), stdout=subprocess.DEVNULL, stderr=err, cwd="/", start_new_session=True
        )
        try:
            deadline = time.monotonic() + 300
            while "batch 0:" not in log.read_text() and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            cluster.kill_worker(0)
            while "batch 3:" not in log.read_text() and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
            first.wait(30)
    said = log.read_text()
    assert "batch 3:" in said and first.returncode == -signal.SIGKILL, said[-4000:]
    cluster.start_worker(0)
    _fill(bootstrap, source, range(6000, 7500))
    done = subprocess.run(command, env=driver_env(), capture_output=True, text=True, timeout=600, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    paid = [i for i in range(7500) if _order(i)["status"] == "paid"]
    got = consume_all(bootstrap, sink, len(paid), timeout=90, settle=3.0, isolation_level="read_committed")
    assert Counter(json.loads(m.value())["id"] for m in got) == Counter(paid)
