"""Issue 39: failure scenarios on a real three-broker Kafka 2.3 cluster (replication 3,
min.insync.replicas 2), run on confluent-kafka and kafkawire side by side under one seeded
schedule (tests/harness/cluster_scenarios.py). Each test prints both clients' counts and
recovery times; it asserts the counts (nothing lost, duplicated, reordered, reported twice or
never, committed past an unread record), never the timings.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.harness.cluster_scenarios import (
    Fault,
    kill_schedule,
    leader_of,
    run_producer_scenario,
)
from tests.harness.kafka_broker import KafkaUnavailable
from tests.harness.kafka_cluster import KafkaCluster

pytestmark = [pytest.mark.slow, pytest.mark.broker]

SEED = int(os.environ.get("KAFKAWIRE_CLUSTER_SEED", "39"))
PRODUCE_ORDER_KEPT = ("failed",)  # a record may fail (its report says so); it must not be lost or doubled


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    try:
        cluster = KafkaCluster().start()
    except KafkaUnavailable as exc:
        pytest.fail(f"the Kafka 2.3 cluster did not start: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(autouse=True)
def every_broker_up(cluster: KafkaCluster) -> Iterator[None]:
    """Each scenario starts and leaves with all three brokers running."""
    yield
    for node in range(cluster.size):
        if not cluster.alive(node):
            cluster.restart(node)


def show(title: str, verdicts: list) -> None:  # type: ignore[type-arg]
    print(f"\n{title}")
    for v in verdicts:
        print("  " + v.line())


def test_idempotent_producer_with_brokers_killed(cluster: KafkaCluster) -> None:
    """A broker SIGKILLed every 8-12 s (the leader of a seeded partition), started again 5 s later;
    idempotent acks=all producers of keyed records on both clients."""
    topic_partitions = range(3)
    faults = [Fault(at, "kill", leader_of(topic_partitions, SEED + i)) for i, at in enumerate(kill_schedule(SEED, 3))]
    verdicts = run_producer_scenario(cluster, faults, count=40_000, rate=1_000)
    show("idempotent producer, brokers killed", verdicts)
    for v in verdicts:
        assert v.problems(allowed=PRODUCE_ORDER_KEPT) == {}, v.line()
