"""A Consumer subclass that overrides the public calls (assign, unassign, commit, ...) so that they
raise: the rebalance defaults and close() never call them, as with confluent-kafka, whose consumer
does the same steps in librdkafka. The same subclass over confluent-kafka is the reference: both
settle, consume everything, close cleanly, commit what they consumed and leave the group."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient as TheirAdmin

import kafkawire
from tests.harness.judge import Record, judge_config, produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 4
RECORDS = 40
OFFSET_INVALID = -1001
# Every public call a lifecycle path might be tempted to use.
OVERRIDDEN = (
    "assign",
    "unassign",
    "incremental_assign",
    "incremental_unassign",
    "assignment",
    "commit",
    "store_offsets",
    "unsubscribe",
    "committed",
    "position",
    "pause",
    "resume",
    "seek",
)


class OwnCallCalled(AssertionError):
    pass


def refusing(base: type[Any]) -> type[Any]:
    """A subclass of ``base`` whose OVERRIDDEN methods raise when called."""

    def refuse(name: str) -> Callable[..., Any]:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            raise OwnCallCalled(f"the consumer's own {name}() was called")

        return method

    return type(f"Refusing{base.__name__}", (base,), {name: refuse(name) for name in OVERRIDDEN})


def run(make: Callable[[dict[str, Any]], Any], bootstrap: str, topic: str, group: str, assignor: str) -> dict[str, Any]:
    """Subscribe, consume every record, close; what happened along the way."""
    calls: list[tuple[str, list[int]]] = []

    def record(kind: str) -> Callable[[Any, list[Any]], None]:
        return lambda _consumer, parts: calls.append((kind, sorted(tp.partition for tp in parts)))

    consumer = make(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": 60_000,
            "heartbeat.interval.ms": 1000,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "auto.commit.interval.ms": 600_000,
            "partition.assignment.strategy": assignor,
        }
    )
    consumer.subscribe([topic], on_assign=record("assign"), on_revoke=record("revoke"))
    seen = 0
    deadline = time.monotonic() + 60
    while seen < RECORDS and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            seen += 1
    consumer.close()
    with pytest.raises(RuntimeError):
        consumer.poll(0)
    return {"seen": seen, "last_call": calls[-1] if calls else None}


def committed(bootstrap: str, group: str, topic: str) -> list[int]:
    judge = confluent_kafka.Consumer(judge_config(bootstrap, **{"group.id": group}))
    try:
        parts = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
        return [tp.offset for tp in judge.committed(parts, timeout=10)]
    finally:
        judge.close()


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_close_and_rebalance_defaults_skip_overridden_calls(
    kafka23: Any, topic_name: Callable[[str], str], assignor: str
) -> None:
    bootstrap = str(kafka23.bootstrap() if callable(kafka23.bootstrap) else kafka23.bootstrap)
    topic = topic_name("life")
    create_topic(bootstrap, topic, PARTITIONS)
    # All in partition 0: the three others stay empty (see the commit check below).
    produce_with_confluent(bootstrap, topic, [Record(b"r%d" % i, None, partition=0) for i in range(RECORDS)])
    judge = confluent_kafka.Consumer(judge_config(bootstrap, **{"group.id": unique_name("wm")}))
    try:
        ends = [
            judge.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p), timeout=10)[1]
            for p in range(PARTITIONS)
        ]
    finally:
        judge.close()
    groups = {"theirs": unique_name("grp"), "ours": unique_name("grp")}
    results = {
        "theirs": run(refusing(confluent_kafka.Consumer), bootstrap, topic, groups["theirs"], assignor),
        "ours": run(refusing(kafkawire.Consumer), bootstrap, topic, groups["ours"], assignor),
    }
    assert results["ours"] == results["theirs"] == {"seen": RECORDS, "last_call": ("revoke", list(range(PARTITIONS)))}
    # close() committed what was consumed (enable.auto.commit), and left the group. An empty
    # partition: kafkawire commits nothing (no record was handed over); librdkafka sometimes
    # commits the start auto.offset.reset found (0), sometimes nothing (contributing/judges.md).
    ours, theirs = committed(bootstrap, groups["ours"], topic), committed(bootstrap, groups["theirs"], topic)
    assert ends == [RECORDS, 0, 0, 0]
    assert ours == [RECORDS, OFFSET_INVALID, OFFSET_INVALID, OFFSET_INVALID]
    assert theirs[0] == RECORDS and all(o in (0, OFFSET_INVALID) for o in theirs[1:]), theirs
    admin = TheirAdmin(judge_config(bootstrap))
    for group in groups.values():
        assert admin.describe_consumer_groups([group])[group].result(10).members == []
