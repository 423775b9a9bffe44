"""Incremental fetch sessions (KIP-227) against real peers: on Kafka 2.3 the consumer's Fetches
become incremental (its statistics count them) while pause/resume and seeks move partitions in and
out of the session; on Tansu and the mock cluster, which keep no sessions (contributing/judges.md), the
Fetches stay full. Either way every record confluent-kafka produced comes back exactly once per
reading, in order."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

import kafkawire
from kafkawire import OFFSET_BEGINNING, KafkaError, TopicPartition
from kafkawire.core.fetch_session import FetchSession
from tests.harness.fetching import settings, taker
from tests.harness.judge import Record, produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 4


def _records(wave: int, count: int) -> list[Record]:
    return [
        Record(b"w%d-%d" % (wave, i), key=b"k%d" % i, headers=[("wave", b"%d" % wave)], partition=i % PARTITIONS)
        for i in range(count * PARTITIONS)
    ]


def _poll(
    consumer: kafkawire.Consumer, count: int, got: dict[int, list[kafkawire.Message]], deadline: float = 60.0
) -> list[int]:
    """Consume ``count`` records into ``got`` (per partition); the partitions they came from."""
    seen: list[int] = []
    end = time.monotonic() + deadline
    while len(seen) < count:
        if time.monotonic() > end:
            pytest.fail(f"read {len(seen)} of {count} records")
        for m in consumer.consume(min(100, count - len(seen)), 0.2):
            error = m.error()
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                continue
            got[m.partition()].append(m)  # type: ignore[index]
            seen.append(m.partition())  # type: ignore[arg-type]
    return seen


@pytest.mark.parametrize("peer", ["kafka23", "tansu", "mock_cluster"])
def test_pause_resume_and_seeks_read_every_record_once_in_order(
    peer: str, request: pytest.FixtureRequest, topic_name: Callable[[str], str]
) -> None:
    broker: Any = request.getfixturevalue(peer)
    topic = topic_name("sess")
    if peer == "mock_cluster":
        bootstrap = broker.bootstraps
        broker.create_topic(topic, PARTITIONS)
    else:
        bootstrap = broker.bootstrap() if callable(broker.bootstrap) else broker.bootstrap
        create_topic(bootstrap, topic, PARTITIONS)
    small = {"batch.num.messages": 20, "linger.ms": 1}
    written = _records(1, 500)
    placed = produce_with_confluent(bootstrap, topic, written, config=small)
    stats: list[dict[str, Any]] = []
    consumer = kafkawire.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("sess"),
            "enable.auto.commit": False,
            # Small Fetches, and partitions held back for room now and then: many Fetches, partitions
            # leaving and rejoining the session.
            "max.partition.fetch.bytes": 2048,
            "fetch.wait.max.ms": 50,
            "queued.min.messages": 60,
            "statistics.interval.ms": 100,
            "stats_cb": lambda doc: stats.append(json.loads(doc)),
        }
    )
    got: dict[int, list[kafkawire.Message]] = {p: [] for p in range(PARTITIONS)}
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        _poll(consumer, 400, got)
        paused = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        consumer.pause(paused)
        more = _records(2, 200)  # a second wave while two partitions are out of the session
        placed += produce_with_confluent(bootstrap, topic, more, config=small)
        written += more
        assert set(_poll(consumer, 600, got)) <= {2, 3}
        at = {
            p: tp.offset
            for p, tp in enumerate(consumer.position([TopicPartition(topic, p) for p in range(PARTITIONS)]))
        }
        assert at[2] > 100 and at[3] + 50 < 700
        consumer.seek(TopicPartition(topic, 2, 100))  # backwards: 100.. again
        consumer.seek(TopicPartition(topic, 3, at[3] + 50))  # forwards: 50 skipped
        consumer.resume(paused)
        left = (700 - at[0]) + (700 - at[1]) + (700 - 100) + (700 - at[3] - 50)
        _poll(consumer, left, got)
        assert consumer.consume(100, 0.5) == [] or pytest.fail("records after the last one")
        deadline = time.monotonic() + 60
        while not stats or stats[-1]["fetch_sessions"]["full"] + stats[-1]["fetch_sessions"]["incremental"] < 10:
            assert time.monotonic() < deadline, stats[-1:] or "no statistics"
            consumer.poll(0.1)
        sessions = stats[-1]["fetch_sessions"]
    finally:
        consumer.close()
    expected = {
        0: list(range(700)),
        1: list(range(700)),
        2: list(range(at[2])) + list(range(100, 700)),
        3: list(range(at[3])) + list(range(at[3] + 50, 700)),
    }
    by_place = {place: record for place, record in zip(placed, written, strict=True)}
    for p in range(PARTITIONS):
        assert [m.offset() for m in got[p]] == expected[p], f"partition {p}"
        for m in got[p]:
            record = by_place[(p, m.offset())]  # type: ignore[index]
            assert (m.topic(), m.key(), m.value(), m.headers()) == (
                topic,
                record.key,
                record.value,
                list(record.headers),
            )
    if peer == "kafka23":
        assert sessions["incremental"] > sessions["full"] >= 1, sessions
        assert sessions["resets"] == 0 and sessions["open"] == 1, sessions
    else:  # no sessions there: every Fetch full
        assert sessions["incremental"] == 0 and sessions["open"] == 0 and sessions["full"] > 0, sessions


def _spoil_after_next_answer(session: FetchSession, field: str, shift: int) -> None:
    """Once the session's next answer was taken, move its id or epoch away from the broker's, so
    that the Fetch after it is refused (on the IO thread, where the session lives)."""
    real = session.answered

    def once(*args: Any) -> bool:
        believed = real(*args)
        if believed and session.epoch > 0:
            setattr(session, field, getattr(session, field) + shift)
            del session.answered  # type: ignore[method-assign]
        return believed

    session.answered = once  # type: ignore[method-assign]


def test_kafka23_session_errors_reset_to_a_full_fetch_and_lose_nothing(
    kafka23: Any, topic_name: Callable[[str], str]
) -> None:
    """Kafka 2.3 answers a stale epoch INVALID_FETCH_SESSION_EPOCH and an unknown session
    FETCH_SESSION_ID_NOT_FOUND; each resets the session to a full Fetch, and reading goes on."""
    bootstrap = kafka23.bootstrap() if callable(kafka23.bootstrap) else kafka23.bootstrap
    topic = topic_name("reset")
    create_topic(bootstrap, topic, 2)
    written = [Record(b"v%d" % i, partition=i % 2) for i in range(1200)]
    placed = produce_with_confluent(bootstrap, topic, written, config={"batch.num.messages": 20, "linger.ms": 1})
    config = settings(max_partition_fetch_bytes=1024, queued_min_messages=20, fetch_wait_max_ms=50)
    got: list[kafkawire.Message] = []
    with taker(bootstrap, config) as t:
        t.engine.assign([((topic, p), 0, None) for p in range(2)])
        got += t.take(300, chunk=10)
        stats = [t.engine.session_stats()]
        for field, shift in (("epoch", 5), ("id", 1)):
            t.client.engine.call_soon(
                lambda field=field, shift=shift: _spoil_after_next_answer(
                    next(iter(t.engine._sessions.values())), field, shift
                )
            )
            got += t.take(300, chunk=10)
            stats.append(t.engine.session_stats())
        got += t.take(300, chunk=10)
        assert t.quiet(0.3) == []
        stats.append(t.engine.session_stats())
    assert [s["resets"] for s in stats] == [0, 1, 2, 2], stats
    assert stats[0]["full"] == 1 and stats[-1]["full"] == 3 and stats[-1]["incremental"] > stats[2]["incremental"], (
        stats
    )
    for p in range(2):
        mine = [m for m in got if m.partition() == p]
        assert [m.offset() for m in mine] == list(range(600))
    by_place = dict(zip(placed, written, strict=True))
    assert all(m.value() == by_place[(m.partition(), m.offset())].value for m in got)  # type: ignore[index]
