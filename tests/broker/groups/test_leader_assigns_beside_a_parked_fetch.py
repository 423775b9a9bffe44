"""A classic group leader refreshes metadata before it assigns; that request goes on its
coordinator's own connection (consumer/group_member.py, as librdkafka's assignor asks on the
connection its JoinGroup answer came on), never behind its Fetch on the shared connection, which a
broker answers first. On a one-broker Kafka 2.3, a member whose Fetch the broker holds for two
minutes (an empty topic, fetch.min.bytes out of reach) leads the rebalance a second member starts,
and the group settles with that Fetch still held: the connection's statistics show no new Fetch
and no reconnect. The first member's periodic coordinator query may wait behind that Fetch too:
its rejoin must not wait for that answer (client/coordinators.py, ``fresh``). confluent-kafka, run
the same way, is the reference."""

from __future__ import annotations

import json
import time
from types import ModuleType
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

SESSION_MS = 30_000
# The broker holds a Fetch for an empty topic until fetch.wait.max.ms runs out (two minutes), far
# longer than the group may take; librdkafka's socket.timeout.ms must exceed it, or it warns.
PARKED = {"fetch.wait.max.ms": 120_000, "fetch.min.bytes": 100_000_000, "socket.timeout.ms": 180_000}


class Member:
    """A consumer and its latest statistics."""

    def __init__(self, module: ModuleType, bootstrap: str, group: str) -> None:
        self.stats: list[dict[str, Any]] = []
        conf: dict[str, Any] = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": 1000,
            "partition.assignment.strategy": "range",
            "statistics.interval.ms": 200,
            "stats_cb": lambda text: self.stats.append(json.loads(text)),
            **PARKED,
        }
        if module is confluent_kafka:
            conf["broker.address.family"] = "v4"
        self.consumer = module.Consumer(conf)

    def held(self) -> int:
        return len(self.consumer.assignment())

    def fetch_connection(self) -> dict[str, Any] | None:
        """The latest statistics of the connection to the broker (not the coordinator's own)."""
        if not self.stats:
            return None
        learned = [b for b in self.stats[-1]["brokers"].values() if b["source"] == "learned"]
        return learned[0] if learned else None


def _poll_until(members: list[Member], done: Any, within: float) -> bool:
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            return False
        for m in members:
            m.consumer.poll(0.1)
    return True


@pytest.mark.parametrize("module", [confluent_kafka, kafkawire], ids=["confluent-kafka", "kafkawire"])
def test_a_member_whose_fetch_is_held_leads_the_rebalance_a_newcomer_starts(kafka23: Any, module: ModuleType) -> None:
    bootstrap = kafka23.bootstrap()
    topic, group = unique_name("parked"), unique_name("g")
    create_topic(bootstrap, topic, 2)
    leader = Member(module, bootstrap, group)
    newcomer: Member | None = None
    try:
        leader.consumer.subscribe([topic])
        assert _poll_until([leader], lambda: leader.held() == 2, 60), "the first member never got the topic"

        def fetch_held() -> bool:
            conn = leader.fetch_connection()
            return conn is not None and conn["req"].get("Fetch", 0) >= 1 and conn["waitresp_cnt"] >= 1

        assert _poll_until([leader], fetch_held, 30), f"no Fetch held: {leader.fetch_connection()}"
        before = leader.fetch_connection()
        assert before is not None

        newcomer = Member(module, bootstrap, group)
        newcomer.consumer.subscribe([topic])
        # Behind the held Fetch, the leader's metadata request would wait out its own timeout (the
        # session timeout) and the connection with it: the group could not settle sooner.
        settled = _poll_until(
            [leader, newcomer], lambda: leader.held() == 1 and newcomer.held() == 1, SESSION_MS / 1000
        )
        assert settled, f"no assignment within a session timeout: {leader.held()} and {newcomer.held()} partitions"

        stats_seen = len(leader.stats)
        assert _poll_until([leader, newcomer], lambda: len(leader.stats) > stats_seen, 10)
        after = leader.fetch_connection()
        assert after is not None
        # The same Fetch is still held: none sent since, the connection never dropped.
        assert (after["req"]["Fetch"], after["disconnects"]) == (before["req"]["Fetch"], before["disconnects"])
        assert after["waitresp_cnt"] >= 1
    finally:
        for m in (leader, newcomer):
            if m is not None:
                m.consumer.close()
