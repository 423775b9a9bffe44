"""topic.blacklist on Apache Kafka 2.3, confluent-kafka the reference: topics whose names match are
ignored as if they did not exist (subscriptions, literal or pattern, and producing), yet
list_topics() still lists them."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest

import kafkawire
from tests.harness.judge import unique_name

pytestmark = pytest.mark.broker


def _bootstrap(kafka23: Any) -> str:
    return str(kafka23.bootstrap() if callable(kafka23.bootstrap) else kafka23.bootstrap)


def _behaviour(module: Any, bootstrap: str, base: str) -> dict[str, Any]:
    hidden, kept = f"{base}-hide", f"{base}-keep"
    blacklist = {"topic.blacklist": "-hide$,^never-such-topic"}
    consumer = module.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("g"),
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            **blacklist,
        }
    )
    consumed: set[str] = set()
    try:
        listed = sorted(t for t in consumer.list_topics(timeout=10).topics if t.startswith(base))
        consumer.subscribe([f"^{base}-.*", hidden])  # a pattern matching both, and the hidden one by name
        deadline = time.monotonic() + 60
        while kept not in consumed and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                consumed.add(msg.topic())
        for _ in range(4):  # anything else would have come with it
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                consumed.add(msg.topic())
        assigned = sorted({tp.topic for tp in consumer.assignment()})
    finally:
        consumer.close()
    producer = module.Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 3000, **blacklist})
    reports: list[Any] = []
    producer.produce(hidden, b"x", on_delivery=lambda err, _m: reports.append(err and err.name()))
    producer.produce(kept, b"y", on_delivery=lambda err, _m: reports.append(err and err.name()))
    producer.flush(15)
    return {"listed": listed, "consumed": sorted(consumed), "assigned": assigned, "delivery": sorted(map(str, reports))}


def test_blacklisted_topics_are_ignored_as_confluent_kafka(kafka23: Any) -> None:
    bootstrap, base = _bootstrap(kafka23), unique_name("bl")
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    new = [confluent_kafka.admin.NewTopic(f"{base}-{kind}", 1, 1) for kind in ("hide", "keep")]
    for fut in admin.create_topics(new).values():
        fut.result(30)
    seed = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for topic in (f"{base}-hide", f"{base}-keep"):
        seed.produce(topic, b"seed")
    assert seed.flush(30) == 0
    reference = _behaviour(confluent_kafka, bootstrap, base)
    assert reference == {
        "listed": [f"{base}-hide", f"{base}-keep"],
        "consumed": [f"{base}-keep"],
        "assigned": [f"{base}-keep"],
        "delivery": ["None", "_MSG_TIMED_OUT"],
    }
    assert _behaviour(kafkawire, bootstrap, base) == reference
