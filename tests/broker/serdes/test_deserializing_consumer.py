"""DeserializingConsumer on Tansu: what confluent-kafka's SerializingProducer wrote comes back as
objects; a record the deserializer cannot read raises ValueDeserializationError carrying it, and
the next poll() goes on after it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.serialization import IntegerSerializer as TheirInt
from confluent_kafka.serialization import StringSerializer as TheirString

import kafkawire
from kafkawire.error import ConsumeError, ValueDeserializationError
from kafkawire.serialization import IntegerDeserializer, StringDeserializer
from tests.harness.judge import judge_config, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


def test_deserializing_consumer_reads_confluent_serialized_records(
    tansu: Any, topic_name: Callable[[str], str]
) -> None:
    bootstrap = str(tansu.bootstrap() if callable(tansu.bootstrap) else tansu.bootstrap)
    topic = topic_name("de")
    create_topic(bootstrap, topic, 1)
    producer = confluent_kafka.SerializingProducer(
        judge_config(
            bootstrap,
            **{
                "key.serializer": TheirString("utf_8"),
                "value.serializer": TheirInt(),
            },
        )
    )
    for i in range(5):
        producer.produce(topic, key=f"k{i}", value=i * 1000)
    producer.produce(topic, key="bad", value=None)
    producer.flush(15)
    # a value IntegerDeserializer cannot read (3 bytes), then one more good record
    raw = confluent_kafka.Producer(judge_config(bootstrap))
    raw.produce(topic, key=b"poison", value=b"abc")
    raw.produce(topic, key=b"k5", value=(5000).to_bytes(4, "big"))
    raw.flush(15)
    consumer = kafkawire.DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("grp"),
            "auto.offset.reset": "earliest",
            "key.deserializer": StringDeserializer("utf_8"),
            "value.deserializer": IntegerDeserializer(),
        }
    )
    try:
        consumer.assign([kafkawire.TopicPartition(topic, 0)])
        got: list[tuple[str, int | None]] = []
        poisoned = None
        while len(got) < 7:
            try:
                msg = consumer.poll(10)
            except ValueDeserializationError as e:
                poisoned = e
                continue
            assert msg is not None
            got.append((msg.key(), msg.value()))
        assert got == [(f"k{i}", i * 1000) for i in range(5)] + [("bad", None), ("k5", 5000)]
        assert poisoned is not None and isinstance(poisoned, ConsumeError)
        assert poisoned.kafka_message.offset() == 6 and poisoned.kafka_message.value() == b"abc"
        with pytest.raises(NotImplementedError):
            consumer.consume(10, 1)
    finally:
        consumer.close()
