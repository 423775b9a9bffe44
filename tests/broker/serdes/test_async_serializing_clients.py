"""The asyncio serdes faces on Tansu, judged by confluent-kafka's: the same steps through
``AsyncSerializingProducer`` and ``AsyncDeserializingConsumer`` on each client (a blocking
serializer for keys, an asyncio one for values, a builder whose serde the client closes), each
reading back what it wrote; the records, the contexts the serdes saw, the errors and the closes
compared."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import ModuleType
from typing import Any

import confluent_kafka.aio
import confluent_kafka.serialization
import pytest

import kafkawire.aio
import kafkawire.serialization
from tests.harness.judge import unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


def _steps(aio: ModuleType, serialization: ModuleType, bootstrap: str, topic: str) -> dict[str, Any]:
    """One client's run; everything it saw, in a form both clients' runs compare by."""
    seen: list[tuple[str, str, str, bool]] = []  # (serde, topic, field, headers given)
    closed: list[str] = []

    class AsyncUpper:
        """An asyncio serializer: its call returns a coroutine."""

        async def __call__(self, obj: Any, ctx: Any) -> bytes:
            seen.append(("value-ser", ctx.topic, str(ctx.field), ctx.headers is not None))
            await asyncio.sleep(0)
            if obj == "poison":
                raise ValueError("refused")
            return str(obj).upper().encode()

    class Built(serialization.Deserializer):  # type: ignore[misc,name-defined]
        def __init__(self, tag: str) -> None:
            self.tag = tag

        def __call__(self, value: Any, ctx: Any) -> Any:
            seen.append((self.tag, ctx.topic, str(ctx.field), ctx.headers is not None))
            return None if value is None else value.decode().lower()

        def close(self) -> None:
            closed.append(self.tag)

    class Builder(serialization.DeserializerBuilder):  # type: ignore[misc,name-defined]
        def build(self, conf: dict[str, Any], is_key: bool) -> tuple[Any, dict[str, Any]]:
            rest = dict(conf)
            rest.pop("test.only.property")  # a builder's own property never reaches the client
            return Built("value-de" if not is_key else "key-de"), rest

    async def run() -> dict[str, Any]:
        producer = await aio.AsyncSerializingProducer(
            {
                "bootstrap.servers": bootstrap,
                "key.serializer": serialization.StringSerializer(),
                "value.serializer": AsyncUpper(),
            }
        )
        delivered = []
        for i in range(5):
            fut = await producer.produce(topic, key=f"k{i}", value=f"v{i}", partition=0)
            delivered.append(fut)
        errors = []
        try:
            await producer.produce(topic, key="k", value="poison")
        except Exception as e:
            errors.append((type(e).__name__, type(e.args[0]).__name__ if e.args else None))
        try:
            await producer.produce(b"not a str", value="x")  # type: ignore[arg-type]
        except TypeError as e:
            errors.append(("TypeError", str(e)))
        await producer.flush()
        offsets = [(await f).offset() for f in delivered]
        await producer.close()
        try:
            await producer.produce(topic, value="late")
        except RuntimeError as e:
            errors.append(("RuntimeError", str(e)))

        consumer = await aio.AsyncDeserializingConsumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": unique_name("aio-serdes"),
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "key.deserializer": serialization.StringDeserializer(),
                "value.deserializer.builder": Builder(),
                "test.only.property": "x",
            }
        )
        await consumer.subscribe([topic])
        records = []
        while len(records) < 5:
            msg = await consumer.poll(30)
            assert msg is not None
            records.append((msg.key(), msg.value(), msg.offset()))
        assert closed == []
        await consumer.close()
        await consumer.close()
        return {"offsets": offsets, "errors": errors, "records": records, "seen": seen, "closed": closed}

    return asyncio.run(run())


@pytest.mark.slow  # (make test's time: CI runs it in test-slow)
def test_async_serdes_faces_as_confluent_kafkas(tansu: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = str(tansu.bootstrap() if callable(tansu.bootstrap) else tansu.bootstrap)
    ours_topic, theirs_topic = topic_name("aio-serdes"), topic_name("aio-serdes-judge")
    create_topic(bootstrap, ours_topic, 1)
    create_topic(bootstrap, theirs_topic, 1)
    ours = _steps(kafkawire.aio, kafkawire.serialization, bootstrap, ours_topic)
    theirs = _steps(confluent_kafka.aio, confluent_kafka.serialization, bootstrap, theirs_topic)
    renamed = [(s, "T" if t == ours_topic else t, f, h) for s, t, f, h in ours.pop("seen")]
    assert renamed == [(s, "T" if t == theirs_topic else t, f, h) for s, t, f, h in theirs.pop("seen")]
    assert ours == theirs
    assert ours["records"] == [(f"k{i}", f"V{i}".lower(), i) for i in range(5)]
    assert ours["closed"] == ["value-de"]
