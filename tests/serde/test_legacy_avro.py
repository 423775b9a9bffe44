"""The deprecated kafkawire.avro.AvroProducer: records confluent's Avro deserializer reads, and
the legacy error classes."""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka.serialization as ck
import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirDeserializer

from kafkawire.avro import AvroProducer, KeySerializerError, SerializerError, ValueSerializerError, loads
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import consume_all
from tests.serde.registry_front import registry_front

VALUE = '{"type":"record","name":"V","fields":[{"name":"n","type":"int"}]}'


def test_serializer_error_message() -> None:
    e = ValueSerializerError("no schema")
    assert isinstance(e, SerializerError) and e.message == "no schema" == str(e)


@pytest.mark.broker
def test_avro_producer_records_read_by_confluent(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("legacy")
    with registry_front() as front:
        with pytest.warns(DeprecationWarning):
            p = AvroProducer(
                {"bootstrap.servers": tansu.bootstrap, "schema.registry.url": front.url},
                default_key_schema='"string"',
                default_value_schema=loads(VALUE),
            )
        try:
            p.produce(topic=topic, value={"n": 1}, key="k", partition=0)
            p.produce(topic=topic, value={"n": 2}, key="k", partition=0, value_schema=VALUE)
            with pytest.raises(ValueSerializerError):
                p.produce(topic=topic, value={"n": "x"}, key="k")
            assert p.flush(15) == 0
        finally:
            p.close()
        msgs = consume_all(tansu.bootstrap, topic, 2)
        de = TheirDeserializer(front.registry)
        ctx = ck.SerializationContext(topic, ck.MessageField.VALUE)
        assert [de(m.value(), ctx) for m in msgs] == [{"n": 1}, {"n": 2}]
        assert de(msgs[0].key(), ck.SerializationContext(topic, ck.MessageField.KEY)) == "k"


def test_missing_schema_is_a_key_serializer_error() -> None:
    with pytest.warns(DeprecationWarning):
        p = AvroProducer({"bootstrap.servers": "127.0.0.1:9", "schema.registry.url": "mock://legacy"})
    try:
        with pytest.raises(KeySerializerError, match="schema required"):
            p.produce(topic="t", key="k")
    finally:
        p.close(0)


@pytest.mark.slow
@pytest.mark.broker
def test_avro_consumer_reads_confluents_records(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    """confluent-kafka's producer and AvroSerializer write; AvroConsumer decodes (into a reader
    schema with a defaulted field), reports an undecodable record by offset and goes on after it."""
    import confluent_kafka
    from confluent_kafka.schema_registry.avro import AvroSerializer as TheirSerializer

    from kafkawire.avro import AvroConsumer
    from tests.harness.judge import judge_config, unique_name

    topic = topic_name("legacy-in")
    reader = '{"type":"record","name":"V","fields":[{"name":"n","type":"int"},{"name":"m","type":"int","default":7}]}'
    with registry_front() as front:
        value_ser = TheirSerializer(front.registry, VALUE)
        key_ser = TheirSerializer(front.registry, '"string"')
        p = confluent_kafka.Producer(judge_config(tansu.bootstrap))
        for n, raw in ((1, None), (None, b"not avro"), (3, None)):
            value = raw if n is None else value_ser({"n": n}, ck.SerializationContext(topic, ck.MessageField.VALUE))
            p.produce(topic, value, key_ser("k", ck.SerializationContext(topic, ck.MessageField.KEY)), partition=0)
        assert p.flush(15) == 0
        with pytest.warns(DeprecationWarning):
            c = AvroConsumer(
                {
                    "bootstrap.servers": tansu.bootstrap,
                    "group.id": unique_name("g"),
                    "auto.offset.reset": "earliest",
                    "schema.registry.url": front.url,
                },
                reader_value_schema=reader,
            )
        got: list[object] = []
        try:
            c.subscribe([topic])
            for _ in range(300):
                try:
                    msg = c.poll(0.2)
                except SerializerError as e:
                    got.append(e.message)
                    continue
                if msg is not None and msg.error() is None:
                    got.append((msg.key(), msg.value(), msg.offset()))
                if len(got) == 3:
                    break
        finally:
            c.close()
    assert got[0] == ("k", {"n": 1, "m": 7}, 0)
    assert isinstance(got[1], str) and f"{topic} [0] offset 1" in got[1]
    assert got[2] == ("k", {"n": 3, "m": 7}, 2)


def test_avro_consumer_needs_a_registry() -> None:
    from kafkawire.avro import AvroConsumer

    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=r"schema\.registry\.url"):
        AvroConsumer({"bootstrap.servers": "127.0.0.1:9", "group.id": "g"})
