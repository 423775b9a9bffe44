"""KIP-932 share groups on librdkafka's mock cluster, judged by confluent-kafka's ShareConsumer.

Two members share one group and one topic of N records: every record is accepted exactly once
across both and none is lost; RELEASE delivers a record again with a higher delivery count;
REJECT never does; a member closing with records unacknowledged hands them to the other. Each
scenario runs with two kafkawire members, two confluent-kafka members and one of each, and must
end the same way. The records are produced once both members are in the group and have had their
assignments: a member losing partitions while it holds records there is a different scenario
(and confluent-kafka's own pairs then see records come back).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
if not hasattr(confluent_kafka, "ShareConsumer"):
    pytest.skip("this confluent-kafka has no ShareConsumer", allow_module_level=True)

import kafkawire  # noqa: E402
from tests.harness.mock_cluster import MockCluster  # noqa: E402

TOPIC = "shared"
N = 60
PARTITIONS = 3
DEADLINE = 30.0
SETTLE_ROUNDS = 3  # polls of each member after both joined: the assignment reaches them by heartbeat
KINDS = {"kafkawire": kafkawire, "confluent": confluent_kafka}
PAIRS = [("kafkawire", "kafkawire"), ("confluent", "confluent"), ("kafkawire", "confluent")]
_groups = itertools.count()

Key = tuple[int, int]


@pytest.fixture
def cluster() -> Iterator[tuple[MockCluster, Any]]:
    """The mock with the topic, and a producer connected before any member joins and kept until
    the end: the mock drops every share session on a broker when any connection to it closes."""
    with MockCluster(3) as mock:
        mock.create_topic(TOPIC, PARTITIONS, 1)
        mock.sharegroup_set("auto_offset_reset", 1)  # earliest: the records are produced first
        mock.sharegroup_set("heartbeat_interval", 200)
        producer = confluent_kafka.Producer({"bootstrap.servers": mock.bootstraps})
        producer.list_topics(timeout=10)
        yield mock, producer


def members(kinds: tuple[str, ...], cluster: tuple[MockCluster, Any], group: str, mode: str = "explicit") -> list[Any]:
    """The group's members, joined and assigned, then the topic's N records produced."""
    mock, producer = cluster
    consumers = []
    for kind in kinds:
        conf = {"bootstrap.servers": mock.bootstraps, "group.id": group, "share.acknowledgement.mode": mode}
        consumers.append(KINDS[kind].ShareConsumer(conf))
        consumers[-1].subscribe([TOPIC])
    end = time.monotonic() + DEADLINE
    rounds = 0
    while rounds < SETTLE_ROUNDS and time.monotonic() < end:
        for consumer in consumers:
            assert not len(consumer.poll(0.2))
        if len(mock.sharegroup_members(group)) == len(consumers):
            rounds += 1
    assert len(mock.sharegroup_members(group)) == len(consumers), "the members did not join"
    for i in range(N):
        producer.produce(TOPIC, value=b"%d" % i, partition=i % PARTITIONS)
    assert producer.flush(10) == 0
    return consumers


def drain(
    consumers: list[Any], decide: Callable[[Any, Any], int] | None, until: Callable[[list[list[Any]]], bool]
) -> list[list[Any]]:
    """Poll the members in turn until ``until(seen)``; ``decide(consumer, msg)`` acknowledges each
    record (explicit mode; None: implicit) and each batch is committed. Each member's records."""
    seen: list[list[Any]] = [[] for _ in consumers]
    end = time.monotonic() + DEADLINE
    while not until(seen) and time.monotonic() < end:
        for i, consumer in enumerate(consumers):
            batch = consumer.poll(0.2)
            for msg in batch:
                assert msg.error() is None, msg.error()
                seen[i].append(msg)
                if decide is not None:
                    consumer.acknowledge(msg, decide(consumer, msg))
            if len(batch):
                consumer.commit_sync(10)
    return seen


def key(msg: Any) -> Key:
    return (msg.partition(), msg.offset())


def keys(seen: list[list[Any]]) -> list[Key]:
    return [key(m) for s in seen for m in s]


