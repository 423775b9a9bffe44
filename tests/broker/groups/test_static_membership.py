"""Static membership (KIP-345) on a real Kafka 2.3 coordinator: a kafkawire member with a
group.instance.id restarts within its session and gets its partitions back without a rebalance
(the confluent-kafka member in the group is not called back), sending no LeaveGroup on the way out."""

from __future__ import annotations

import time
from collections.abc import Callable

import confluent_kafka
import pytest

from tests.broker.groups.test_classic_membership import PARTITIONS, SESSION, Ours, _settles
from tests.harness.judge import unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


@pytest.mark.slow
def test_static_member_restarts_without_a_rebalance(kafka23: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    topic, group = topic_name("static"), unique_name("group")
    create_topic(kafka23.bootstrap(), topic, PARTITIONS)
    rebalances: list[str] = []
    judge = confluent_kafka.Consumer(
        {
            "bootstrap.servers": kafka23.bootstrap(),
            "group.id": group,
            "session.timeout.ms": int(SESSION * 1000),
            "heartbeat.interval.ms": 1000,
        }
    )
    judge.subscribe(
        [topic],
        on_assign=lambda _c, _p: rebalances.append("assign"),
        on_revoke=lambda _c, _p: rebalances.append("revoke"),
    )

    class Judge:
        errors: tuple[int, ...] = ()

        def partitions(self) -> set[tuple[str, int]]:
            judge.poll(0.1)
            return {(tp.topic, tp.partition) for tp in judge.assignment()}

    ours = Ours(kafka23.bootstrap(), group, topic, "range", "instance-1")
    try:
        _settles([Judge(), ours], topic)
        before, calls = ours.partitions(), len(rebalances)
        ours.close()  # a static member sends no LeaveGroup: its partitions wait for it
        ours = Ours(kafka23.bootstrap(), group, topic, "range", "instance-1")
        end = time.monotonic() + 30
        while ours.partitions() != before and time.monotonic() < end:
            Judge().partitions()
        assert ours.partitions() == before
        for _ in range(10):  # give a rebalance, had one started, the time to reach the judge
            Judge().partitions()
        assert len(rebalances) == calls, f"the judge saw a rebalance: {rebalances[calls:]}"
    finally:
        ours.close()
        judge.close()
