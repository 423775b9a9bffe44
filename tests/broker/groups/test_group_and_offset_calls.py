"""kafkawire.Consumer's group and offset calls against real brokers, judged by confluent-kafka:
mixed groups (rebalance callbacks in poll(), eager and cooperative), commits and committed offsets,
watermarks, offsets_for_times, consumer_group_metadata in a transaction, close leaving the group."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient as TheirAdmin

import kafkawire
from kafkawire import KafkaError, KafkaException, TopicPartition
from tests.harness.judge import Record, judge_config, produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 6
SESSION_MS = 6000  # Kafka 2.3's minimum; Tansu's join waits about half of it


@pytest.fixture(params=["tansu", "kafka23"])
def bootstrap(request: pytest.FixtureRequest) -> str:
    found: Any = request.getfixturevalue(request.param)
    return str(found.bootstrap() if callable(found.bootstrap) else found.bootstrap)


@pytest.fixture
def kafka23_bootstrap(kafka23: Any) -> str:
    return str(kafka23.bootstrap() if callable(kafka23.bootstrap) else kafka23.bootstrap)


def ours(bootstrap: str, group: str, **extra: Any) -> kafkawire.Consumer:
    return kafkawire.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": 1000,
            "auto.offset.reset": "earliest",
            **extra,
        }
    )


def theirs(bootstrap: str, group: str, **extra: Any) -> confluent_kafka.Consumer:
    return confluent_kafka.Consumer(
        judge_config(
            bootstrap,
            **{
                "group.id": group,
                "session.timeout.ms": SESSION_MS,
                "heartbeat.interval.ms": 1000,
                "auto.offset.reset": "earliest",
                **extra,
            },
        )
    )


class Recorder:
    """Rebalance callbacks' calls, in order, as (kind, [(topic, partition)])."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[tuple[str, int]]]] = []

    def callback(self, kind: str) -> Callable[[Any, list[TopicPartition]], None]:
        def called(_consumer: Any, parts: list[TopicPartition]) -> None:
            self.calls.append((kind, [(tp.topic, tp.partition) for tp in parts]))

        return called


def _shares(consumers: list[Any]) -> list[set[tuple[str, int]]]:
    for c in consumers:
        c.poll(0.1)
    return [{(tp.topic, tp.partition) for tp in c.assignment()} for c in consumers]


def _settles(consumers: list[Any], topic: str, deadline: float = 60.0) -> list[set[tuple[str, int]]]:
    """Poll everyone until the partitions are covered once each, with everyone holding some."""
    want = {(topic, p) for p in range(PARTITIONS)}
    end = time.monotonic() + deadline
    while True:
        shares = _shares(consumers)
        if sum(map(len, shares)) == PARTITIONS and set().union(*shares) == want and all(shares):
            return shares
        if time.monotonic() > end:
            pytest.fail(f"the group never settled: {shares}")


@pytest.fixture
def topic(bootstrap: str, topic_name: Callable[[str], str]) -> str:
    name = topic_name("cf")
    create_topic(bootstrap, name, PARTITIONS)
    return name


@pytest.fixture
def closing() -> Iterator[list[Any]]:
    made: list[Any] = []
    yield made
    for c in made:
        try:
            c.close()
        except Exception:  # a test may have closed it already
            pass


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_mixed_group_shares_partitions_with_callbacks_in_poll(
    bootstrap: str, topic: str, closing: list[Any], assignor: str
) -> None:
    group = unique_name("grp")
    rec = Recorder()
    mine = ours(bootstrap, group, **{"partition.assignment.strategy": assignor})
    closing.append(mine)
    mine.subscribe([topic], on_assign=rec.callback("assign"), on_revoke=rec.callback("revoke"))
    _settles([mine], topic)
    assert rec.calls == [("assign", [(topic, p) for p in range(PARTITIONS)])]
    other = theirs(bootstrap, group, **{"partition.assignment.strategy": assignor})
    closing.append(other)
    other.subscribe([topic])
    shares = _settles([mine, other], topic)
    assert not shares[0] & shares[1]
    changes = [(kind, parts) for kind, parts in rec.calls if parts]
    assert all(kind == "assign" for kind, parts in rec.calls if not parts)  # every rebalance ends in on_assign
    if assignor == "cooperative-sticky":
        # only the increments: the revoked half, nothing re-assigned that was kept (librdkafka
        # calls on_assign([]) after each rebalance, and so do we)
        assert [kind for kind, _ in changes] == ["assign", "revoke"]
        assert set(changes[1][1]) == {(topic, p) for p in range(PARTITIONS)} - shares[0]
    else:
        # eager: everything revoked before the rejoin, then the new share assigned
        assert [kind for kind, _ in changes] == ["assign", "revoke", "assign"]
        assert len(changes[1][1]) == PARTITIONS
        assert set(changes[2][1]) == shares[0]


