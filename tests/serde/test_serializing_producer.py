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
        {"bootstrap.servers": tansu.bootstrap, "key.serializer": StringSerializer(), "value.serializer": IntegerSerializer()}
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
