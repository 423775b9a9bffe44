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
