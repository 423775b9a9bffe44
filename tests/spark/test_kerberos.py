"""The Spark data source over Kerberos with the options Spark's Kafka connector users write
(``kafka.sasl.kerberos.service.name`` and Java's Krb5LoginModule line in ``kafka.sasl.jaas.config``),
judged by the MIT KDC and Kafka 2.3 of tests/broker/security/test_kerberos.py and by confluent-kafka reading
what Spark wrote over the PLAINTEXT listener. Executors find the realm through KRB5_CONFIG, as a
cluster's executors find theirs through /etc/krb5.conf."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from tests.broker.security.test_kerberos import Realm, broker, realm  # noqa: F401 (the module's fixtures)
from tests.harness.judge import consume_all
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]


def test_write_and_read_with_the_connectors_kerberos_options(
    spark: SparkSession,
    realm: Realm,  # noqa: F811
    broker: KafkaBroker,  # noqa: F811
    topic_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kafkawire.spark import register

    # The Python workers get the realm's krb5.conf (spark.executorEnv.KRB5_CONFIG on a cluster): the
    # environment a Python data source's workers see is taken when it is registered.
    monkeypatch.setitem(spark.sparkContext.environment, "KRB5_CONFIG", os.environ["KRB5_CONFIG"])
    register(spark)
    try:
        _write_and_read(spark, realm, broker, topic_name)
    finally:
        monkeypatch.undo()
        register(spark)


def _write_and_read(spark: SparkSession, realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str]) -> None:  # noqa: F811
    topic = topic_name("spark-krb")
    create_topic(broker.bootstrap(), topic, 2)
    options = {
        "kafka.bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"),
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "GSSAPI",
        "kafka.sasl.kerberos.service.name": "kafka",
        "kafka.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
        f'storeKey=true keyTab="{realm.alice_keytab}" principal="{realm.alice}";',
    }
    n = 200
    df = spark.range(n, numPartitions=2).selectExpr("cast(id as string) as key", "concat('v', id) as value")
    df.write.format("kafkawire").mode("append").option("topic", topic).options(**options).save()
    got = consume_all(broker.bootstrap(), topic, n, timeout=60)
    assert sorted(int(m.key()) for m in got) == list(range(n))
    rows = spark.read.format("kafkawire").option("subscribe", topic).options(**options).load().collect()
    assert sorted(int(r.key) for r in rows) == list(range(n))
    assert f"authenticationID={realm.alice};" in broker.log_tail(limit=10**8)
