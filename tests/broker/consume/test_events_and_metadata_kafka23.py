"""Small consumer differences judged on Kafka 2.3 against confluent-kafka: the same steps on both
clients, the outcomes compared. An error event's partition, the offsets ``assignment()`` shows,
committed metadata as it travels between the two clients (confluent-kafka writes it with its C
string's NUL and reads up to one), and AIOConsumer's default thread pool size."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import confluent_kafka.aio
import pytest

import kafkawire
import kafkawire.admin
import kafkawire.aio
from kafkawire.consumer.consumer import engine_of
from tests.broker.consume.test_calls_and_events_kafka23 import CLIENTS, TOO_LONG_SESSION_MS, _bootstrap, _consumer
from tests.harness.judge import Record, produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


def test_an_error_event_about_no_partition_says_partition_0(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("evpart")
    create_topic(bootstrap, topic, 1)
    seen = {}
    for name, lib in CLIENTS.items():
        consumer = _consumer(
            lib, bootstrap, **{"session.timeout.ms": TOO_LONG_SESSION_MS, "max.poll.interval.ms": TOO_LONG_SESSION_MS}
        )
        consumer.subscribe([topic])
        event = None
        deadline = time.monotonic() + 30
        while event is None and time.monotonic() < deadline:
            event = consumer.poll(0.5)
        consumer.close()
        assert event is not None, name
        seen[name] = (event.error().name(), event.topic(), event.partition(), event.offset())
    assert seen["ours"] == seen["theirs"] == ("INVALID_SESSION_TIMEOUT", None, 0, None)


def test_assignment_shows_the_offsets_partitions_were_assigned_at(
    kafka23: Any, topic_name: Callable[[str], str]
) -> None:
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("asgoff")
    create_topic(bootstrap, topic, 2)
    produce_with_confluent(bootstrap, topic, [Record(b"v", b"k", partition=p) for p in (0, 1) for _ in range(3)])
    seen = {}
    for name, lib in CLIENTS.items():
        TP = lib.TopicPartition
        consumer = _consumer(lib, bootstrap, **{"auto.offset.reset": "earliest", "enable.auto.commit": False})
        steps = []
        try:
            consumer.incremental_assign([TP(topic, 0), TP(topic, 1, 1)])
            steps.append(consumer.assignment())
            got, deadline = 0, time.monotonic() + 30
            while got < 5 and time.monotonic() < deadline:
                m = consumer.poll(0.5)
                got += m is not None and m.error() is None
            assert got == 5, name
            steps.append(consumer.assignment())  # consuming does not move them
            consumer.incremental_unassign([TP(topic, 1)])
            consumer.incremental_assign([TP(topic, 1, lib.OFFSET_END)])
            steps.append(consumer.assignment())
            consumer.assign([TP(topic, 0, 2)])
            steps.append(consumer.assignment())
        finally:
            consumer.close()
        seen[name] = [sorted((tp.partition, tp.offset) for tp in step) for step in steps]
    stored, end = kafkawire.OFFSET_STORED, kafkawire.OFFSET_END
    assert (
        seen["ours"]
        == seen["theirs"]
        == [[(0, stored), (1, 1)], [(0, stored), (1, 1)], [(0, stored), (1, end)], [(0, 2)]]
    )


def _commit_with_metadata(lib: Any, bootstrap: str, group: str, topic: str) -> list[Any]:
    consumer = _consumer(lib, bootstrap, **{"group.id": group, "enable.auto.commit": False})
    TP = lib.TopicPartition
    try:
        done = consumer.commit(
            offsets=[TP(topic, 0, 1), TP(topic, 1, 2, metadata=""), TP(topic, 2, 3, metadata="note")],
            asynchronous=False,
        )
    finally:
        consumer.close()
    return [(tp.partition, tp.offset, tp.metadata) for tp in done]


def test_committed_metadata_travels_between_the_clients(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    """Each client reads what the other committed; on the wire both wrote the same bytes (read
    raw by an OffsetFetch: every public reader stops at the NUL, as librdkafka's C string does)."""
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("metax")
    create_topic(bootstrap, topic, 3)
    wire, returned, read = {}, {}, {}
    for writer, lib in CLIENTS.items():
        group = unique_name("grp")
        returned[writer] = _commit_with_metadata(lib, bootstrap, group, topic)
        raw = kafkawire.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        try:
            found = engine_of(raw)._commits.committed([(topic, p) for p in range(3)], require_stable=False, timeout=30)
        finally:
            raw.close()
        wire[writer] = sorted((tp[1], c.metadata) for tp, c in found.items())
        for reader, rlib in CLIENTS.items():
            consumer = _consumer(rlib, bootstrap, **{"group.id": group})
            try:
                got = consumer.committed([rlib.TopicPartition(topic, p) for p in range(3)], timeout=30)
            finally:
                consumer.close()
            read[(writer, reader)] = [(tp.partition, tp.offset, tp.metadata) for tp in got]
    assert returned["ours"] == returned["theirs"] == [(0, 1, None), (1, 2, ""), (2, 3, "note")]
    assert wire["ours"] == wire["theirs"] and wire["ours"][1:] == [(1, "\x00"), (2, "note\x00")]
    assert all(v == [(0, 1, None), (1, 2, ""), (2, 3, "note")] for v in read.values()), read


def test_aio_consumer_thread_pool_default_is_confluents() -> None:
    ours = inspect.signature(kafkawire.aio.AIOConsumer).parameters["max_workers"].default
    theirs = inspect.signature(confluent_kafka.aio.AIOConsumer).parameters["max_workers"].default
    assert ours == theirs

    async def pool_size() -> int:
        consumer = kafkawire.aio.AIOConsumer({"bootstrap.servers": "127.0.0.1:1", "group.id": unique_name("g")})
        try:
            return int(consumer.executor._max_workers)  # type: ignore[attr-defined]
        finally:
            await consumer.close()

    assert asyncio.run(pool_size()) == theirs


def test_a_subscribed_topic_that_does_not_exist_is_one_error_event(
    kafka23: Any, topic_name: Callable[[str], str]
) -> None:
    """Subscribed to a missing topic and an existing one: one event names the missing topic, the
    other's records still come (the subscription stays)."""
    bootstrap = _bootstrap(kafka23)
    topic, missing = topic_name("present"), topic_name("absent")
    create_topic(bootstrap, topic, 1)
    produce_with_confluent(bootstrap, topic, [Record(b"v%d" % i, None) for i in range(5)])
    seen = {}
    for name, lib in CLIENTS.items():
        consumer = _consumer(lib, bootstrap, **{"auto.offset.reset": "earliest"})
        consumer.subscribe([missing, topic])
        events, values = [], []
        deadline = time.monotonic() + 30
        while len(values) < 5 and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error() is not None:
                events.append(
                    (m.error().name(), m.topic(), m.partition(), "Subscribed topic not available" in m.error().str())
                )
            else:
                values.append(m.value())
        for _ in range(4):  # no second report while the topic stays missing
            m = consumer.poll(0.5)
            if m is not None and m.error() is not None:
                events.append((m.error().name(), m.topic(), m.partition(), None))
        consumer.close()
        seen[name] = (events, sorted(values))
    assert (
        seen["ours"]
        == seen["theirs"]
        == ([("UNKNOWN_TOPIC_OR_PART", missing, 0, True)], [b"v%d" % i for i in range(5)])
    )


def test_a_topic_created_just_before_subscribing_is_no_error_event(kafka23: Any) -> None:
    """A program creates its topic with its own client's AdminClient (no operation_timeout) and
    subscribes as soon as the future resolves: the broker waited for the topic to exist (the
    default operation timeout is socket.timeout.ms), so no "Subscribed topic not available" event
    comes, on either client, round after round (it came in 4 of 5 kafkawire runs when the default
    was 0)."""
    bootstrap = _bootstrap(kafka23)
    seen = {}
    for name, lib in CLIENTS.items():
        admin_module = confluent_kafka.admin if lib is confluent_kafka else kafkawire.admin
        rounds = []
        for _ in range(3):
            topic = unique_name("fresh")
            admin = admin_module.AdminClient({"bootstrap.servers": bootstrap})
            admin.create_topics([admin_module.NewTopic(topic, 1, 1)])[topic].result(60)
            consumer = _consumer(lib, bootstrap, **{"auto.offset.reset": "earliest"})
            consumer.subscribe([topic])
            produce_with_confluent(bootstrap, topic, [Record(b"first", None)])
            events, values = [], []
            deadline = time.monotonic() + 30
            while not values and time.monotonic() < deadline:
                m = consumer.poll(0.2)
                if m is None:
                    continue
                if m.error() is not None:
                    events.append(m.error().name())
                else:
                    values.append(m.value())
            consumer.close()
            rounds.append((events, values))
        seen[name] = rounds
    assert seen["ours"] == seen["theirs"] == [([], [b"first"])] * 3


def test_the_end_of_partition_event_carries_librdkafkas_text(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    """_PARTITION_EOF's text (its error's str() and, as librdkafka's payload, its value()) names the
    broker that answered, the position and the high watermark, as confluent-kafka's does."""
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("eoftext")
    create_topic(bootstrap, topic, 1)
    produce_with_confluent(bootstrap, topic, [Record(b"v%d" % i, None) for i in range(3)])
    seen = {}
    for name, lib in CLIENTS.items():
        consumer = _consumer(lib, bootstrap, **{"auto.offset.reset": "earliest", "enable.partition.eof": True})
        consumer.subscribe([topic])
        event = None
        deadline = time.monotonic() + 30
        while event is None and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is not None:
                event = (m.error().name(), m.error().str(), m.value(), m.offset())
        consumer.close()
        seen[name] = event
    text = "Fetch from broker 0 reached end of partition at offset 3 (HighwaterMark 3)"
    assert seen["ours"] == seen["theirs"] == ("_PARTITION_EOF", text, text.encode(), 3)
