"""KIP-848 groups (group.protocol=consumer) on librdkafka's mock cluster: kafkawire members
(consumer/consumer_group_member.py over core/consumer_group.py) and a confluent-kafka consumer share
a topic's partitions with no overlap and no gap as members join and leave. The mock cluster is the
judge of our ConsumerGroupHeartbeat declaration (newer than the specs tests/conformance reads)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest

from kafkawire import KafkaError
from kafkawire.admin import AdminClient
from kafkawire.client.coordinators import Coordinators
from kafkawire.client.network_client import Client
from kafkawire.consumer.consumer_group_member import ConsumerGroupMembership
from kafkawire.core.consumer_group import ConsumerGroupConfig
from kafkawire.core.group import GroupStep
from tests.harness.judge import described_groups, unique_name
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

PARTITIONS = 6


class Ours:
    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self.client = Client({"bootstrap.servers": bootstrap})
        self.owned: set[tuple[str, int]] = set()
        self.lock = threading.Lock()
        self.errors: list[int] = []
        config = ConsumerGroupConfig(group, 30.0, [topic])
        self.member = ConsumerGroupMembership(self.client, Coordinators(self.client), config, self.changed)
        self.member.start()

    def changed(self, step: GroupStep) -> None:
        with self.lock:
            for tps in (step.revoke, step.lost):
                self.owned -= {(t, p) for t, ps in tps.items() for p in ps}
            self.owned |= {(t, p) for t, ps in step.assign.items() for p in ps}
            if step.error is not None:
                self.errors.append(step.error)

    def partitions(self) -> set[tuple[str, int]]:
        with self.lock:
            return set(self.owned)

    def close(self) -> None:
        self.member.leave(5).result(10)
        self.client.close()


class Theirs:
    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self.consumer = confluent_kafka.Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer"}
        )
        self.consumer.subscribe([topic])
        self.errors: list[int] = []

    def partitions(self) -> set[tuple[str, int]]:
        self.consumer.poll(0.1)
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.consumer.close()


def _settles(members: list[Any], topic: str, deadline: float = 60.0) -> None:
    want = {(topic, p) for p in range(PARTITIONS)}
    end = time.monotonic() + deadline
    while True:
        shares = [m.partitions() for m in members]
        if sum(map(len, shares)) == PARTITIONS and set().union(*shares) == want and all(shares):
            assert not any(m.errors for m in members)
            return
        if time.monotonic() > end:
            pytest.fail(f"the group never settled: {shares}")
        time.sleep(0.1)


@pytest.fixture
def cluster() -> Iterator[MockCluster]:
    with MockCluster(broker_count=1) as c:
        yield c


@pytest.mark.slow
def test_kip848_group_shares_partitions_with_confluent_kafka(cluster: MockCluster) -> None:
    topic, group = unique_name("kip848"), unique_name("group")
    cluster.create_topic(topic, PARTITIONS)
    members: list[Any] = []
    try:
        members.append(Ours(cluster.bootstraps, group, topic))
        _settles(members, topic)  # alone: everything
        members.append(Theirs(cluster.bootstraps, group, topic))
        _settles(members, topic)
        members.append(Ours(cluster.bootstraps, group, topic))
        _settles(members, topic)
        members.pop(1).close()  # confluent-kafka leaves: ours take its partitions
        _settles(members, topic)
        members.pop(0).close()
        _settles(members, topic)
    finally:
        for m in members:
            m.close()


def test_describing_a_kip848_group_where_the_broker_cannot(cluster: MockCluster) -> None:
    """librdkafka 2.16's mock runs KIP-848 groups but answers neither ConsumerGroupDescribe nor
    DescribeGroups: both clients ask the first, find it missing, fall back to the second and fail
    the group with the same code (no broker here answers ConsumerGroupDescribe with members)."""
    topic, group = unique_name("kip848"), unique_name("group")
    cluster.create_topic(topic, PARTITIONS)
    members: list[Any] = [Ours(cluster.bootstraps, group, topic), Theirs(cluster.bootstraps, group, topic)]
    try:
        _settles(members, topic)
        theirs = described_groups(confluent_kafka.admin.AdminClient({"bootstrap.servers": cluster.bootstraps}), [group])
        with AdminClient({"bootstrap.servers": cluster.bootstraps}) as admin:
            ours = described_groups(admin, [group])
        assert ours == theirs == {group: ("error", KafkaError._UNSUPPORTED_FEATURE, "_UNSUPPORTED_FEATURE")}
    finally:
        for m in members:
            m.close()
