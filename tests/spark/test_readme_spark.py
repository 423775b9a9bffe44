"""The documentation's Spark examples run as written, given a session and a DataFrame."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from kafkawire.local_broker import TansuBroker
from tests.harness.doc_blocks import DOCS, SPARK_BLOCKS
from tests.harness.judge import consume_all
from tests.harness.topics import create_topic

README = DOCS / "spark.md"

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker]


@pytest.mark.slow
def test_the_spark_examples_write_what_they_say(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert len(SPARK_BLOCKS) == 3, "the documentation's Spark examples changed: update this test"
    batch, streaming = [b for b in SPARK_BLOCKS if "to_avro" not in b]
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

    stream = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", 100)
        .load()
        .selectExpr("CAST(value AS STRING) AS key", "CAST(value AS STRING) AS value")
    )
    namespace = {"spark": spark, "df": stream}
    exec(compile("query = " + adapt(streaming).lstrip(), str(README), "exec"), namespace)
    query = namespace["query"]
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None


@pytest.mark.slow
def test_the_spark_schema_registry_example_writes_framed_avro(
    spark: SparkSession, tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    """The serialization quick start's Spark block, judged by confluent-kafka's AvroDeserializer."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from tests.serde.registry_front import registry_front

    [block] = [b for b in SPARK_BLOCKS if "to_avro" in b]
    topic = topic_name("orders")
    create_topic(tansu.bootstrap, topic, 1)
    df = spark.range(20).selectExpr("id", "id / 2 AS amount")
    with registry_front() as front:
        code = (
            block.replace("127.0.0.1:9092", tansu.bootstrap)
            .replace('"orders"', repr(topic))
            .replace('"orders-value"', repr(f"{topic}-value"))
            .replace('"http://registry:8081"', repr(front.url))
        )
        namespace = {"spark": spark, "df": df}
        exec(compile(code, str(README), "exec"), namespace)
        assert sorted(r.o.id for r in namespace["rows"].collect()) == list(range(20))
        decode = AvroDeserializer(front.registry)
        ctx = SerializationContext(topic, MessageField.VALUE)
        got = [decode(m.value(), ctx) for m in consume_all(tansu.bootstrap, topic, 20)]
        assert sorted(got, key=lambda d: d["id"]) == [{"id": i, "amount": i / 2} for i in range(20)]
