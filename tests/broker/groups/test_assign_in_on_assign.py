"""An on_assign that assigns the partitions itself and looks around before returning, as stream
processors built on confluent-kafka do (quixstreams): assign(), pause() of some partitions,
committed(), get_watermark_offsets(), position(). The records produced before must all reach the
application, once each and in order, and nothing is committed that it did not commit; the same
steps on confluent-kafka are the reference (Kafka 2.3)."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import Record, judge_config, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PER_PARTITION = (241, 61)  # source records per partition, as in the quixstreams test


def _consumer(client: str, bootstrap: str, group: str, isolation: str) -> Any:
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "partition.assignment.strategy": "range",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "isolation.level": isolation,
    }
    if client == "kafkawire":
        return kafkawire.Consumer(conf)
    return confluent_kafka.Consumer(judge_config(bootstrap, **conf))


def _run(client: str, bootstrap: str, source: str, side: str, isolation: str) -> dict[str, Any]:
    """Subscribe to ``source`` and ``side``; on_assign assigns everything itself, pauses ``side``,
    asks for committed offsets, watermarks and positions; then poll until every source record
    came or 60 s passed."""
    consumer = _consumer(client, bootstrap, unique_name(f"cb-{client}"), isolation)
    tp_type = kafkawire.TopicPartition if client == "kafkawire" else confluent_kafka.TopicPartition
    seen: dict[str, Any] = {"assigns": 0, "committed": [], "watermarks": []}

    def on_assign(c: Any, parts: list[Any]) -> None:
        if not parts:
            return
        seen["assigns"] += 1
        c.assign(parts)
        c.pause([tp for tp in parts if tp.topic == side])
        own = [tp for tp in parts if tp.topic == source]
        seen["committed"].append(sorted((tp.partition, tp.offset) for tp in c.committed(own, timeout=30)))
        for tp in own:
            seen["watermarks"].append(c.get_watermark_offsets(tp_type(tp.topic, tp.partition), timeout=30))
        c.position(own)

    got: dict[int, list[int]] = {0: [], 1: []}
    consumer.subscribe([source, side], on_assign=on_assign)
    try:
        deadline = time.monotonic() + 60
        while sum(map(len, got.values())) < sum(PER_PARTITION) and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is None or m.error() is not None:
                continue
            assert m.topic() == source
            got[m.partition()].append(m.offset())
        seen["got"] = got
        own = [tp_type(source, p) for p in (0, 1)]
        seen["committed_after"] = sorted((tp.partition, tp.offset) for tp in consumer.committed(own, timeout=30))
    finally:
        consumer.close()
    return seen


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_records_produced_before_reach_an_on_assign_that_assigns_itself(kafka23: KafkaBroker, isolation: str) -> None:
    bootstrap = kafka23.bootstrap()
    source, side = unique_name("cb-source"), unique_name("cb-side")
    create_topic(bootstrap, source, 2)
    create_topic(bootstrap, side, 2)
    records = [Record(b"v%d" % i, partition=p) for p, n in enumerate(PER_PARTITION) for i in range(n)]
    produce_with_confluent(bootstrap, source, records)

    runs = {client: _run(client, bootstrap, source, side, isolation) for client in ("confluent-kafka", "kafkawire")}

    reference = runs["confluent-kafka"]
    assert reference["got"] == {p: list(range(n)) for p, n in enumerate(PER_PARTITION)}
    assert reference["assigns"] == 1
    assert reference["committed"] == [[(0, -1001), (1, -1001)]]
    assert reference["watermarks"] == [(0, n) for n in PER_PARTITION]
    assert reference["committed_after"] == [(0, -1001), (1, -1001)]  # nothing committed: the application did not
    for key in ("got", "assigns", "committed", "watermarks", "committed_after"):
        assert runs["kafkawire"][key] == reference[key], key
