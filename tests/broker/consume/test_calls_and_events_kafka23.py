"""The consumer's edges on Kafka 2.3, confluent-kafka's behaviour the reference: the same steps on
both clients against the same broker, the outcomes compared.

A refused JoinGroup, calls after close(), committed metadata, incremental_assign conflicts, the
order of a loss after max.poll.interval.ms, and offsets_for_times of partitions that do not exist.
Broker error texts are left out of the comparisons where they are kafkawire's own table's wording
(errors.py); codes, flags and local texts are compared."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import Record, judge_config, produce_with_confluent, unique_name, wait_member_left
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

CLIENTS = {"theirs": confluent_kafka, "ours": kafkawire}
# Kafka 2.3's group.max.session.timeout.ms is 30 minutes: one above it is refused at JoinGroup.
TOO_LONG_SESSION_MS = 1_900_000


def _bootstrap(kafka23: Any) -> str:
    return str(kafka23.bootstrap() if callable(kafka23.bootstrap) else kafka23.bootstrap)


def _consumer(lib: Any, bootstrap: str, **conf: Any) -> Any:
    """One configuration for both clients (judge_config carries librdkafka-only keys)."""
    return lib.Consumer({"bootstrap.servers": bootstrap, "group.id": unique_name("grp"), **conf})


def _outcome(call: Callable[[], Any]) -> Any:
    """What a call gives: its value, or its exception as (kind, code name or args)."""
    try:
        return ("value", call())
    except KafkaExceptions as exc:
        err = exc.args[0]
        return ("KafkaException", err.name(), err.str())
    except RuntimeError as exc:
        return ("RuntimeError", exc.args)


KafkaExceptions = (confluent_kafka.KafkaException, kafkawire.KafkaException)


def test_a_refused_join_group_is_an_error_event_from_poll(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("join")
    create_topic(bootstrap, topic, 1)
    seen = {}
    for name, lib in CLIENTS.items():
        errors: list[Any] = []
        consumer = _consumer(
            lib,
            bootstrap,
            **{
                "session.timeout.ms": TOO_LONG_SESSION_MS,
                "max.poll.interval.ms": TOO_LONG_SESSION_MS,
                "error_cb": errors.append,
            },
        )
        consumer.subscribe([topic])
        events = []
        deadline = time.monotonic() + 30
        while len(events) < 2 and time.monotonic() < deadline:  # refused, then refused again
            m = consumer.poll(0.5)
            if m is not None:
                e = m.error()
                events.append((e.name(), e.fatal(), e.retriable(), e.str().split(": ")[0], m.topic(), m.offset()))
        seen[name] = (events, errors, consumer.memberid(), consumer.assignment())
        consumer.close()
    refused = ("INVALID_SESSION_TIMEOUT", False, False, "JoinGroup failed", None, None)
    assert seen["ours"] == seen["theirs"] == ([refused, refused], [], None, [])


def test_calls_after_close_raise_consumer_closed(kafka23: Any) -> None:
    bootstrap = _bootstrap(kafka23)
    seen = {}
    for name, lib in CLIENTS.items():
        consumer = _consumer(lib, bootstrap)
        consumer.close()
        seen[name] = [
            _outcome(call)
            for call in (
                consumer.memberid,
                consumer.assignment,
                lambda: consumer.poll(0),  # noqa: B023
                consumer.consumer_group_metadata,
                lambda: consumer.committed([lib.TopicPartition("t", 0)]),  # noqa: B023
                consumer.list_topics,
                consumer.close,
            )
        ]
    assert seen["ours"] == seen["theirs"]
    assert seen["ours"][0] == ("RuntimeError", ("Consumer closed",))


def test_committed_metadata_reads_as_confluent_reads_it(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    """confluent-kafka commits metadata '' as "\\x00" (its C string's end): both read it back ''."""
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("meta")
    create_topic(bootstrap, topic, 3)
    group = unique_name("grp")
    writer = confluent_kafka.Consumer(judge_config(bootstrap, **{"group.id": group}))
    try:
        TP = confluent_kafka.TopicPartition
        writer.commit(
            offsets=[TP(topic, 0, 1), TP(topic, 1, 2, metadata=""), TP(topic, 2, 3, metadata="note")],
            asynchronous=False,
        )
    finally:
        writer.close()
    seen = {}
    for name, lib in CLIENTS.items():
        reader = _consumer(lib, bootstrap, **{"group.id": group})
        try:
            got = reader.committed([lib.TopicPartition(topic, p) for p in range(3)], timeout=30)
        finally:
            reader.close()
        seen[name] = [(tp.partition, tp.offset, tp.metadata, tp.error) for tp in got]
    assert seen["ours"] == seen["theirs"] == [(0, 1, None, None), (1, 2, "", None), (2, 3, "note", None)]


def test_incremental_assign_conflicts(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("incr")
    create_topic(bootstrap, topic, 2)
    seen = {}
    for name, lib in CLIENTS.items():
        consumer = _consumer(lib, bootstrap)
        TP = lib.TopicPartition
        try:
            consumer.incremental_assign([TP(topic, 0)])
            seen[name] = [
                _outcome(lambda: consumer.incremental_assign([TP(topic, 0)])),  # noqa: B023
                _outcome(lambda: consumer.incremental_assign([TP(topic, 1), TP(topic, 1)])),  # noqa: B023
                _outcome(lambda: consumer.incremental_unassign([TP(topic, 1)])),  # noqa: B023
                [(tp.topic, tp.partition) for tp in consumer.assignment()],
            ]
        finally:
            consumer.close()
    assert seen["ours"] == seen["theirs"]
    assert seen["ours"][0] == ("KafkaException", "_CONFLICT", f"{topic} [0] is already part of the current assignment")


def _lost_after_max_poll(lib: Any, bootstrap: str, topic: str) -> list[Any]:
    """Consume, stop polling past max.poll.interval.ms, then poll: what each poll gave or ran."""
    calls: list[Any] = []

    def record(kind: str) -> Callable[[Any, list[Any]], None]:
        return lambda _c, parts: calls.append((kind, sorted(tp.partition for tp in parts)))

    group = unique_name("grp")
    consumer = _consumer(
        lib,
        bootstrap,
        **{
            "group.id": group,
            "session.timeout.ms": 6000,
            "max.poll.interval.ms": 6000,
            "auto.offset.reset": "earliest",
            "partition.assignment.strategy": "cooperative-sticky",
        },
    )
    consumer.subscribe([topic], on_assign=record("assign"), on_revoke=record("revoke"))  # no on_lost
    try:
        seen, deadline = 0, time.monotonic() + 60
        while seen < 4 and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            seen += m is not None and m.error() is None
        assert seen == 4
        # No poll past max.poll.interval.ms: the member leaves the group (the bound is on a hang).
        wait_member_left(bootstrap, group, consumer.memberid())
        for i in range(3):
            calls.append(("poll", i))
            m = consumer.poll(30 if i == 0 else 0.5)  # the first: the event, queued as the member left
            while m is not None and m.error() is None:  # records read again after the rejoin
                m = consumer.poll(0)
            if m is not None:
                calls.append(("event", m.error().name()))
        deadline = time.monotonic() + 30
        while calls[-1][0] != "assign" and time.monotonic() < deadline:
            consumer.poll(0.5)
    finally:
        consumer.close()
    return calls


@pytest.mark.slow  # (make test's time: CI runs it in test-slow)
def test_partitions_lost_to_max_poll_are_revoked_in_the_poll_after_the_event(
    kafka23: Any, topic_name: Callable[[str], str]
) -> None:
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("maxpoll")
    create_topic(bootstrap, topic, 2)
    produce_with_confluent(bootstrap, topic, [Record(value=b"%d" % i, partition=i % 2) for i in range(4)])
    seen = {}
    for name, lib in CLIENTS.items():
        calls = _lost_after_max_poll(lib, bootstrap, topic)
        start = calls.index(("poll", 0))
        seen[name] = calls[start : start + 4]  # how long the rejoin takes after that is the broker's
    assert (
        seen["ours"]
        == seen["theirs"]
        == [("poll", 0), ("event", "_MAX_POLL_EXCEEDED"), ("poll", 1), ("revoke", [0, 1])]
    )


def test_offsets_for_times_answers_per_partition(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = _bootstrap(kafka23)
    topic, missing = topic_name("oft"), topic_name("none")
    create_topic(bootstrap, topic, 2)
    asks = {
        "unknown partition alone": [(topic, 7, 555)],
        "unknown topic alone": [(missing, 0, 555)],
        "known and unknown partition": [(topic, 0, 555), (topic, 7, 556)],
        "known and unknown topic": [(topic, 1, 555), (missing, 0, 556), (missing, 1, 557)],
        "all three": [(topic, 0, 555), (topic, 9, 558), (missing, 0, 556)],
    }
    seen: dict[str, dict[str, Any]] = {}
    for name, lib in CLIENTS.items():
        consumer = _consumer(lib, bootstrap)
        try:
            seen[name] = {
                case: _outcome(
                    lambda: [
                        (tp.topic, tp.partition, tp.offset, tp.error.name() if tp.error else None)
                        for tp in consumer.offsets_for_times([lib.TopicPartition(*q) for q in qs], timeout=10)  # noqa: B023
                    ]
                )
                for case, qs in asks.items()
            }
        finally:
            consumer.close()
    assert seen["ours"] == seen["theirs"]
    assert seen["ours"]["known and unknown partition"] == (
        "value",
        [(topic, 0, -1, None), (topic, 7, 556, "_UNKNOWN_PARTITION")],
    )
