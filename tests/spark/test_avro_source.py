"""The data source's keyFormat/valueFormat avro with a Schema Registry, on a real broker (Tansu):
what Spark writes is read by confluent-kafka's consumer and AvroDeserializer, what confluent-kafka's
AvroSerializer wrote is read by Spark, through one registry (confluent's logic, registry_front.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafkawire.local_broker import TansuBroker
from tests.harness.judge import Record, consume_all, produce_with_confluent
from tests.harness.topics import create_topic
from tests.serde.registry_front import RegistryFront, registry_front

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow]

ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "customer", "type": ["null", "string"], "default": None},
            {"name": "amount", "type": "double"},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
        ],
    }
)


@pytest.fixture
def front() -> Iterator[RegistryFront]:
    with registry_front() as f:
        yield f


def _order(i: int) -> dict[str, Any]:
    return {"id": i, "customer": None if i % 4 == 0 else f"c{i}", "amount": i / 4, "tags": ["t"] * (i % 3)}


def test_spark_writes_framed_avro_confluent_reads_it(
    spark: SparkSession, tansu: TansuBroker, front: RegistryFront, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("orders")
    create_topic(tansu.bootstrap, topic, 2)
    n = 300
    df = spark.range(n, numPartitions=3).selectExpr(
        "cast(id as string) as key",
        "named_struct('id', id, 'customer', if(id % 4 = 0, null, concat('c', id)), 'amount', id / 4, "
        "'tags', array_repeat('t', cast(id % 3 as int))) as value",
    )
    (
        df.write.format("kafkawire")
        .mode("append")
        .option("kafka.bootstrap.servers", tansu.bootstrap)
        .option("topic", topic)
        .option("valueFormat", "avro")
        .option("schemaRegistryUrl", front.url)
        .save()
    )
    registered = front.registry.get_latest_version(f"{topic}-value")
    assert json.loads(registered.schema.schema_str)["name"] == "topLevelRecord"
    reader = TheirDeserializer(front.registry)
    ctx = SerializationContext(topic, MessageField.VALUE)
    messages = consume_all(tansu.bootstrap, topic, n, timeout=60)
    assert len(messages) == n
    got = {int(m.key()): reader(m.value(), ctx) for m in messages}
    assert got == {i: _order(i) for i in range(n)}
    # the same bytes confluent-kafka's serializer writes for that schema id
    theirs = TheirSerializer(front.registry, registered.schema.schema_str, conf={"auto.register.schemas": False})
    assert all(m.value() == theirs(got[int(m.key())], ctx) for m in messages)


def test_spark_reads_what_confluent_wrote_and_names_a_bad_record(
    spark: SparkSession, tansu: TansuBroker, front: RegistryFront, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("orders")
    create_topic(tansu.bootstrap, topic, 1)
    ctx = SerializationContext(topic, MessageField.VALUE)
    serialize = TheirSerializer(front.registry, ORDER)
    n = 50
    produce_with_confluent(
        tansu.bootstrap, topic, [Record(serialize(_order(i), ctx), str(i).encode()) for i in range(n)]
    )

    def read(start: int = 0, end: int = n) -> Any:  # endingOffsets given: Tansu's "latest" leaves a last batch out
        return (
            spark.read.format("kafkawire")
            .option("kafka.bootstrap.servers", tansu.bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", json.dumps({topic: {"0": start}}))
            .option("endingOffsets", json.dumps({topic: {"0": end}}))
            .option("valueFormat", "avro")
            .option("schemaRegistryUrl", front.url)
            .load()
        )

    df = read()
    assert (
        df.schema["value"].dataType.simpleString()
        == "struct<id:bigint,customer:string,amount:double,tags:array<string>>"
    )
    rows = df.select("offset", "value.*").collect()
    assert sorted((r.asDict(recursive=True) for r in rows), key=lambda d: d["id"]) == [
        {"offset": i, **_order(i)} for i in range(n)
    ]
    # a record with another magic byte, then one naming an id the registry does not know
    for bad, why in (
        (b"\x05\x00\x00\x00\x01\x02", "magic byte 5"),
        (b"\x00\x00\x00\x7f\xff\x02", "unknown schema 32767"),
    ):
        [(partition, offset)] = produce_with_confluent(tansu.bootstrap, topic, [bad])
        with pytest.raises(Exception, match=rf"topic '{topic}', partition {partition}, offset {offset}\): .*{why}"):
            read(offset, offset + 1).collect()
    assert read(0, n).count() == n
