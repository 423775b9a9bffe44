"""kafkawire.Consumer with group.protocol=consumer (KIP-848) on librdkafka's mock cluster, a
confluent-kafka consumer in the same group: incremental rebalance callbacks in poll(), no overlap,
and every record read between them (at least once: offsets are not committed here)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import unique_name
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

PARTITIONS = 4


@pytest.fixture
def cluster() -> Iterator[MockCluster]:
    with MockCluster(broker_count=1) as c:
        yield c


def test_kip848_consumer_face_with_confluent_kafka(cluster: MockCluster) -> None:
    topic, group = unique_name("kip848"), unique_name("group")
    cluster.create_topic(topic, PARTITIONS)
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstraps})
    for i in range(200):
        producer.produce(topic, b"%d" % i, partition=i % PARTITIONS)
    assert producer.flush(15) == 0
    calls: list[tuple[str, int]] = []
    mine = kafkawire.Consumer(
        {
            "bootstrap.servers": cluster.bootstraps,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    theirs = confluent_kafka.Consumer(
        {
            "bootstrap.servers": cluster.bootstraps,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    seen: list[tuple[int, int]] = []
    try:

        def recorder(kind: str) -> Any:
            return lambda _c, parts: calls.append((kind, len(parts)))

        mine.subscribe([topic], on_assign=recorder("assign"), on_revoke=recorder("revoke"))
        end = time.monotonic() + 30
        while len(mine.assignment()) < PARTITIONS and time.monotonic() < end:
            first = mine.poll(0.1)
            if first is not None and first.error() is None:
                seen.append((first.partition(), first.offset()))  # type: ignore[arg-type]
        assert calls == [("assign", PARTITIONS)]
        theirs.subscribe([topic])
        end = time.monotonic() + 60
        while time.monotonic() < end:
            for m in mine.consume(50, 0.1):
                if m.error() is None:
                    seen.append((m.partition(), m.offset()))  # type: ignore[arg-type]
            for m in theirs.consume(50, 0.1):
                if m.error() is None:
                    seen.append((m.partition(), m.offset()))
            ours = {(tp.topic, tp.partition) for tp in mine.assignment()}
            their = {(tp.topic, tp.partition) for tp in theirs.assignment()}
            if ours and their and len(set(seen)) >= 200:
                break
        assert ours and their and not ours & their and len(ours | their) == PARTITIONS
        assert [k for k, _ in calls] == ["assign", "revoke"]  # only the increment moved
        assert calls[1][1] == len(their)
        assert len(set(seen)) == 200
    finally:
        mine.close()
        theirs.close()


def test_kip848_regex_subscription_picks_up_a_new_topic(cluster: MockCluster) -> None:
    """A ``^pattern`` is matched against the cluster's topics at every metadata refresh; a new
    match goes to the coordinator in the next ConsumerGroupHeartbeat's topic names, and its
    partitions are assigned and read."""
    prefix = unique_name("rx848")
    first, second = f"{prefix}-a", f"{prefix}-b"
    cluster.create_topic(first, 2)
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstraps})
    consumer = kafkawire.Consumer(
        {
            "bootstrap.servers": cluster.bootstraps,
            "group.id": unique_name("group"),
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    try:
        consumer.subscribe([f"^{prefix}-.*"])
        end = time.monotonic() + 30
        while len(consumer.assignment()) < 2 and time.monotonic() < end:
            consumer.poll(0.1)
        assert {(tp.topic, tp.partition) for tp in consumer.assignment()} == {(first, 0), (first, 1)}
        cluster.create_topic(second, 2)
        for i in range(10):
            producer.produce(second, b"b%d" % i, partition=i % 2)
        assert producer.flush(15) == 0
        got: list[bytes] = []
        end = time.monotonic() + 60
        while len(got) < 10 and time.monotonic() < end:
            got += [m.value() or b"" for m in consumer.consume(50, 0.1) if m.error() is None]
        assert sorted(got) == sorted(b"b%d" % i for i in range(10))
        assert {(tp.topic, tp.partition) for tp in consumer.assignment()} == {
            (t, p) for t in (first, second) for p in (0, 1)
        }
    finally:
        consumer.close()
