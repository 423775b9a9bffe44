"""Classic group membership (consumer/group_member.py over core/group.py) in mixed groups: kafkawire
members and confluent-kafka consumers share a topic's partitions with no overlap and no gap, for
each assignor, as members join and leave; on Tansu and on a real Kafka 2.3 coordinator."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest

from kafkawire.base.debug import Debug
from kafkawire.client.coordinators import Coordinators
from kafkawire.client.network_client import Client
from kafkawire.consumer.group_member import GroupMember
from kafkawire.core.group import GroupConfig, GroupStep
from kafkawire.protocol.consumer_protocol import TopicPartitions
from tests.harness.judge import unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 6
SESSION = 6.0  # Kafka 2.3's minimum; Tansu's join waits about half of it


@pytest.fixture(params=["tansu", "kafka23"])
def bootstrap(request: pytest.FixtureRequest) -> str:
    found: Any = request.getfixturevalue(request.param)
    return str(found.bootstrap() if callable(found.bootstrap) else found.bootstrap)


class _Trail(logging.Handler):
    """The last lines of a member's cgrp and protocol diagnostics, for a failure's message."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: collections.deque[str] = collections.deque(maxlen=80)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.created:.3f} {record.getMessage()}")


class Ours:
    """A kafkawire member and the partitions its steps say it owns."""

    def __init__(self, bootstrap: str, group: str, topic: str, assignor: str, instance: str | None = None) -> None:
        self.trail = _Trail()
        logger = logging.getLogger(f"tests.member.{id(self.trail)}")
        logger.propagate, logger.level = False, logging.DEBUG
        logger.handlers = [self.trail]
        debug = Debug(["cgrp", "protocol"], logger, "ours")
        self.client = Client({"bootstrap.servers": bootstrap}, debug=debug)
        self.owned: set[tuple[str, int]] = set()
        self.lock = threading.Lock()
        cooperative = assignor == "cooperative-sticky"
        config = GroupConfig(group, SESSION, 30.0, 1.0, group_instance_id=instance, cooperative=cooperative)
        self.member = GroupMember(self.client, Coordinators(self.client), config, [assignor], [topic], self.changed)
        self.member.start()

    def changed(self, step: GroupStep) -> None:
        with self.lock:
            for tps in (step.revoke, step.lost):
                self.owned -= _pairs(tps)
            self.owned |= _pairs(step.assign)

    def partitions(self) -> set[tuple[str, int]]:
        with self.lock:
            return set(self.owned)

    def describe(self) -> str:
        m = self.member.membership
        return f"ours {m.state.value} generation {m.generation} id {m.member_id!r}:\n  " + "\n  ".join(self.trail.lines)

    def close(self) -> None:
        self.member.leave(5).result(10)
        self.client.close()


def _pairs(tps: TopicPartitions) -> set[tuple[str, int]]:
    return {(t, p) for t, ps in tps.items() for p in ps}


class Theirs:
    """A confluent-kafka consumer in the group, polled from the test's thread."""

    def __init__(self, bootstrap: str, group: str, topic: str, assignor: str) -> None:
        self.consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "session.timeout.ms": int(SESSION * 1000),
                "heartbeat.interval.ms": 1000,
                "partition.assignment.strategy": assignor,
            }
        )
        self.consumer.subscribe([topic])

    def partitions(self) -> set[tuple[str, int]]:
        self.consumer.poll(0.1)
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.consumer.close()


def _settles(members: list[Any], topic: str, deadline: float = 60.0) -> list[set[tuple[str, int]]]:
    """Wait until the members' partitions cover the topic once each, with everyone holding some."""
    want = {(topic, p) for p in range(PARTITIONS)}
    end = time.monotonic() + deadline
    while True:
        shares = [m.partitions() for m in members]
        union = set().union(*shares)
        if sum(map(len, shares)) == PARTITIONS and union == want and all(shares):
            return shares
        if time.monotonic() > end:
            described = "\n".join(m.describe() for m in members if hasattr(m, "describe"))
            pytest.fail(f"the group never settled: {shares}\n{described}")
        time.sleep(0.1)


@pytest.fixture
def group_of(bootstrap: str, topic_name: Callable[[str], str]) -> Iterator[Callable[..., tuple[str, list[Any]]]]:
    made: list[Any] = []
    topic, group = topic_name("grp"), unique_name("group")
    create_topic(bootstrap, topic, PARTITIONS)

    def make(kinds: list[type], assignor: str) -> tuple[str, list[Any]]:
        for kind in kinds:
            made.append(kind(bootstrap, group, topic, assignor))
        return topic, made

    yield make
    for m in made:
        m.close()


@pytest.mark.slow
@pytest.mark.rotating
@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
@pytest.mark.parametrize("leader", ["ours", "theirs"])
def test_mixed_group_shares_partitions_across_joins_and_leaves(
    group_of: Callable[..., tuple[str, list[Any]]], assignor: str, leader: str
) -> None:
    first, second = (Ours, Theirs) if leader == "ours" else (Theirs, Ours)
    topic, members = group_of([first], assignor)
    _settles(members, topic)  # the first to join leads: its assignor makes every plan below
    topic, members = group_of([second], assignor)
    _settles(members, topic)
    ours = next(m for m in members if isinstance(m, Ours))
    assert ours.member.membership.is_leader is (leader == "ours")
    topic, members = group_of([Ours], assignor)  # a third member joins
    _settles(members, topic)
    leaving = members.pop(1)  # the second member leaves; the others take over its partitions
    leaving.close()
    _settles(members, topic)
