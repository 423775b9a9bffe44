"""The debug contexts whose lines need a broker: ``topic`` (a topic appearing, one that does not
exist, a leader moving: librdkafka's mock cluster moves leaders), ``consumer`` (the application's
calls) and ``queue`` (handovers, flush, purge) over a group session on Kafka 2.3, and ``cgrp``
for the KIP-848 member on librdkafka's mock cluster (state transitions with member epoch and id,
heartbeats, heartbeat errors, assignment changes)."""

from __future__ import annotations

import re
import time
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire.protocol import error_codes as E
from kafkawire.protocol.apis import CONSUMER_GROUP_HEARTBEAT
from tests.broker.observability.test_debug_logs import LINE, Capture, _logger
from tests.harness.judge import unique_name
from tests.harness.mock_cluster import MockCluster
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


def said(capture: Capture, facility: str) -> list[str]:
    """The messages of one facility's lines."""
    return [m["msg"] for line in list(capture.lines) if (m := LINE.match(line)) and m["fac"] == facility]


def _poll_until(consumer: Any, done: Any, budget: float = 30.0) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + budget
    while not done(got) and time.monotonic() < deadline:
        m = consumer.poll(0.2)
        if m is not None and m.error() is None:
            got.append(m)
    return got


def test_topic_lines_follow_a_topic_that_appears_one_that_does_not_exist_and_a_leader_moving(
    mock_cluster: MockCluster,
) -> None:
    topic, missing = unique_name("dbg"), unique_name("missing")
    mock_cluster.create_topic(topic, 2)
    logger, capture = _logger("topic")
    producer = kafkawire.Producer(
        {
            "bootstrap.servers": mock_cluster.bootstraps,
            "logger": logger,
            "debug": "topic",
            "topic.metadata.refresh.interval.ms": 300,
            "allow.auto.create.topics": False,
        }
    )
    try:
        producer.produce(topic, b"v", partition=0)
        assert producer.flush(30) == 0
        producer.list_topics(missing, timeout=10)
        now = producer.list_topics(topic, timeout=10).topics[topic].partitions[0].leader
        target = next(b for b in mock_cluster.broker_ids if b != now)
        mock_cluster.partition_set_leader(topic, 0, target)  # the next refresh says so

        def moved() -> bool:
            """The leader's move, from the one we knew (or from none, when a NOT_LEADER answer made
            the client forget it first) to the new one, with the mock's next leader epoch."""
            shape = re.compile(rf"{topic} \[0\]: leader ({now}|-1) epoch 0 -> leader {target} epoch 1")
            return any(shape.fullmatch(line) for line in said(capture, "LEADER"))

        deadline = time.monotonic() + 30
        while not moved() and time.monotonic() < deadline:
            producer.produce(topic, b"v", partition=0)
            producer.flush(1)
    finally:
        producer.flush(5)
    states = said(capture, "TOPIC")
    assert f"Topic {topic} changed state unknown -> exists" in states
    assert any(s.startswith(f"Topic {missing} changed state unknown -> notexists: ") for s in states), states
    assert f"Topic {topic} partition count changed from 0 to 2" in said(capture, "PARTCNT")
    assert moved(), said(capture, "LEADER")


