"""Issue 53: network faults on a real three-broker Kafka 2.3 cluster whose every connection goes
through a fault proxy (`KafkaCluster(network=True)`, tests/harness/fault_proxy.py): clients cut
from a leader by a blackhole, a leader cut from its peers and ZooKeeper while its clients still
reach it, a group's coordinator frozen (its connections dead for good, as a NAT that dropped the
flow leaves them), a slow link, reset storms, a broker back at another address, a bootstrap name
with dead addresses. confluent-kafka and kafkawire run side by side under one seeded schedule
(tests/harness/cluster_scenarios.py) and are checked by the broker-kill tests' checker.

Asserted: kafkawire loses, doubles, reorders and misses reports nowhere confluent-kafka does not;
without idempotence it loses no more than confluent-kafka (+10%) and reorders no more than
confluent-kafka (+10%, or + REORDER_FLOOR records where that is more; in a re-created topic, where
either client's count is chance, the records produced once it is back keep their order); it fails
no more records than confluent-kafka (+10%). Timings are printed, never asserted. The measured table
(three runs each under two busy loops) is in docs/network-faults.md.

Each scenario is a slow test in the rotating share (tests/harness/share.py): CI runs a quarter of
them per commit, `make test-all` all of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from tests.harness.cluster_scenarios import (
    Fault,
    Verdict,
    coordinator_of,
    leader_of,
    read_log,
    run_group_scenario,
    run_producer_scenario,
)
from tests.harness.judge import unique_name
from tests.harness.kafka_broker import KafkaUnavailable
from tests.harness.kafka_cluster import KafkaCluster
from tests.harness.resolving_producer import run_resolving_producer
from tests.harness.share import rotating_share
from tests.harness.txn_copy import run_copy_scenario

pytestmark = [pytest.mark.slow, pytest.mark.broker]

SEED = int(os.environ.get("KAFKAWIRE_CLUSTER_SEED", "53"))
CUT = 20.0  # s a blackhole lasts
FAILED_ONLY = ("failed",)  # a record may fail (its report says so); it must not be lost or doubled
# Without idempotence a record written twice (a retry after an answer lost) stands after newer
# ones, and a request written just as a topic comes back can overtake a refused one on the same
# connection: either client may reorder a request's records or two in a run, at random. Below
# this many (a tenth of a second of the workload's records) a count says nothing about which
# client reorders more, and +10% of a judge near zero would fail on noise.
REORDER_FLOOR = 100


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaCluster]:
    try:
        cluster = KafkaCluster(network=True, seed=SEED).start()
    except KafkaUnavailable as exc:
        pytest.fail(f"the Kafka 2.3 cluster did not start: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(autouse=True)
def network_whole(cluster: KafkaCluster) -> Iterator[None]:
    """Each scenario starts and leaves with every broker up and every proxy passing bytes."""
    yield
    assert cluster.net is not None
    for proxy in cluster.net.all():
        proxy.clear()
    for node in range(cluster.size):
        if not cluster.alive(node):
            cluster.restart(node)


def show(title: str, verdicts: list[Verdict]) -> None:
    print(f"\n{title}")
    for v in verdicts:
        print("  " + v.line())


def no_worse(judge: Verdict, ours: Verdict, *counts: str, floor: int = 0) -> None:
    """``ours`` has at most 10% more of each of ``counts`` than confluent-kafka, or ``floor`` more
    where that is more."""
    for count in counts:
        allowed = max(judge.counts[count] * 1.1, judge.counts[count] + floor)
        assert ours.counts[count] <= allowed, f"{count}: {ours.line()} / {judge.line()}"


def producer_checked(verdicts: list[Verdict]) -> None:
    """Nothing lost, doubled, reordered or missing a report, wherever confluent-kafka managed it."""
    judge, ours = verdicts
    for count in ("lost", "duplicated", "reordered", "reported twice", "never reported"):
        if judge.counts[count] == 0:
            assert ours.counts[count] == 0, f"{count}: {ours.line()} / {judge.line()}"
    no_worse(judge, ours, "failed")


def group_checked(verdicts: list[Verdict]) -> None:
    judge, ours = verdicts
    assert ours.problems() == {} or ours.problems().keys() <= judge.problems().keys(), ours.line()


# --- the scenarios, most valuable first ----------------------------------------------------------


def producer_cut_from_a_leader(cluster: KafkaCluster) -> None:
    """Idempotent acks=all producers; the clients' proxy of partition 0's leader blackholed for
    20 s (no reset, no close), then healed: the held requests are answered late or retried."""
    faults = [Fault(5.0, "blackhole", leader_of([0], SEED), down_for=CUT)]
    verdicts = run_producer_scenario(cluster, faults, count=35_000, rate=1_000)
    show("idempotent producer, cut from a leader for 20 s", verdicts)
    producer_checked(verdicts)
    for v in verdicts:
        assert v.problems(allowed=FAILED_ONLY) == {}, v.line()


def group_cut_from_a_leader(cluster: KafkaCluster) -> None:
    """Two members per client (at-least-once, auto-commit); the clients' proxy of a partition
    leader blackholed for 20 s: nothing fed left unread, nothing committed past an unread record."""
    faults = [Fault(5.0, "blackhole", leader_of(range(6), SEED), down_for=CUT)]
    verdicts = run_group_scenario(cluster, faults, duration=35.0, rate=300)
    show("at-least-once group, cut from a leader for 20 s", verdicts)
    group_checked(verdicts)


def leader_isolated_acks_all(cluster: KafkaCluster) -> None:
    """Partition 0's leader cut from its peers and ZooKeeper for 20 s while its clients still
    reach it (its ZooKeeper session, 6 s, expires; the controller elects another leader it cannot
    tell): idempotent acks=all producers lose nothing."""
    faults = [Fault(5.0, "isolate", leader_of([0], SEED), down_for=CUT)]
    verdicts = run_producer_scenario(cluster, faults, count=35_000, rate=1_000)
    show("idempotent acks=all producer, its leader isolated", verdicts)
    producer_checked(verdicts)
    for v in verdicts:
        assert v.problems(allowed=FAILED_ONLY) == {}, v.line()


def leader_isolated_acks_1(cluster: KafkaCluster) -> None:
    """The same cut with acks=1 and no idempotence: the isolated leader acknowledges records no
    follower copies, and truncates them when it rejoins as a follower (acknowledged and lost, as
    Jepsen describes). Counted on both clients: kafkawire loses no more than confluent-kafka
    (+10%), and reorders no more (+10%, or + REORDER_FLOOR)."""
    faults = [Fault(5.0, "isolate", leader_of([0], SEED), down_for=CUT)]
    config = {"enable.idempotence": False, "acks": 1}
    verdicts = run_producer_scenario(cluster, faults, count=35_000, rate=1_000, config=config)
    show("acks=1 producer, its leader isolated", verdicts)
    judge, ours = verdicts
    no_worse(judge, ours, "lost", "duplicated", "failed")
    no_worse(judge, ours, "reordered", floor=REORDER_FLOOR)
    for count in ("reported twice", "never reported"):
        assert ours.counts[count] == 0, ours.line()


def coordinator_frozen(cluster: KafkaCluster) -> None:
    """The groups' coordinator unreachable to its clients for 15 s, longer than the session
    timeout (10 s), and the connections open then dead for good after it (new ones work): the
    members lose their partitions and join again on new connections. Nothing fed left unread,
    nothing committed past an unread record; noted: the longest a member held no partitions
    (issue 53: kafkawire's coordinator lookup waited behind a Fetch on the dead connection)."""
    group: dict[str, str] = {}

    def coordinator(faults):  # type: ignore[no-untyped-def]
        return coordinator_of(group["name"])(faults)

    faults = [Fault(5.0, "freeze", coordinator, down_for=15.0)]
    verdicts = run_group_scenario(cluster, faults, duration=40.0, rate=300, on_groups=group.update)
    show("at-least-once group, coordinator frozen past the session timeout", verdicts)
    group_checked(verdicts)


def copy_with_its_coordinator_frozen(cluster: KafkaCluster) -> None:
    """The transactional copy (tests/harness/txn_copy.py: two member processes per client,
    read_committed) while its groups' coordinator is frozen for 15 s, past the members' session
    timeout (10 s): no record copied twice, none lost, no offset committed past what was copied."""

    def plan(groups: dict[str, str]) -> list[Fault]:
        return [Fault(10.0, "freeze", coordinator_of(next(iter(groups.values()))), down_for=15.0)]

    verdicts = run_copy_scenario(cluster, SEED, duration=40.0, faults_for=plan, kill_member=False)
    show("transactional copy, its coordinator frozen past the session timeout", verdicts)
    judge, ours = verdicts
    # confluent-kafka on Kafka 2.3 (no KIP-447) reads a batch twice now and then, and its
    # send_offsets_to_transaction can block past its timeout (contributing/judges.md)
    excused: tuple[str, ...] = ("duplicated", "reordered")
    if "send_offsets" in judge.notes.get("calls past their timeout", ()):
        excused += ("lost", "members died")
    assert judge.problems(allowed=excused) == {}, judge.line()
    assert "calls past their timeout" not in ours.notes, ours.line()
    assert ours.problems() == {}, ours.line()


def slow_link(cluster: KafkaCluster) -> None:
    """The clients' proxy of partition 0's leader passes 2 KB/s each way for 20 s; message.timeout.ms
    10 s: records expire (each report says so); kafkawire fails no more than confluent-kafka (+10%)."""
    faults = [Fault(3.0, "slow", leader_of([0], SEED), down_for=CUT, size=2_000)]
    config = {"message.timeout.ms": 10_000}
    verdicts = run_producer_scenario(cluster, faults, count=30_000, rate=1_000, config=config)
    show("idempotent producer, a slow link, message.timeout.ms 10 s", verdicts)
    judge, ours = verdicts
    no_worse(judge, ours, "failed", "duplicated", "reordered")
    for count in ("lost", "reported twice", "never reported"):
        assert ours.counts[count] == 0, ours.line()
    assert ours.notes["failed with"] in ([], ["_MSG_TIMED_OUT"]), ours.line()


def reset_storm(cluster: KafkaCluster) -> None:
    """15 RSTs of every client connection to partition 0's leader within 30 s."""
    faults = [Fault(5.0, "resets", leader_of([0], SEED), down_for=30.0, size=15, seed=SEED)]
    verdicts = run_producer_scenario(cluster, faults, count=40_000, rate=1_000)
    show("idempotent producer, a reset storm", verdicts)
    producer_checked(verdicts)
    for v in verdicts:
        assert v.problems(allowed=FAILED_ONLY) == {}, v.line()


def leader_back_at_another_address(cluster: KafkaCluster) -> None:
    """Partition 0's leader killed and started again at once advertising a new client port (its
    old one resets every connection): the clients learn the new address from the metadata."""
    faults = [Fault(5.0, "readdress", leader_of([0], SEED))]
    verdicts = run_producer_scenario(cluster, faults, count=35_000, rate=1_000)
    show("idempotent producer, a leader back at another address", verdicts)
    producer_checked(verdicts)
    for v in verdicts:
        assert v.problems(allowed=FAILED_ONLY) == {}, v.line()


def partitions_added_while_producing(cluster: KafkaCluster) -> None:
    """Both topics grown from 3 to 6 partitions mid-run (metadata asked every 2 s): nothing lost,
    doubled or reordered, and in the end every key goes to the partition confluent-kafka sends it to."""
    faults = [Fault(8.0, "grow", leader_of([0], SEED), size=6)]
    config = {"topic.metadata.refresh.interval.ms": 2000}
    verdicts = run_producer_scenario(cluster, faults, count=30_000, rate=1_000, config=config)
    show("idempotent producer, partitions added", verdicts)
    producer_checked(verdicts)
    judge, ours = verdicts
    assert set(judge.placed.values()) == set(range(6)), judge.placed
    assert ours.placed == judge.placed


def topic_recreated_while_producing(cluster: KafkaCluster) -> None:
    """Both topics deleted and created again mid-run (3 partitions, metadata asked every 2 s),
    acks=all without idempotence: an idempotent producer cannot go on there on Kafka 2.3 (its
    sequences restart in a partition that never saw them: librdkafka stops with a fatal
    UNKNOWN_PRODUCER_ID). The records produced meanwhile wait or fail (each report says so); of
    the records reported delivered after the new topic exists, kafkawire loses no more than
    confluent-kafka (+10%), and misses or doubles no report.

    Order: a Produce the old leader holds for its acks when the partition is deleted (Kafka 2.3
    keeps it in purgatory) is answered REQUEST_TIMED_OUT only at request.timeout.ms; its records go
    again and land after everything the partition took meanwhile, on either client (the leader of the
    new partition is often the same broker: nothing tells a client to wait). How many records that
    is depends on which requests the deletion caught: confluent-kafka 0 to 4,806 a run, kafkawire 0
    to 5,120 (docs/network-faults.md), so the counts are printed, not compared. What is asserted:
    the records produced once the topic is back keep their order (none of them stands after a newer
    one). Duplicates (a retried write without idempotence) are printed, not asserted: either client
    may write some."""
    faults = [Fault(8.0, "recreate", leader_of([0], SEED), size=3)]
    config = {"topic.metadata.refresh.interval.ms": 2000, "enable.idempotence": False}
    verdicts = run_producer_scenario(cluster, faults, count=30_000, rate=1_000, config=config)
    show("acks=all producer, its topic deleted and created again", verdicts)
    judge, ours = verdicts
    no_worse(judge, ours, "lost", "failed")
    assert ours.notes["reordered since"] == 0, ours.line()
    for count in ("reported twice", "never reported"):
        assert ours.counts[count] == 0, ours.line()


def partitions_added_while_consuming(cluster: KafkaCluster) -> None:
    """Both groups' topics grown from 6 to 9 partitions mid-run: the groups take the new ones
    (metadata asked every 2 s), nothing fed left unread, nothing committed past an unread record."""
    faults = [Fault(8.0, "grow", leader_of([0], SEED), size=9)]
    config = {"topic.metadata.refresh.interval.ms": 2000}
    verdicts = run_group_scenario(cluster, faults, duration=30.0, rate=300, config=config)
    show("at-least-once group, partitions added", verdicts)
    group_checked(verdicts)


def bootstrap_name_with_dead_addresses(cluster: KafkaCluster) -> None:
    """The bootstrap name resolves to three loopback addresses of which the first two refuse (nothing
    listens there), the third the first broker's (tests/harness/resolving_producer.py: a hosts file
    of the test's through nss_wrapper, in a process of each client's). With `client.dns.lookup`'s
    default (use_all_dns_ips) each connection attempt takes the next address (librdkafka shuffles
    them first): both clients reach the cluster and deliver every record, none lost or doubled."""
    count, name = 2_000, "bootstrap.kafkawire.test"
    addresses = ["127.0.0.2", "127.0.0.3", "127.0.0.1"]
    verdicts = []
    for client in ("confluent-kafka", "kafkawire"):
        topic = unique_name(f"dns-{client}")  # (a name of its own per run: --repeat runs it again)
        cluster.create_topic(topic, 3)
        got = run_resolving_producer(client, name, addresses, cluster.ports[0], topic, count)
        values = [v for records in read_log(cluster.judge_bootstrap(), topic, 3).values() for _, v in records]
        lost, doubled = count - len(set(values)), len(values) - len(set(values))
        print(f"\n  {client}: lost {lost}, duplicated {doubled}, {got}")
        verdicts.append((got, lost, doubled))
    for got, lost, doubled in verdicts:
        assert (got["delivered"], got["failed"], got["unflushed"], lost, doubled) == (count, [], 0, 0, 0), got


SCENARIOS: dict[str, Callable[[KafkaCluster], None]] = {
    f.__name__: f
    for f in (
        producer_cut_from_a_leader,
        group_cut_from_a_leader,
        leader_isolated_acks_all,
        leader_isolated_acks_1,
        coordinator_frozen,
        copy_with_its_coordinator_frozen,
        slow_link,
        reset_storm,
        leader_back_at_another_address,
        partitions_added_while_producing,
        partitions_added_while_consuming,
        topic_recreated_while_producing,
        bootstrap_name_with_dead_addresses,
    )
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("scenario", rotating_share(list(SCENARIOS)))
def test_network_fault(cluster: KafkaCluster, scenario: str) -> None:
    SCENARIOS[scenario](cluster)