def test_commit_in_on_revoke_uses_the_generation_consumed_under(bootstrap: str, topic: str, closing: list[Any]) -> None:
    """An eager member's rejoin waits for on_revoke, so a synchronous commit there succeeds."""
    group = unique_name("grp")
    committed: list[list[TopicPartition] | None] = []

    def on_revoke(consumer: kafkawire.Consumer, parts: list[TopicPartition]) -> None:
        committed.append(
            consumer.commit(offsets=[TopicPartition(tp.topic, tp.partition, 7) for tp in parts], asynchronous=False)
        )

    mine = ours(bootstrap, group, **{"enable.auto.commit": False})
    closing.append(mine)
    mine.subscribe([topic], on_revoke=on_revoke)
    _settles([mine], topic)
    other = theirs(bootstrap, group)
    closing.append(other)
    other.subscribe([topic])
    _settles([mine, other], topic)
    assert committed and committed[0] is not None
    assert all(tp.error is None and tp.offset == 7 for tp in committed[0])
    seen = other.committed([confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
    assert {tp.offset for tp in seen} == {7}


def test_commit_offsets_sync_async_and_committed(bootstrap: str, topic: str, closing: list[Any]) -> None:
    group = unique_name("grp")
    reports: list[tuple[KafkaError | None, list[TopicPartition]]] = []
    mine = ours(bootstrap, group, on_commit=lambda err, parts: reports.append((err, parts)))
    closing.append(mine)
    mine.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
    result = mine.commit(offsets=[TopicPartition(topic, 0, 5), TopicPartition(topic, 1, 9, "note")], asynchronous=False)
    assert result is not None
    assert [(tp.partition, tp.offset, tp.error) for tp in result] == [(0, 5, None), (1, 9, None)]
    assert mine.commit(offsets=[TopicPartition(topic, 2, 11)]) is None
    end = time.monotonic() + 60
    while not reports and time.monotonic() < end:
        mine.poll(0.1)
    assert reports and reports[0][0] is None
    assert [(tp.partition, tp.offset) for tp in reports[0][1]] == [(2, 11)]
    got = mine.committed([TopicPartition(topic, p) for p in range(4)], timeout=10)
    assert [tp.offset for tp in got] == [5, 9, 11, kafkawire.OFFSET_INVALID]
    judge = theirs(bootstrap, group)
    closing.append(judge)
    seen = judge.committed([confluent_kafka.TopicPartition(topic, p) for p in range(4)], timeout=10)
    assert [tp.offset for tp in seen] == [5, 9, 11, confluent_kafka.OFFSET_INVALID]


def test_store_offsets_then_commit_commits_what_was_stored(bootstrap: str, topic: str, closing: list[Any]) -> None:
    group = unique_name("grp")
    mine = ours(bootstrap, group, **{"enable.auto.offset.store": False, "enable.auto.commit": False})
    closing.append(mine)
    mine.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
    with pytest.raises(KafkaException) as nothing:
        mine.commit(asynchronous=False)
    assert nothing.value.args[0].code() == KafkaError._NO_OFFSET
    mine.store_offsets(offsets=[TopicPartition(topic, 0, 3)])
    mine.store_offsets(message=kafkawire.Message(topic=topic, partition=1, offset=41))
    with pytest.raises(KafkaException) as unassigned:
        mine.store_offsets(offsets=[TopicPartition(topic, 5, 1)])
    assert unassigned.value.args[0].code() == KafkaError._UNKNOWN_PARTITION
    result = mine.commit(asynchronous=False)
    assert result is not None and [(tp.partition, tp.offset) for tp in result] == [(0, 3), (1, 42)]
    with pytest.raises(KafkaException):  # nothing new since
        mine.commit(asynchronous=False)


def test_watermarks_and_offsets_for_times(bootstrap: str, topic: str, closing: list[Any]) -> None:
    base = int(time.time() * 1000) - 60_000
    produce_with_confluent(
        bootstrap, topic, [Record(value=b"v%d" % i, partition=0, timestamp_ms=base + i * 1000) for i in range(5)]
    )
    mine = ours(bootstrap, unique_name("grp"))
    closing.append(mine)
    judge = theirs(bootstrap, unique_name("grp"))
    closing.append(judge)
    tp = TopicPartition(topic, 0)
    their_tp = confluent_kafka.TopicPartition(topic, 0)
    # (Tansu answers "latest" as the last batch's base offset + 1: the judge sees the same)
    assert mine.get_watermark_offsets(tp, timeout=10) == judge.get_watermark_offsets(their_tp, timeout=10)
    assert mine.get_watermark_offsets(tp, cached=True) == (kafkawire.OFFSET_INVALID, kafkawire.OFFSET_INVALID)
    found = mine.offsets_for_times([TopicPartition(topic, 0, base + 2500)], timeout=10)
    judged = judge.offsets_for_times([confluent_kafka.TopicPartition(topic, 0, base + 2500)], timeout=10)
    assert [(t.partition, t.offset) for t in found] == [(t.partition, t.offset) for t in judged]


def test_list_topics_memberid_and_metadata(bootstrap: str, topic: str, closing: list[Any]) -> None:
    group = unique_name("grp")
    mine = ours(bootstrap, group)
    closing.append(mine)
    md = mine.list_topics(topic, timeout=10)
    assert sorted(md.topics[topic].partitions) == list(range(PARTITIONS))
    assert mine.memberid() is None
    mine.subscribe([topic])
    _settles([mine], topic)
    member = mine.memberid()
    assert member
    meta = mine.consumer_group_metadata()
    assert (meta.group_id, meta.member_id) == (group, member) and meta.generation_id >= 0


def test_close_leaves_the_group_at_once(kafka23_bootstrap: str, topic_name: Callable[[str], str]) -> None:
    bootstrap = kafka23_bootstrap
    topic, group = topic_name("cl"), unique_name("grp")
    create_topic(bootstrap, topic, PARTITIONS)
    mine = ours(bootstrap, group, **{"session.timeout.ms": 60_000, "heartbeat.interval.ms": 1000})
    mine.subscribe([topic])
    _settles([mine], topic)
    member = mine.memberid()
    mine.close()
    admin = TheirAdmin(judge_config(bootstrap))
    described = admin.describe_consumer_groups([group])[group].result(10)
    assert member not in {m.member_id for m in described.members}
    with pytest.raises(RuntimeError, match="Consumer closed"):
        mine.poll(0)


def test_consumer_group_metadata_commits_with_a_transaction(
    kafka23_bootstrap: str, topic_name: Callable[[str], str]
) -> None:
    """KIP-447 shape on Kafka 2.3: the transaction's offsets commit for our group and member."""
    bootstrap = kafka23_bootstrap
    topic, group = topic_name("tx"), unique_name("grp")
    create_topic(bootstrap, topic, PARTITIONS)
    mine = ours(bootstrap, group, **{"enable.auto.commit": False})
    try:
        mine.subscribe([topic])
        _settles([mine], topic)
        producer = kafkawire.Producer({"bootstrap.servers": bootstrap, "transactional.id": unique_name("tx")})
        try:
            producer.init_transactions(30)
            producer.begin_transaction()
            producer.produce(topic, b"out", partition=0)
            producer.send_offsets_to_transaction([TopicPartition(topic, 3, 17)], mine.consumer_group_metadata())
            producer.commit_transaction(30)
        finally:
            producer.close()
        # Kafka 2.3 applies the offsets once the marker is written (no require_stable before 2.5)
        end = time.monotonic() + 60
        while mine.committed([TopicPartition(topic, 3)], timeout=10)[0].offset != 17 and time.monotonic() < end:
            time.sleep(0.2)
        judge = theirs(bootstrap, group)
        try:
            assert judge.committed([confluent_kafka.TopicPartition(topic, 3)], timeout=10)[0].offset == 17
        finally:
            judge.close()
    finally:
        mine.close()


def test_configuration_checked_at_construction(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ValueError, match=r"group\.id must be set"):
        kafkawire.Consumer({"bootstrap.servers": "127.0.0.1:1"})
    with pytest.raises(KafkaException, match=r"session\.timeout\.msx"):
        kafkawire.Consumer({"group.id": "g", "session.timeout.msx": 1})
    with pytest.raises(KafkaException, match=r"auto\.offset\.reset"):
        kafkawire.Consumer({"group.id": "g", "auto.offset.reset": "sometimes"})
    with caplog.at_level(logging.WARNING, logger="kafkawire.consumer"):
        c = kafkawire.Consumer({"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "linger.ms": 5})
        c.close()
    assert "linger.ms is a producer property and will be ignored" in caplog.text
    with pytest.raises(KafkaException, match=r"linger\.ms"):  # a producer property's value is still checked
        kafkawire.Consumer({"group.id": "g", "linger.ms": "soon"})
