"""The README's Spark examples run as written, given a session and a DataFrame."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from kafkawire.local_broker import TansuBroker
from tests.broker.test_readme import README, SPARK_BLOCKS
from tests.harness.judge import consume_all
from tests.harness.topics import create_topic

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker]


@pytest.mark.slow
def test_the_spark_examples_write_what_they_say(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert len(SPARK_BLOCKS) == 2, "the README's Spark section changed: update this test"
    batch, streaming = SPARK_BLOCKS
    topic = topic_name("orders")
    create_topic(tansu.bootstrap, topic, 3)

    def adapt(block: str) -> str:
        ckpt = str(tmp_path_factory.mktemp("ckpt"))
        return (
            block.replace("127.0.0.1:9092", tansu.bootstrap)
            .replace('"orders"', repr(topic))
            .replace('"/data/ckpt/orders"', repr(ckpt))
        )

    df = spark.range(50).selectExpr("id", "concat('item-', id) AS item")
    exec(compile(adapt(batch), str(README), "exec"), {"spark": spark, "df": df})
    assert len(consume_all(tansu.bootstrap, topic, 50, isolation_level="read_uncommitted", settle=0.5)) == 50

    stream = spark.readStream.format("rate").option("rowsPerSecond", 100).load().selectExpr(
        "CAST(value AS STRING) AS key", "CAST(value AS STRING) AS value"
    )
    namespace = {"spark": spark, "df": stream}
    exec(compile("query = " + adapt(streaming).lstrip(), str(README), "exec"), namespace)
    query = namespace["query"]
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
