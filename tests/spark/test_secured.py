"""The Spark data source over SASL_SSL, with the options Spark's Kafka connector users already write:
``kafka.security.protocol``, ``kafka.sasl.mechanism``, ``kafka.sasl.jaas.config`` (the ScramLoginModule
form) and Java's ``kafka.ssl.truststore.*`` (a keytool-made JKS store). Judged by the real Kafka 2.3
broker's SASL_SSL listener and by confluent-kafka reading what Spark wrote."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.harness.certs import STORE_PASSWORD
from tests.harness.judge import consume_all
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

SECRET = "spark-scram-SECRET"


def _options(broker: KafkaBroker) -> dict[str, str]:
    assert broker._dir is not None
    return {
        "kafka.bootstrap.servers": broker.bootstrap("SASL_SSL"),
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="sparky" password="{SECRET}";',
        "kafka.ssl.truststore.location": str(broker._dir / "truststore.jks"),
        "kafka.ssl.truststore.password": STORE_PASSWORD,
        "kafka.ssl.truststore.type": "JKS",
    }


def test_write_and_read_over_sasl_ssl_with_the_connectors_options(
    spark: SparkSession, kafka23: KafkaBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    kafka23.add_scram_user("sparky", SECRET)
    topic = topic_name("spark-sasl")
    create_topic(kafka23.bootstrap(), topic, 2)
    options = _options(kafka23)
    n = 500
    df = spark.range(n, numPartitions=2).selectExpr("cast(id as string) as key", "concat('v', id) as value")
    summary = tmp_path / "summary.jsonl"
    writer = df.write.format("kafkawire").mode("append").option("topic", topic).option("summaryPath", str(summary))
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()

    # confluent-kafka (over the plaintext listener) reads what Spark wrote over SASL_SSL.
    got = consume_all(kafka23.bootstrap(), topic, n, timeout=60)
    assert sorted(int(m.key()) for m in got) == list(range(n))
    assert all(m.value() == b"v" + m.key() for m in got)

    reader = spark.read.format("kafkawire").option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    rows = reader.load().selectExpr("cast(key as string) as k", "cast(value as string) as v").collect()
    assert sorted(int(r.k) for r in rows) == list(range(n))
    assert all(r.v == f"v{r.k}" for r in rows)

    text = summary.read_text()
    assert json.loads(text.splitlines()[0])["rows"] == n
    assert SECRET not in text and STORE_PASSWORD not in text


def test_wrong_password_fails_the_write_naming_authentication_not_the_secret(
    spark: SparkSession, kafka23: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    kafka23.add_scram_user("sparky", SECRET)
    topic = topic_name("spark-sasl-bad")
    create_topic(kafka23.bootstrap(), topic, 1)
    wrong = "wrong-" + SECRET
    options = {
        **_options(kafka23),
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="sparky" password="{wrong}";',
        "kafka.message.timeout.ms": "5000",
    }
    writer = spark.range(3).selectExpr("cast(id as string) as value").write.format("kafkawire").mode("append")
    writer = writer.option("topic", topic)
    for key, value in options.items():
        writer = writer.option(key, value)
    with pytest.raises(Exception) as raised:
        writer.save()
    text = str(raised.value)
    assert "_AUTHENTICATION" in text and "SCRAM-SHA-512" in text, text[-3000:]
    assert wrong not in text and SECRET not in text


def test_the_readme_spark_example_over_sasl_ssl(
    spark: SparkSession,
    kafka23: KafkaBroker,
    topic_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.broker.docs.test_security_page import SCRAM_PASSWORD, adapt
    from tests.harness.doc_blocks import SECURED_BLOCKS
    from tests.harness.doc_blocks import SECURITY as README

    assert kafka23._dir is not None
    kafka23.add_scram_user("payments-app", SCRAM_PASSWORD)
    topic = topic_name("payments")
    create_topic(kafka23.bootstrap(), topic, 2)
    monkeypatch.setenv("KAFKA_PASSWORD", SCRAM_PASSWORD)
    monkeypatch.setenv("TRUSTSTORE_PASSWORD", STORE_PASSWORD)
    block = adapt(SECURED_BLOCKS[2], kafka23, {"truststore.jks": kafka23._dir / "truststore.jks"}, "", topic)
    df = spark.range(40).selectExpr("cast(id as string) as value")
    exec(compile("import os\n" + block, str(README), "exec"), {"spark": spark, "df": df})
    assert capsys.readouterr().out.strip().splitlines()[-1] == "40"
    assert len(consume_all(kafka23.bootstrap(), topic, 40, timeout=30)) == 40
