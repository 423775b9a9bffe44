"""Issue 39: failure scenarios on a real three-broker Kafka 2.3 cluster (replication 3,
min.insync.replicas 2), run on confluent-kafka and kafkawire side by side under one seeded
schedule (tests/harness/cluster_scenarios.py). Each test prints both clients' counts and
recovery times; it asserts the counts (nothing lost, duplicated, reordered, reported twice or
never, committed past an unread record), never the timings.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import confluent_kafka
import pytest

import kafkawire
from tests.harness.cluster_scenarios import (
    Fault,
    coordinator_of,
    kill_schedule,
    leader_of,
    run_group_scenario,
    run_producer_scenario,
)
from tests.harness.judge import consume_all
from tests.harness.kafka_broker import KafkaUnavailable
from tests.harness.kafka_cluster import KafkaCluster
from tests.harness.txn_copy import run_copy_scenario
from tests.harness.txn_failover import run_txn_failover

pytestmark = [pytest.mark.slow, pytest.mark.rotating, pytest.mark.broker]

SEED = int(os.environ.get("KAFKAWIRE_CLUSTER_SEED", "39"))
PRODUCE_ORDER_KEPT = ("failed",)  # a record may fail (its report says so); it must not be lost or doubled


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    try:
        cluster = KafkaCluster().start()
    except KafkaUnavailable as exc:
        pytest.fail(f"the Kafka 2.3 cluster did not start: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(autouse=True)
def every_broker_up(cluster: KafkaCluster) -> Iterator[None]:
    """Each scenario starts and leaves with all three brokers running."""
    yield
    for node in range(cluster.size):
        if not cluster.alive(node):
            cluster.restart(node)


def show(title: str, verdicts: list) -> None:  # type: ignore[type-arg]
    print(f"\n{title}")
    for v in verdicts:
        print("  " + v.line())


def test_idempotent_producer_with_brokers_killed(cluster: KafkaCluster) -> None:
    """A broker SIGKILLed every 8-12 s (the leader of a seeded partition), started again 5 s later;
    idempotent acks=all producers of keyed records on both clients."""
    topic_partitions = range(3)
    faults = [Fault(at, "kill", leader_of(topic_partitions, SEED + i)) for i, at in enumerate(kill_schedule(SEED, 3))]
    verdicts = run_producer_scenario(cluster, faults, count=40_000, rate=1_000)
    show("idempotent producer, brokers killed", verdicts)
    for v in verdicts:
        assert v.problems(allowed=PRODUCE_ORDER_KEPT) == {}, v.line()


def test_producer_with_a_short_message_timeout_and_a_broker_killed(cluster: KafkaCluster) -> None:
    """message.timeout.ms 5000 and one leader SIGKILLed: records may expire (each says so in its
    report) but none is lost, doubled or reordered; the failed counts of both clients are printed
    side by side (issue 39: kafkawire expired 4,110 where confluent-kafka expired none; now about
    as many as confluent-kafka, and none written twice)."""
    faults = [Fault(4.0, "kill", leader_of([0, 1, 2], SEED))]
    verdicts = run_producer_scenario(cluster, faults, count=15_000, rate=1_000, config={"message.timeout.ms": 5000})
    show("idempotent producer, message.timeout.ms 5000, a leader killed", verdicts)
    # Records that expire while in flight leave librdkafka's order and once-only promise too (on a
    # busy machine confluent-kafka wrote 1,734 values twice here): kafkawire must do no worse.
    judge, ours = verdicts
    for v in verdicts:
        assert v.problems(allowed=(*PRODUCE_ORDER_KEPT, "duplicated", "reordered")) == {}, v.line()
    for count in ("duplicated", "reordered"):
        assert ours.counts[count] <= judge.counts[count], f"{count}: {ours.line()} / {judge.line()}"


def test_producer_with_a_broker_paused_longer_than_the_request_timeout(cluster: KafkaCluster) -> None:
    """The leader of a partition SIGSTOPped for 8 s, longer than request.timeout.ms (5 s) and the
    ZooKeeper session (6 s): requests to it go unanswered, then its partitions move."""
    faults = [Fault(5.0, "pause", leader_of([0], SEED), down_for=8.0)]
    verdicts = run_producer_scenario(cluster, faults, count=20_000, rate=1_000, config={"request.timeout.ms": 5000})
    show("idempotent producer, a leader paused past request.timeout.ms", verdicts)
    for v in verdicts:
        assert v.problems(allowed=PRODUCE_ORDER_KEPT) == {}, v.line()


def test_producer_with_a_controlled_leader_move(cluster: KafkaCluster) -> None:
    """Partition 0's leadership moved to another replica (reassignment, preferred election) while
    both clients produce: the old leader answers NOT_LEADER_FOR_PARTITION."""
    faults = [Fault(4.0, "move", leader_of([0], SEED), move_to=lambda old: (old + 1) % 3)]
    verdicts = run_producer_scenario(cluster, faults, count=15_000, rate=1_000)
    show("idempotent producer, a leader moved", verdicts)
    for v in verdicts:
        assert v.problems() == {}, v.line()


def _group_checked(verdicts: list) -> None:  # type: ignore[type-arg]
    for v in verdicts:
        assert v.problems() == {}, v.line()


def test_at_least_once_group_with_its_coordinator_killed(cluster: KafkaCluster) -> None:
    """Two members per client (offsets auto-committed after poll() handed the records over) while
    the groups' coordinator (both groups have the same one) is SIGKILLed every 8-12 s and started
    again 5 s later: nothing fed is left unread, nothing committed that no member read."""
    group = {}

    def coordinator(faults):  # type: ignore[no-untyped-def]
        return coordinator_of(group["name"])(faults)

    faults = [Fault(at, "kill", coordinator) for at in kill_schedule(SEED, 2)]
    verdicts = run_group_scenario(cluster, faults, duration=25.0, rate=300, on_groups=group.update)
    show("at-least-once group, coordinator killed", verdicts)
    _group_checked(verdicts)


def test_a_member_joins_while_the_coordinator_is_down_for_good(cluster: KafkaCluster) -> None:
    """The coordinator's broker SIGKILLed and left down; a third member joins at once. Noted: how
    long until it has partitions (librdkafka: about the ZooKeeper session, 6 s, plus a rebalance)."""
    group = {}

    def coordinator(faults):  # type: ignore[no-untyped-def]
        return coordinator_of(group["name"])(faults)

    faults = [Fault(3.0, "kill", coordinator, down_for=None)]
    verdicts = run_group_scenario(cluster, faults, duration=30.0, rate=300, joiner=True, on_groups=group.update)
    show("coordinator down for good, a member joins", verdicts)
    _group_checked(verdicts)


@pytest.mark.timeout(480)  # at most: the members' start 60 s, the feed 45 s, catching up 150 s, leaving 45 s
def test_transactional_copy_with_a_member_and_brokers_killed(cluster: KafkaCluster) -> None:
    """A consume-transform-produce copy, read_committed, by a group of two member processes per
    client (tests/harness/txn_copy.py): brokers SIGKILLed on the seeded schedule and started again,
    member w0 SIGKILLed once and started again with its transactional.id. Every record fed is in
    the copy once and in order; no committed offset is past a record not copied."""
    verdicts = run_copy_scenario(cluster, SEED)
    show("transactional copy, a member and brokers killed", verdicts)
    judge, ours = verdicts
    # confluent-kafka reads a batch twice now and then on Kafka 2.3 (no KIP-447), and its
    # send_offsets_to_transaction can block past its timeout for good while a coordinator is down,
    # leaving that member's partitions uncopied (librdkafka #5456, #5511: contributing/judges.md)
    excused = ("duplicated", "reordered")
    if "send_offsets" in judge.notes.get("calls past their timeout", ()):
        excused += ("lost", "members died")
    assert judge.problems(allowed=excused) == {}, judge.line()
    assert "calls past their timeout" not in ours.notes, ours.line()
    assert ours.problems() == {}, ours.line()


@pytest.mark.parametrize("moment", ["mid-transaction", "before-commit"])
def test_a_transaction_whose_coordinator_is_killed(cluster: KafkaCluster, moment: str) -> None:
    """The transaction coordinator's broker SIGKILLed (left down) mid-transaction or just before
    the commit (tests/harness/txn_failover.py): every transaction-coordinator request after it
    finds the new coordinator; the transaction ends as confluent-kafka's does and the log agrees,
    and a new producer of the same transactional.id gets ready as confluent-kafka's does (its
    FindCoordinator, queued on the dead broker's bootstrap connection, used to wait out
    socket.timeout.ms there: init_transactions timed out)."""
    runs = run_txn_failover(cluster, moment)
    print(f"\ntransaction coordinator killed {moment}")
    for run in runs:
        print(f"  {run.client:16} {run.outcome} after {run.ended_after} s; init again {run.init_took} s; {run.calls}")
    judge, ours = runs
    assert "(" not in ours.outcome and ours.overran is None, runs
    if judge.overran == "send_offsets":
        # librdkafka's send_offsets_to_transaction stuck past its timeout (#5456, #5511,
        # contributing/judges.md): no outcome to compare with; ours ends as the judge's does unhindered
        assert ours.outcome == "committed", runs
        assert ours.init_took is not None, runs
        return
    assert "(" not in judge.outcome, runs
    assert ours.outcome == judge.outcome, runs
    # a new producer of the same transactional.id, the coordinator's broker still down, is ready
    assert (ours.init_took is None) == (judge.init_took is None), runs


def test_acks_zero_follows_a_moved_leader(cluster: KafkaCluster) -> None:
    """acks=0 and a controlled leader move: Kafka closes the connection on each Produce it refuses
    (NOT_LEADER_FOR_PARTITION cannot be answered), so that the client refreshes its metadata (the
    seeds' producer concepts page). On both clients the records produced after the move reach the
    new leader once the client has asked (those sent before are lost, reported delivered): of
    100 records produced one by one after the move, the last half are in the log (kafkawire
    before this: none of them)."""
    records = 100
    for module in (confluent_kafka, kafkawire):
        topic = f"acks0-{module.__name__.replace('_', '-')}-{SEED}"
        cluster.create_topic(topic, 1)
        p = module.Producer({"bootstrap.servers": cluster.bootstrap(), "acks": 0, "linger.ms": 0})
        try:
            p.produce(topic, b"warm-up")
            assert p.flush(30) == 0
            cluster.move_leader(topic, 0, (cluster.leaders(topic)[0] + 1) % 3)
            sent = [b"after-%03d" % i for i in range(records)]
            for value in sent:
                p.produce(topic, value)
                assert p.flush(30) == 0
                time.sleep(0.02)  # (a pace, as an application's: the records spread over 2 s)
        finally:
            close = getattr(p, "close", None)
            if close is not None:
                close(10)
        read = {m.value() for m in consume_all(cluster.bootstrap(), topic, 1 + records, timeout=20)}
        kept = [v for v in sent if v in read]
        print(f"\n  {module.__name__}: {len(kept)} of {records} records produced after the move are in the log")
        assert set(sent[records // 2 :]) <= read, (module.__name__, len(kept))
