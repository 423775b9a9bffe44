"""The order of the events a consumer program sees, against confluent-kafka on the same Kafka 2.3
broker: _PARTITION_EOF after a Fetch at the end came back empty (not when the last records came),
the revocation of unsubscribe() and close(), rebalance callbacks against records."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import judge_config, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

WAIT_MS = 3000  # fetch.wait.max.ms: far longer than the 100 ms between the two records


def _consumer(client: str, bootstrap: str, **conf: Any) -> Any:
    conf = {"bootstrap.servers": bootstrap, "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, **conf}
    if client == "confluent":
        return confluent_kafka.Consumer(judge_config(bootstrap, **conf))
    return kafkawire.Consumer(conf)


def _what(m: Any) -> Any:
    if m.error() is None:
        return m.value().decode()
    return "EOF" if m.error().code() == kafkawire.KafkaError._PARTITION_EOF else m.error().name()


def _two_records_100ms_apart(client: str, bootstrap: str) -> list[Any]:
    """Caught up on an empty partition (its EOF), then one record and another 100 ms later: what
    poll() hands over until the EOF after them."""
    topic = unique_name("eof")
    create_topic(bootstrap, topic, 1)
    c = _consumer(client, bootstrap, **{
        "group.id": topic, "auto.offset.reset": "earliest", "enable.partition.eof": True,
        "fetch.wait.max.ms": WAIT_MS,
    })  # fmt: skip
    producer = confluent_kafka.Producer(judge_config(bootstrap, **{"linger.ms": 0}))
    seen: list[Any] = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not seen:
            m = c.poll(0.5)
            if m is not None:
                seen.append(_what(m))
        for value in (b"r1", b"r2"):
            producer.produce(topic, value, partition=0)
            producer.flush(10)
            time.sleep(0.1)
        while time.monotonic() < deadline and seen.count("EOF") < 2:
            m = c.poll(0.5)
            if m is not None:
                seen.append(_what(m))
    finally:
        c.close()
    return seen


def test_partition_eof_comes_after_a_record_produced_while_the_next_fetch_waits(kafka23: KafkaBroker) -> None:
    bootstrap = kafka23.bootstrap()
    ours = _two_records_100ms_apart("kafkawire", bootstrap)
    assert ours == _two_records_100ms_apart("confluent", bootstrap)
    assert ours == ["EOF", "r1", "r2", "EOF"]
