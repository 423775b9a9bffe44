"""SerializingProducer against Tansu, judged by confluent-kafka's consumer and deserializers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import confluent_kafka.serialization as ck
import pytest

from kafkawire import SerializingProducer
from kafkawire.error import KeySerializationError, ValueSerializationError
from kafkawire.local_broker import TansuBroker
from kafkawire.serialization import IntegerSerializer, MessageField, SerializationContext, StringSerializer
from tests.harness.judge import consume_all

pytestmark = pytest.mark.broker


def test_serialized_records_read_by_confluent(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("ser")
    seen: list[tuple[str, Any]] = []

    def header_adding(value: Any, ctx: SerializationContext) -> bytes:
        seen.append((ctx.topic, ctx.field))
        ctx.headers.append(("field", str(ctx.field).encode()))
        return StringSerializer()(value, ctx) or b""

    reports: list[Any] = []
    p = SerializingProducer(
        {"bootstrap.servers": tansu.bootstrap, "key.serializer": IntegerSerializer(), "value.serializer": header_adding}
    )
    try:
        for i in range(5):
            p.produce(topic, key=i, value=f"v{i}", headers=[], partition=0, on_delivery=lambda e, m: reports.append(e))
        assert p.flush(15) == 0
    finally:
        p.close()
    assert reports == [None] * 5
    assert seen == [(topic, MessageField.VALUE)] * 5
    msgs = consume_all(tansu.bootstrap, topic, 5)
    ctx = ck.SerializationContext(topic, ck.MessageField.VALUE)
    got = [(ck.IntegerDeserializer()(m.key(), ctx), ck.StringDeserializer()(m.value(), ctx), m.headers()) for m in msgs]
    assert got == [(i, f"v{i}", [("field", b"value")]) for i in range(5)]


def test_serializer_failures_raise_and_queue_nothing(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("bad")
    p = SerializingProducer(
        {
            "bootstrap.servers": tansu.bootstrap,
            "key.serializer": StringSerializer(),
            "value.serializer": IntegerSerializer(),
        }
    )
    try:
        with pytest.raises(KeySerializationError) as key_err:
            p.produce(topic, key=1, value=1)
        assert "Unsupported type" in key_err.value.args[0].str()
        with pytest.raises(ValueSerializationError) as value_err:
            p.produce(topic, key="k", value=2**40)
        assert value_err.value.exception is not None
        assert len(p) == 0
        with pytest.raises(TypeError):
            p.produce(b"topic", key="k", value=1)  # type: ignore[arg-type]
    finally:
        p.close()
    with pytest.raises(RuntimeError):
        p.produce(topic, key="k", value=1)


def test_serializers_must_be_callable() -> None:
    with pytest.raises(TypeError, match=r"value\.serializer"):
        SerializingProducer({"bootstrap.servers": "127.0.0.1:9", "value.serializer": "nope"})


@pytest.mark.slow
def test_avro_across_clients_through_one_registry(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    """SerializingProducer + our AvroSerializer -> Tansu -> confluent's DeserializingConsumer with its
    AvroDeserializer, both on one registry (confluent's logic behind the loopback front)."""
    from confluent_kafka import DeserializingConsumer
    from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirAvroDeserializer

    from kafkawire.schema_registry import SchemaRegistryClient
    from kafkawire.schema_registry.avro import AvroSerializer
    from tests.harness.judge import judge_config, unique_name
    from tests.serde.registry_front import registry_front

    schema = '{"type":"record","name":"Ping","fields":[{"name":"n","type":"int"},{"name":"s","type":"string"}]}'
    topic = topic_name("avro")
    with registry_front() as front:
        p = SerializingProducer(
            {
                "bootstrap.servers": tansu.bootstrap,
                "key.serializer": StringSerializer(),
                "value.serializer": AvroSerializer(SchemaRegistryClient({"url": front.url}), schema),
            }
        )
        try:
            for i in range(10):
                p.produce(topic, key=f"k{i}", value={"n": i, "s": "x" * i}, partition=0)
            assert p.flush(15) == 0
        finally:
            p.close()
        conf = judge_config(
            tansu.bootstrap,
            **{"group.id": unique_name("g"), "auto.offset.reset": "earliest", "enable.auto.commit": False},
        )
        conf["value.deserializer"] = TheirAvroDeserializer(front.registry)
        consumer = DeserializingConsumer(conf)
        got = []
        try:
            consumer.subscribe([topic])
            for _ in range(200):
                msg = consumer.poll(0.2)
                if msg is not None and msg.error() is None:
                    got.append((msg.key(), msg.value()))
                if len(got) == 10:
                    break
        finally:
            consumer.close()
    assert got == [(f"k{i}".encode(), {"n": i, "s": "x" * i}) for i in range(10)]