ALL = {(p, o) for p in range(PARTITIONS) for o in range(N // PARTITIONS)}


def close_all(consumers: list[Any]) -> None:
    for c in consumers:
        c.close()


@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
def test_two_members_accept_every_record_exactly_once(cluster: tuple[MockCluster, Any], pair: tuple[str, str]) -> None:
    group = f"share-all-{next(_groups)}"
    consumers = members(pair, cluster, group, "implicit")
    accepted: list[Key] = []

    def acked(offsets: dict[Any, set[int]], error: Any) -> None:
        if error is None:  # a record whose acceptance the broker refused was not accepted
            accepted.extend((tp.partition, o) for tp, o_set in offsets.items() for o in o_set)

    for c in consumers:
        c.set_acknowledgement_commit_callback(acked)
    try:
        drain(consumers, None, lambda _seen: len(set(accepted)) >= N)
    finally:
        close_all(consumers)
    assert set(accepted) == ALL  # none lost
    assert len(accepted) == N  # none accepted twice


@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
def test_release_redelivers_with_a_higher_delivery_count(
    cluster: tuple[MockCluster, Any], pair: tuple[str, str]
) -> None:
    group = f"share-release-{next(_groups)}"
    consumers = members(pair, cluster, group)
    released: set[Key] = set()

    def decide(_consumer: Any, msg: Any) -> int:
        if msg.delivery_count() == 1 and msg.offset() % 2 == 0:
            released.add(key(msg))
            return int(KINDS["kafkawire"].AcknowledgeType.RELEASE)
        return int(KINDS["kafkawire"].AcknowledgeType.ACCEPT)

    def done(seen: list[list[Any]]) -> bool:
        accepted = {key(m) for s in seen for m in s if not (m.delivery_count() == 1 and m.offset() % 2 == 0)}
        return accepted >= ALL

    try:
        seen = drain(consumers, decide, done)
    finally:
        close_all(consumers)
    counts: dict[Key, list[int]] = {}
    for m in (m for s in seen for m in s):
        counts.setdefault(key(m), []).append(m.delivery_count())
    assert set(counts) == ALL and released == {k for k in ALL if k[1] % 2 == 0}
    for k, deliveries in counts.items():  # the members' lists one after the other: not in time order
        assert sorted(deliveries) == ([1, 2] if k in released else [1]), (k, deliveries)


@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
def test_reject_is_never_redelivered(cluster: tuple[MockCluster, Any], pair: tuple[str, str]) -> None:
    group = f"share-reject-{next(_groups)}"
    consumers = members(pair, cluster, group)

    def decide(_consumer: Any, msg: Any) -> int:
        kind = "REJECT" if msg.offset() % 3 == 0 else "ACCEPT"
        return int(getattr(KINDS["kafkawire"].AcknowledgeType, kind))

    try:
        seen = drain(consumers, decide, lambda seen: len(set(keys(seen))) >= N)
        settle = time.monotonic() + 1.0  # keep polling a while: a rejected record must not come back
        more = drain(consumers, decide, lambda _seen: time.monotonic() > settle)
    finally:
        close_all(consumers)
    assert set(keys(seen)) == ALL and len(keys(seen)) == N
    assert keys(more) == []


@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
def test_closing_with_records_unacknowledged_hands_them_to_the_other(
    cluster: tuple[MockCluster, Any], pair: tuple[str, str]
) -> None:
    group = f"share-close-{next(_groups)}"
    first, second = members(pair, cluster, group)
    try:
        held = drain([first], None, lambda seen: bool(seen[0]))[0]
        assert held, "the first member got nothing"
        first.close()  # unacknowledged: the broker releases them to the group
        accept = int(KINDS["kafkawire"].AcknowledgeType.ACCEPT)
        seen = drain([second], lambda _c, _m: accept, lambda seen: len(set(keys(seen))) >= N)
    finally:
        close_all([first, second])
    redelivered = {key(m): m.delivery_count() for m in seen[0] if key(m) in {key(h) for h in held}}
    assert set(keys(seen)) == ALL
    assert set(redelivered) == {key(h) for h in held}
    assert all(count == 2 for count in redelivered.values())


def test_a_member_losing_partitions_delivers_what_it_acquired_there(cluster: tuple[MockCluster, Any]) -> None:
    """kafkawire fetches ahead. A member holding records (some with its application, the rest
    fetched ahead) while a second member joins and takes partitions from it hands them all to its
    application and forgets those partitions only with their acknowledgements: no delivery attempt
    is spent, every record comes once with delivery count 1."""
    mock, _producer = cluster
    group = f"share-handover-{next(_groups)}"
    first = members(("kafkawire",), cluster, group)[0]
    second = kafkawire.ShareConsumer(
        {"bootstrap.servers": mock.bootstraps, "group.id": group, "share.acknowledgement.mode": "explicit"}
    )
    accept = int(kafkawire.AcknowledgeType.ACCEPT)
    try:
        held = drain([first], None, lambda seen: bool(seen[0]))[0]  # unacknowledged: no poll until they are
        second.subscribe([TOPIC])
        early: list[Any] = []
        rounds = 0
        end = time.monotonic() + DEADLINE
        while rounds < SETTLE_ROUNDS and time.monotonic() < end:  # joined, and the assignments handed out
            for msg in second.poll(0.2):
                second.acknowledge(msg, accept)
                early.append(msg)
            rounds += len(mock.sharegroup_members(group)) == 2
        for msg in held:
            first.acknowledge(msg, accept)
        seen = drain([first, second], lambda _c, _m: accept, lambda seen: len(held + early) + len(keys(seen)) >= N)
    finally:
        close_all([first, second])
    got = [(key(m), m.delivery_count()) for m in held + early + seen[0] + seen[1]]
    assert sorted(k for k, _ in got) == sorted(ALL) and {count for _, count in got} == {1}


@pytest.mark.parametrize("kind", list(KINDS))
def test_implicit_mode_close_releases_the_last_poll(cluster: tuple[MockCluster, Any], kind: str) -> None:
    """Implicit mode accepts a poll's records at the next poll or commit, not at close() (as
    librdkafka's): the broker releases them, and a confluent-kafka member gets them again."""
    mock, _producer = cluster
    group = f"share-implicit-close-{next(_groups)}"
    first = members((kind,), cluster, group, "implicit")[0]
    held: list[Any] = []
    end = time.monotonic() + DEADLINE
    try:
        while not held and time.monotonic() < end:  # no commit: that would accept them
            held = list(first.poll(0.2))
    finally:
        first.close()
    assert held, "the first member got nothing"
    judge = confluent_kafka.ShareConsumer({"bootstrap.servers": mock.bootstraps, "group.id": group})
    judge.subscribe([TOPIC])
    try:
        seen = drain([judge], None, lambda seen: len(keys(seen)) >= N)[0]
    finally:
        judge.close()
    again = {key(m): m.delivery_count() for m in seen}
    assert set(again) == ALL and all(again[key(m)] == 2 for m in held)


@pytest.mark.parametrize("kind", list(KINDS))
def test_stats_cb_is_served_by_poll(cluster: tuple[MockCluster, Any], kind: str) -> None:
    """statistics.interval.ms / stats_cb on the share consumer: librdkafka's statistics JSON."""
    mock, _producer = cluster
    docs: list[dict[str, Any]] = []
    conf = {
        "bootstrap.servers": mock.bootstraps,
        "group.id": f"share-stats-{next(_groups)}",
        "statistics.interval.ms": 100,
        "stats_cb": lambda doc: docs.append(json.loads(doc)),
    }
    consumer = KINDS[kind].ShareConsumer(conf)
    consumer.subscribe([TOPIC])
    try:
        end = time.monotonic() + DEADLINE
        while len(docs) < 3 and time.monotonic() < end:
            consumer.poll(0.2)
    finally:
        consumer.close()
    assert docs and all(doc["type"] == "consumer" for doc in docs)
    assert any(broker["nodeid"] >= 0 and broker["tx"] for broker in docs[-1]["brokers"].values())


@pytest.mark.parametrize("kind", ["kafkawire", "confluent"])
def test_max_poll_records_bounds_what_a_share_fetch_acquires(cluster: tuple[MockCluster, Any], kind: str) -> None:
    """max.poll.records goes into ShareFetch's MaxRecords (librdkafka 2.16): the broker acquires and
    returns no more per fetch, so no poll hands over more; every record still arrives once."""
    mock, producer = cluster
    group = f"g-max-poll-{kind}-{next(_groups)}"
    conf = {"bootstrap.servers": mock.bootstraps, "group.id": group, "max.poll.records": 4}
    consumer = KINDS[kind].ShareConsumer(conf)
    consumer.subscribe([TOPIC])
    for i in range(N):
        producer.produce(TOPIC, value=b"%d" % i, partition=i % PARTITIONS)
    assert producer.flush(10) == 0
    sizes: list[int] = []
    got: set[Key] = set()
    end = time.monotonic() + DEADLINE
    while len(got) < N and time.monotonic() < end:
        batch = consumer.poll(0.2)
        if len(batch):
            sizes.append(len(batch))
            got |= {key(m) for m in batch}
    consumer.close()
    assert got == ALL
    assert max(sizes) <= 4 * PARTITIONS, sizes  # one fetch per partition leader at most, each capped at 4