def test_consumer_and_queue_lines_over_a_consumer_session(kafka23: Any, topic_name: Any) -> None:
    bootstrap = kafka23.bootstrap()
    topic = topic_name("dbgq")
    create_topic(bootstrap, topic, 2)
    logger, capture = _logger("session")
    conf = {"bootstrap.servers": bootstrap, "logger": logger, "debug": "consumer,queue"}
    producer = kafkawire.Producer(conf)
    for i in range(4):
        producer.produce(topic, b"v%d" % i, partition=i % 2, on_delivery=lambda _e, _m: None)
    assert producer.flush(30) == 0
    producer.produce(topic, b"late", partition=0)
    producer.purge()
    producer.flush(5)
    group = unique_name("g")
    consumer = kafkawire.Consumer(
        {**conf, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    try:
        consumer.subscribe([topic])
        got = _poll_until(consumer, lambda g: len(g) >= 4, 60)
        assert len(got) == 4
        consumer.commit(message=got[-1], asynchronous=False)
    finally:
        consumer.close()
    # consumer: the calls, the partitions' starts and stops
    assert said(capture, "SUBSCRIBE") == [f'Group "{group}": subscribe to 1 topic(s): {topic}']
    assert said(capture, "ASSIGNMENT")[0] == "Added 2 partition(s) to assignment which now consists of 2 partition(s)"
    assert f"Start consuming {topic} [0] at offset STORED" in said(capture, "CONSUMER")
    assert f"Stop consuming {topic} [1]" in said(capture, "CONSUMER")
    m = got[-1]
    commit = f'Group "{group}": synchronous commit of 1 partition(s): {topic} [{m.partition()}] @ {m.offset() + 1}'
    assert commit in said(capture, "COMMIT")
    assert said(capture, "CLOSE") == [f'Closing consumer of group "{group}" (2 partition(s) assigned)']
    # queue: fetched records handed to the application, callbacks served, flush and purge
    enqueued = re.compile(
        rf"{topic} \[\d\]: offsets \d+\.\.\d+ \(\d+ batch\(es\)\) enqueued for the application \(\d+ bytes buffered\)"
    )
    assert any(enqueued.fullmatch(q) for q in said(capture, "FETCHQ")), said(capture, "FETCHQ")
    assert any("from the producer's callback queue" in s for s in said(capture, "SERVE"))
    assert "Flushing 4 message(s) from the queues" in said(capture, "FLUSH")
    assert "Purging queues with flags queue,inflight (1 message(s) outstanding)" in said(capture, "PURGE")


@pytest.fixture
def kip848_cluster() -> Any:
    with MockCluster(broker_count=1) as c:
        yield c


def test_the_kip848_member_says_its_states_epochs_heartbeats_and_assignments(kip848_cluster: MockCluster) -> None:
    topic, group = unique_name("dbg848"), unique_name("g848")
    kip848_cluster.create_topic(topic, 2)
    p = confluent_kafka.Producer({"bootstrap.servers": kip848_cluster.bootstraps})
    p.produce(topic, b"x", partition=0)
    p.flush(10)
    logger, capture = _logger("kip848")
    consumer = kafkawire.Consumer(
        {
            "bootstrap.servers": kip848_cluster.bootstraps,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "logger": logger,
            "debug": "cgrp",
        }
    )
    try:
        consumer.subscribe([topic])
        assert len(_poll_until(consumer, lambda g: len(g) >= 1)) == 1
        deadline = time.monotonic() + 30
        while not any("-> stable" in s for s in said(capture, "CGRPSTATE")) and time.monotonic() < deadline:
            consumer.poll(0.2)
        member_id = consumer.memberid()
        kip848_cluster.push_request_errors(CONSUMER_GROUP_HEARTBEAT.key, [E.COORDINATOR_LOAD_IN_PROGRESS])
        deadline = time.monotonic() + 30
        while not any("error" in s for s in said(capture, "HEARTBEAT")) and time.monotonic() < deadline:
            consumer.poll(0.2)
    finally:
        consumer.close()
    states = said(capture, "CGRPSTATE")
    shape = re.compile(rf'Group "{group}" changed state (\w+) -> (\w+) \(member epoch (-?\d+), member id "([^"]*)"\)')
    moves = [m.groups() for s in states if (m := shape.fullmatch(s))]
    assert len(moves) == len(states), states
    assert [(a, b) for a, b, _e, _id in moves][:3] == [
        ("unjoined", "joining"),
        ("joining", "reconciling"),
        ("reconciling", "stable"),
    ]
    assert int(moves[2][2]) > 0 and moves[2][3] == member_id
    assert ("stable", "leaving") in [(a, b) for a, b, _e, _id in moves]
    assert any(
        re.fullmatch(
            rf'.+: ConsumerGroupHeartbeat for group "{group}" with member epoch -?\d+ \(\d+ topic\(s\) owned\)', h
        )
        for h in said(capture, "HEARTBEAT")
    )
    assert any(
        h.startswith(f'Group "{group}" ConsumerGroupHeartbeat error: ') and h.endswith(": retrying")
        for h in said(capture, "HEARTBEAT")
    ), said(capture, "HEARTBEAT")
    changes = said(capture, "ASSIGNMENT")
    assert (
        f'Group "{group}" assignment change at member epoch {moves[1][2]}: assigned {topic} [0], {topic} [1]; revoked none; lost none'
        in changes
    ), changes
