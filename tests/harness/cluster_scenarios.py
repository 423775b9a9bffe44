"""Failure scenarios on a three-broker Kafka 2.3 cluster (`tests.harness.kafka_cluster`), run on
confluent-kafka and on kafkawire side by side, under one seeded fault schedule, and checked.

A scenario starts one workload per client (each on its own topic and group, written against the
confluent-kafka API so the same code drives both), while `Faults` plays the schedule on the
cluster: kill a broker and start it again later, pause and resume one, move a leader. The victim
is named by role (the leader of a partition of the first client's topic, a group's coordinator),
so both clients lose the same broker at the same moment. Then the checker reads every topic back
with confluent-kafka (the judge) and counts, per client:

* lost: a record reported delivered (or consumed upstream) that is not in the log (not read);
* duplicated: a value present in the log (or read by the group) more than once;
* reordered: within a partition, a record at an offset after one produced later;
* reported twice, never reported: delivery reports per produce() call other than one;
* committed past an unread record: a committed offset above an offset no member read;
* time to recover: per fault, from the fault until the partitions it hit take new records again
  (the producer delivers again; the group reads again; a joining member has partitions).

The numbers are returned (and printed by the tests) for both clients; the tests assert the counts
and never the timings.
"""

from __future__ import annotations

import random
import threading
import time
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import confluent_kafka
from confluent_kafka import Consumer as JudgeConsumer
from confluent_kafka import TopicPartition as JudgeTopicPartition

import kafkawire
from tests.harness.judge import LOGGER, judge_config, unique_name
from tests.harness.kafka_cluster import KafkaCluster

CLIENTS: dict[str, ModuleType] = {"confluent-kafka": confluent_kafka, "kafkawire": kafkawire}
KEYS = 60


def now() -> float:
    return time.monotonic()


# --- the fault schedule ----------------------------------------------------------------------------


@dataclass
class Fault:
    """One thing done to the cluster: when (seconds after the start), what, and to whom."""

    at: float
    # "kill" (started again after `down_for`, unless None), "pause", "move"; with the cluster's
    # network (each for `down_for` s, then healed): "blackhole" (the victim's clients' proxy),
    # "freeze" (the same, and the connections open at the fault stay dead after it), "isolate" (the
    # victim cut from its peers and ZooKeeper, its clients still reach it), "resets" (`size` RSTs of
    # its clients' connections at seeded moments), "slow" (its clients' proxy passes `size` bytes
    # per second each way); "readdress" (killed, started again at once on a new client address);
    # "grow" (every topic grown to `size` partitions; `victim` is not asked); "recreate" (every
    # topic deleted and created again with `size` partitions; `victim` is not asked)
    action: str
    victim: Callable[[Faults], int]  # the node, chosen when the fault happens
    down_for: float | None = 5.0
    size: float = 0.0  # for "resets" and "slow"
    seed: int = 0  # for "resets"
    move_to: Callable[[int], int] | None = None  # for "move": the new leader, given the old
    partition: int = 0  # for "move"
    node: int = -1  # filled in: the node it hit
    started: float = 0.0  # filled in: monotonic time it happened
    ended: float = 0.0  # filled in: when the node was back (restarted, resumed) or the move done


HEALED = ("blackhole", "freeze", "isolate", "resets", "slow", "pause")  # faults that end at a known moment


@dataclass
class Faults:
    """Plays faults on the cluster from ``start`` on, in a thread of its own; before each, it notes
    which partitions of ``topics`` the fault hits (those the victim leads; for a move, the moved one)."""

    cluster: KafkaCluster
    faults: list[Fault]
    topics: list[str] = field(default_factory=list)
    start: float = 0.0
    hit: list[dict[str, set[int]]] = field(default_factory=list)  # per fault: topic -> partitions
    errors: list[BaseException] = field(default_factory=list)
    _thread: threading.Thread | None = None
    _restarts: list[threading.Thread] = field(default_factory=list)

    def run(self, start: float) -> Faults:
        self.start = start
        self._thread = threading.Thread(target=self._play, name="faults", daemon=True)
        self._thread.start()
        return self

    def join(self) -> None:
        assert self._thread is not None
        self._thread.join()
        for t in self._restarts:
            t.join()
        if self.errors:
            raise self.errors[0]

    def _play(self) -> None:
        try:
            for fault in self.faults:
                time.sleep(max(0.0, self.start + fault.at - now()))
                for restart in self._restarts:  # one broker down at a time: the last one is back
                    restart.join()
                if fault.action in ("grow", "recreate"):
                    fault.started = now()
                    self.hit.append({topic: set() for topic in self.topics})
                    for topic in self.topics:
                        change = self.cluster.add_partitions if fault.action == "grow" else self.cluster.recreate_topic
                        change(topic, int(fault.size))
                    fault.ended = now()
                    continue
                fault.node = fault.victim(self)
                leaders = self._leaders()
                if fault.action == "move":
                    self.hit.append({topic: {fault.partition} for topic in self.topics})
                else:
                    self.hit.append({t: {p for p, n in ls.items() if n == fault.node} for t, ls in leaders.items()})
                fault.started = now()
                LOGGER.warning("fault at %.1f s: %s broker %d", fault.started - self.start, fault.action, fault.node)
                if fault.action == "kill":
                    self.cluster.kill(fault.node)
                    if fault.down_for is not None:
                        self._later(fault.down_for, fault, self._restart)
                elif fault.action == "pause":
                    self.cluster.pause(fault.node)
                    assert fault.down_for is not None
                    time.sleep(fault.down_for)
                    self.cluster.resume(fault.node)
                    fault.ended = now()
                elif fault.action == "move":
                    assert fault.move_to is not None
                    for topic in self.topics:
                        old = leaders[topic][fault.partition]
                        self.cluster.move_leader(topic, fault.partition, fault.move_to(old))
                    fault.ended = now()
                else:
                    self._network_fault(fault)
        except BaseException as exc:
            self.errors.append(exc)

    def _leaders(self) -> dict[str, dict[int, int]]:
        """Each topic's partition leaders (asked again while a loaded broker's answer lacks one)."""
        deadline = now() + 30
        while True:
            leaders = {topic: self.cluster.leaders(topic) for topic in self.topics}
            if all(leaders.values()) or now() > deadline:
                return leaders
            time.sleep(0.2)

    def _network_fault(self, fault: Fault) -> None:
        net = self.cluster.net
        assert net is not None, f"{fault.action} needs KafkaCluster(network=True)"
        proxy = net.clients[fault.node]
        if fault.action == "readdress":
            self.cluster.restart(fault.node, new_address=True)
            fault.ended = now()
            return
        assert fault.down_for is not None
        if fault.action == "resets":
            rng = random.Random(fault.seed)
            for at in sorted(rng.uniform(0, fault.down_for) for _ in range(int(fault.size))):
                time.sleep(max(0.0, fault.started + at - now()))
                proxy.reset()
            time.sleep(max(0.0, fault.started + fault.down_for - now()))
            fault.ended = now()
            return
        start, end = {
            "blackhole": (proxy.blackhole, proxy.heal),
            "freeze": (lambda: (proxy.freeze(), proxy.blackhole()), proxy.heal),
            "isolate": (lambda: net.isolate(fault.node), lambda: net.rejoin(fault.node)),
            "slow": (lambda: proxy.bandwidth(fault.size), proxy.clear),
        }[fault.action]
        start()
        time.sleep(fault.down_for)
        end()
        fault.ended = now()

    def _restart(self, fault: Fault) -> None:
        self.cluster.restart(fault.node)
        fault.ended = now()

    def _later(self, delay: float, fault: Fault, fn: Callable[[Fault], None]) -> None:
        def run() -> None:
            time.sleep(delay)
            try:
                fn(fault)
            except BaseException as exc:
                self.errors.append(exc)

        t = threading.Thread(target=run, name="restart", daemon=True)
        self._restarts.append(t)
        t.start()


def kill_schedule(seed: int, count: int, first: float = 4.0, spacing: tuple[float, float] = (8.0, 12.0)) -> list[float]:
    """When the kills happen: the first at ``first`` s, then every 8-12 s (seeded)."""
    rng = random.Random(seed)
    times, at = [], first
    for _ in range(count):
        times.append(at)
        at += rng.uniform(*spacing)
    return times


def leader_of(partitions: Iterable[int], seed: int) -> Callable[[Faults], int]:
    """A victim chooser: the current leader of a partition picked (seeded) among ``partitions``
    of the first client's topic."""
    rng = random.Random(seed)
    choices = list(partitions)

    def pick(faults: Faults) -> int:
        partition, topic = rng.choice(choices), faults.topics[0]
        deadline = now() + 30
        while now() < deadline:
            leader = faults.cluster.leaders(topic).get(partition, -1)
            if leader >= 0 and faults.cluster.alive(leader):
                return leader
            time.sleep(0.2)
        raise AssertionError(f"{topic}-{partition} has no live leader to fault")

    return pick


# --- reading the log back (the judge) -------------------------------------------------------------


def read_log(
    bootstrap: str, topic: str, partitions: int, isolation: str = "read_committed"
) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of ``topic``, per partition, in offset order: (offset, value); read with
    confluent-kafka up to each partition's high watermark."""
    consumer = JudgeConsumer(
        judge_config(
            bootstrap,
            **{
                "group.id": unique_name("judge"),
                "enable.auto.commit": False,
                "isolation.level": isolation,
                "enable.partition.eof": False,
                "check.crcs": True,
            },
        )
    )
    try:
        ends = {
            p: consumer.get_watermark_offsets(JudgeTopicPartition(topic, p), timeout=30)[1] for p in range(partitions)
        }
        consumer.assign([JudgeTopicPartition(topic, p, 0) for p in range(partitions)])
        log: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
        done = {p for p, end in ends.items() if end == 0}
        deadline = now() + 120
        while len(done) < partitions and now() < deadline:
            for msg in consumer.consume(1000, 0.5):
                if msg.error() is not None:
                    raise AssertionError(f"judge read {topic}: {msg.error()}")
                p, offset = msg.partition(), msg.offset()
                log[p].append((offset, msg.value() or b""))
                if offset + 1 >= ends[p]:
                    done.add(p)
            if isolation == "read_committed":  # control records leave gaps: compare positions
                for tp in consumer.position([JudgeTopicPartition(topic, p) for p in range(partitions)]):
                    if tp.offset >= ends[tp.partition]:
                        done.add(tp.partition)
        if len(done) < partitions:
            raise AssertionError(
                f"judge could not read {topic} to its end: {ends}, read {[len(v) for v in log.values()]}"
            )
        return log
    finally:
        consumer.close()


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = JudgeConsumer(judge_config(bootstrap, **{"group.id": group, "enable.auto.commit": False}))
    try:
        answer = consumer.committed([JudgeTopicPartition(topic, p) for p in range(partitions)], timeout=30)
        return {tp.partition: tp.offset for tp in answer}
    finally:
        consumer.close()


# --- the producer workload --------------------------------------------------------------------------


@dataclass
class ProduceRun:
    """What one client's producer did: per produce() call, when, and its delivery reports."""

    client: str
    topic: str
    sent_at: list[float] = field(default_factory=list)
    reports: dict[int, list[tuple[float, int, int, str | None]]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)  # error_cb
    unflushed: int = 0


def produce_paced(
    module: ModuleType, bootstrap: str, topic: str, count: int, rate: float, config: dict[str, Any] | None = None
) -> ProduceRun:
    """``count`` keyed records (value: their index) at ``rate`` per second from one thread, then a flush."""
    run = ProduceRun(client=module.__name__, topic=topic)
    lock = threading.Lock()

    def report(err: Any, msg: Any) -> None:
        index = int(msg.value())
        with lock:
            run.reports[index].append((now(), msg.partition(), msg.offset(), None if err is None else err.name()))

    conf = {
        "bootstrap.servers": bootstrap,
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 5,
        "client.id": f"{module.__name__}-producer",
        "broker.address.family": "v4",
        "error_cb": lambda err: run.errors.append(err.name()),
    }
    conf.update(config or {})
    producer = module.Producer(conf)
    start = now()
    for index in range(count):
        due = start + index / rate
        while now() < due:
            producer.poll(min(0.005, max(0.0, due - now())))
        value = str(index).encode()
        while True:
            try:
                run.sent_at.append(now())
                producer.produce(topic, value, key=b"k%d" % (index % KEYS), on_delivery=report)
                break
            except BufferError:
                run.sent_at.pop()
                producer.poll(0.05)
    run.unflushed = producer.flush(180)
    return run


@dataclass
class Verdict:
    """The checker's counts for one client, and its recovery times (seconds, one per fault)."""

    client: str
    counts: dict[str, int]
    recovery: list[float | None]
    notes: dict[str, Any] = field(default_factory=dict)
    placed: dict[int, int] = field(default_factory=dict)  # producers: key -> its partition at the end

    def problems(self, allowed: Iterable[str] = ()) -> dict[str, int]:
        return {k: v for k, v in self.counts.items() if v and k not in set(allowed)}

    def line(self) -> str:
        rec = ", ".join("-" if r is None else f"{r:.1f}" for r in self.recovery)
        return f"{self.client:16} {self.counts} recovery s: [{rec}] {self.notes}"


def tally_log(log: dict[int, list[tuple[int, bytes]]]) -> tuple[dict[int, int], list[int]]:
    """How often each record (its value: the index it was fed as) stands in a partition log, and the
    indices of those standing after one fed later to the same partition."""
    seen: dict[int, int] = defaultdict(int)
    reordered: list[int] = []
    for records in log.values():
        highest = -1
        for _offset, value in records:
            index = int(value)
            seen[index] += 1
            if index < highest:
                reordered.append(index)
            highest = max(highest, index)
    return seen, reordered


def check_produced(
    run: ProduceRun,
    log: dict[int, list[tuple[int, bytes]]],
    hit: list[tuple[float, set[int]]],
    healed: list[float] | None = None,
    log_since: float = 0.0,
) -> Verdict:
    """Lost, duplicated, reordered, reported twice or never; recovery per fault (and, for faults
    that end with a heal, ``healed``: how long after it every hit partition delivered again).
    ``log_since``: the log began then (the topic was created again), so only records reported
    delivered after it can be lost; the records produced after it that stand after newer ones are
    noted apart ("reordered since")."""
    in_log, reordered = tally_log(log)
    delivered = {i for i, reps in run.reports.items() if any(err is None for _, _, _, err in reps)}
    counted = {i for i in delivered if min(t for t, _, _, err in run.reports[i] if err is None) >= log_since}
    counts = {
        "lost": sum(1 for i in counted if not in_log.get(i)),
        "duplicated": sum(n - 1 for n in in_log.values() if n > 1),
        "reordered": len(reordered),
        "reported twice": sum(1 for reps in run.reports.values() if len(reps) > 1),
        "never reported": sum(1 for i in range(len(run.sent_at)) if not run.reports.get(i)),
        "failed": len(run.sent_at) - len(delivered),
    }
    latencies = sorted(reps[0][0] - run.sent_at[i] for i, reps in run.reports.items() if reps[0][3] is None)
    last = sorted(run.reports)[-len(run.reports) // 5 :]  # the last fifth: where each key went in the end
    placed = {i % KEYS: run.reports[i][0][1] for i in last if run.reports[i][0][3] is None}
    notes: dict[str, Any] = {
        "p99 s": round(latencies[int(len(latencies) * 0.99)], 2) if latencies else None,
        "max s": round(latencies[-1], 2) if latencies else None,
        "all brokers down": run.errors.count("_ALL_BROKERS_DOWN"),
        "failed with": sorted({reps[0][3] for reps in run.reports.values() if reps[0][3] is not None}),
    }
    if log_since:
        first = bisect_left(run.sent_at, log_since)  # (produce() times only grow)
        notes["reordered since"] = sum(1 for index in reordered if index >= first)
    recovery = [_delivers_again(run, partitions, since) for since, partitions in hit]
    if healed:
        notes["after heal s"] = [
            None if after is None else round(after, 2)
            for after in (_resumes_after(run, partitions, at) for (_, partitions), at in zip(hit, healed, strict=True))
        ]
    return Verdict(run.client, counts, recovery, notes, placed)


def _resumes_after(run: ProduceRun, partitions: set[int], healed: float) -> float | None:
    """Until every partition in ``partitions`` has had a successful delivery report after ``healed``."""
    first: dict[int, float] = {}
    for reps in run.reports.values():
        for t, partition, _offset, err in reps:
            if err is None and partition in partitions and t >= healed:
                first[partition] = min(first.get(partition, t), t)
    if not partitions:
        return None
    return float("inf") if set(first) != partitions else max(first.values()) - healed


def _delivers_again(run: ProduceRun, partitions: set[int], since: float) -> float | None:
    """Until every partition in ``partitions`` has delivered a record produced after ``since``."""
    first: dict[int, float] = {}
    sent_to: set[int] = set()  # hit partitions that were sent records after the fault
    for index, reps in run.reports.items():
        if run.sent_at[index] <= since:
            continue
        t, partition, _offset, err = reps[0]
        if partition in partitions:
            sent_to.add(partition)
            if err is None:
                first[partition] = min(first.get(partition, t), t)
    if not sent_to:
        return None  # (the fault hit no partition, or came after the last record)
    if set(first) != sent_to:
        return float("inf")
    return max(first.values()) - since


def run_producer_scenario(
    cluster: KafkaCluster,
    faults: list[Fault],
    count: int,
    rate: float,
    partitions: int = 3,
    config: dict[str, Any] | None = None,
) -> list[Verdict]:
    """Both clients produce ``count`` records at ``rate`` while ``faults`` happen; checked."""
    topics = {name: unique_name(f"cluster-{name.split('-')[0]}") for name in CLIENTS}
    first = next(iter(topics.values()))
    for topic in topics.values():  # the same leaders: a fault hits the same partitions (key shares) of both
        cluster.create_topic(topic, partitions, like=None if topic == first else first)
    player = Faults(cluster, faults, list(topics.values()))
    runs: dict[str, ProduceRun] = {}
    failures: list[BaseException] = []

    def work(name: str) -> None:
        try:
            runs[name] = produce_paced(CLIENTS[name], cluster.bootstrap(), topics[name], count, rate, config)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(name,), name=name) for name in CLIENTS]
    player.run(now())
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    player.join()
    if failures:
        raise failures[0]
    verdicts = []
    healed = [fault.ended for fault in faults] if all(f.action in HEALED for f in faults) else None
    for name, topic in topics.items():
        hit = [(fault.started, h[topic]) for fault, h in zip(faults, player.hit, strict=True)]
        log = read_log(cluster.judge_bootstrap(), topic, len(cluster.leaders(topic)))
        since = max((f.ended for f in faults if f.action == "recreate"), default=0.0)
        verdicts.append(check_produced(runs[name], log, hit, healed, since))
    return verdicts


# --- the group workload ------------------------------------------------------------------------------


def offsets_partition(group: str, partitions: int = 6) -> int:
    """The __consumer_offsets partition (so the coordinator) of ``group``: as Kafka's
    ``Utils.abs(groupId.hashCode) % partitions`` (Java's String.hashCode; the absolute value of
    that signed int, 0 for its minimum), with the cluster's offsets.topic.num.partitions."""
    h = 0
    for ch in group:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


def sibling_groups(names: Iterable[str], prefix: str) -> dict[str, str]:
    """One fresh group name per client, all with the same coordinator (one offsets partition)."""
    out: dict[str, str] = {}
    for name in names:
        while True:
            group = unique_name(f"{prefix}-{name.split('-')[0]}")
            if not out or offsets_partition(group) == offsets_partition(next(iter(out.values()))):
                out[name] = group
                break
    return out


def coordinator_of(group: str) -> Callable[[Faults], int]:
    def pick(faults: Faults) -> int:
        return faults.cluster.coordinator(group)

    return pick


@dataclass
class GroupRun:
    """What one client's group did: the feed (acknowledged by confluent-kafka), every read, and
    when each member first got partitions after each fault."""

    client: str
    topic: str
    group: str
    fed: dict[int, tuple[int, int, float]] = field(default_factory=dict)  # index -> (partition, offset, sent at)
    reads: list[tuple[float, str, int, int, int]] = field(default_factory=list)  # (t, member, partition, offset, index)
    # (t, member, partitions assigned; 0: its partitions revoked or lost)
    assigned: list[tuple[float, str, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    closing: float = float("inf")  # when the members were told to stop (their close revokes)


class Feed:
    """confluent-kafka producing ``index`` values at ``rate`` to a topic until stopped (the upstream)."""

    def __init__(
        self, bootstrap: str, topic: str, rate: float, run: GroupRun, config: dict[str, Any] | None = None
    ) -> None:
        self.stop = threading.Event()
        self._args = (bootstrap, topic, rate, run)
        self._config = config or {}
        self._thread = threading.Thread(target=self._produce, name=f"feed-{topic}", daemon=True)
        self._thread.start()

    def join(self) -> None:
        self.stop.set()
        self._thread.join()

    def _produce(self) -> None:
        bootstrap, topic, rate, run = self._args
        sent: dict[int, float] = {}

        def report(err: Any, msg: Any) -> None:
            if err is None:
                index = int(msg.value())
                run.fed[index] = (msg.partition(), msg.offset(), sent[index])

        producer = confluent_kafka.Producer(
            judge_config(bootstrap, **{"enable.idempotence": True, "acks": "all", "linger.ms": 5, **self._config})
        )
        start, index = now(), 0
        while not self.stop.is_set():
            if now() < start + index / rate:
                producer.poll(0.005)
                continue
            sent[index] = now()
            producer.produce(topic, str(index).encode(), key=b"k%d" % (index % KEYS), on_delivery=report)
            index += 1
        producer.flush(120)


class Member:
    """One group member (a thread) of ``module``: reads and notes every record and assignment."""

    def __init__(self, module: ModuleType, name: str, bootstrap: str, run: GroupRun, config: dict[str, Any]) -> None:
        self.name = name
        self.stop = threading.Event()
        self._module, self._bootstrap, self._run, self._config = module, bootstrap, run, config
        self._thread = threading.Thread(target=self._consume, name=f"{run.client}-{name}", daemon=True)
        self._thread.start()

    def join(self) -> None:
        self.stop.set()
        self._thread.join()

    def _consume(self) -> None:
        run = self._run

        def assigned(consumer: Any, partitions: list[Any]) -> None:
            run.assigned.append((now(), self.name, len(partitions)))

        def revoked(consumer: Any, partitions: list[Any]) -> None:
            run.assigned.append((now(), self.name, 0))

        conf = {
            "bootstrap.servers": self._bootstrap,
            "group.id": run.group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "auto.commit.interval.ms": 1000,
            "broker.address.family": "v4",
            "client.id": f"{run.client}-{self.name}",
            "error_cb": lambda err: run.errors.append(err.name()),
        }
        conf.update(self._config)
        consumer = self._module.Consumer(conf)
        consumer.subscribe([run.topic], on_assign=assigned, on_revoke=revoked, on_lost=revoked)
        try:
            while not self.stop.is_set():
                msg = consumer.poll(0.2)
                if msg is None or msg.error() is not None:
                    continue
                run.reads.append((now(), self.name, msg.partition(), msg.offset(), int(msg.value())))
        finally:
            consumer.close()


def check_group(
    run: GroupRun, committed_offsets: dict[int, int], faults: list[Fault], joined_at: float | None
) -> Verdict:
    """Lost (fed, never read), read twice, committed past an unread record; recovery per fault (the
    group reads records fed after it again) and, when a member joined, until it had partitions."""
    read_offsets: dict[tuple[int, int], int] = defaultdict(int)
    for _t, _member, partition, offset, _index in run.reads:
        read_offsets[(partition, offset)] += 1
    fed_offsets = {(p, o) for p, o, _ in run.fed.values()}
    counts = {
        "lost": len(fed_offsets - set(read_offsets)),
        "committed past unread": sum(
            1 for p, o in fed_offsets if o < committed_offsets.get(p, -1) and (p, o) not in read_offsets
        ),
    }
    notes: dict[str, Any] = {"read twice": sum(n - 1 for n in read_offsets.values() if n > 1)}
    if notes["read twice"] and faults and faults[0].started:
        seen: set[tuple[int, int]] = set()
        again = []
        for t, _member, partition, offset, _index in sorted(run.reads):
            if (partition, offset) in seen:
                again.append(t)
            seen.add((partition, offset))
        notes["read again from s"] = round(min(again) - faults[0].started, 1)  # (negative: before the fault)
    first_read: dict[int, float] = {}
    for t, _member, _partition, _offset, index in run.reads:
        first_read[index] = min(first_read.get(index, t), t)
    recovery: list[float | None] = []
    for fault in faults:
        partitions: dict[int, float] = {}
        for index, (partition, _offset, sent) in run.fed.items():
            if sent > fault.started and index in first_read:
                partitions[partition] = min(partitions.get(partition, first_read[index]), first_read[index])
        fed_after = any(sent > fault.started for _p, _o, sent in run.fed.values())
        recovery.append(max(partitions.values()) - fault.started if partitions else float("inf") if fed_after else None)
        if partitions:
            slowest = max(partitions, key=partitions.__getitem__)
            readers = sorted({m for t, m, p, _o, _i in run.reads if p == slowest and t >= partitions[slowest]})
            notes.setdefault("slowest partition", []).append((slowest, readers))
    if faults and all(f.action in HEALED for f in faults):
        fed_partitions = {p for p, _o, _s in run.fed.values()}
        after = []
        for fault in faults:
            firsts: dict[int, float] = {}
            for t, _member, partition, _offset, _index in run.reads:
                if t >= fault.ended:
                    firsts[partition] = min(firsts.get(partition, t), t)
            after.append(round(max(firsts.values()) - fault.ended, 2) if set(firsts) >= fed_partitions else None)
        notes["after heal s"] = after
    if faults and faults[0].started:
        notes["held none s"] = round(_longest_without_partitions(run, faults[0].started), 1)
    if joined_at is not None:
        got = [t for t, member, count in run.assigned if member == "joiner" and count and t >= joined_at]
        notes["joiner has partitions after s"] = round(min(got) - joined_at, 1) if got else None
    notes["errors"] = sorted(set(run.errors))
    return Verdict(run.client, counts, recovery, notes)


def _longest_without_partitions(run: GroupRun, since: float) -> float:
    """The longest a member went from losing its partitions (at ``since`` or later) to getting some
    again (or to the members' close)."""
    longest = 0.0
    for member in sorted({m for _, m, _ in run.assigned}):
        events = sorted((t, count) for t, m, count in run.assigned if m == member and t < run.closing)
        lost_at: float | None = None
        for t, count in events:
            if count == 0 and t >= since and lost_at is None:
                lost_at = t
            elif count and lost_at is not None:
                longest, lost_at = max(longest, t - lost_at), None
        if lost_at is not None:
            longest = max(longest, run.closing - lost_at)
    return longest


def run_group_scenario(
    cluster: KafkaCluster,
    faults: list[Fault],
    duration: float,
    rate: float,
    *,
    members: int = 2,
    joiner: bool = False,
    partitions: int = 6,
    config: dict[str, Any] | None = None,
    on_groups: Callable[[dict[str, str]], None] | None = None,
) -> list[Verdict]:
    """Both clients' groups (``members`` each, at-least-once: offsets committed automatically after
    poll() handed the record over) read a topic fed at ``rate`` for ``duration`` s while ``faults``
    happen, then until they have read everything fed. With ``joiner``, one more member per client
    joins as the first fault strikes (the time it takes to get partitions is noted)."""
    groups = sibling_groups(CLIENTS, "cluster-group")
    if on_groups is not None:  # (the first client's group is "name": faults find its coordinator)
        on_groups({"name": groups[next(iter(CLIENTS))]})
    runs = {name: GroupRun(name, unique_name(f"cluster-{name.split('-')[0]}"), groups[name]) for name in CLIENTS}
    for run in runs.values():
        cluster.create_topic(run.topic, partitions)
    conf = {"session.timeout.ms": 10_000, "heartbeat.interval.ms": 1000, **(config or {})}
    team = [
        Member(CLIENTS[name], f"m{i}", cluster.bootstrap(), run, conf)
        for name, run in runs.items()
        for i in range(members)
    ]
    deadline = now() + 60
    while not all(any(c for _, _, c in run.assigned) for run in runs.values()) and now() < deadline:
        time.sleep(0.1)
    # Faults name the group's coordinator, which exists once the group does.
    # (a topic grown mid-run is fed in its new partitions once the feed's metadata shows them)
    refresh = {k: v for k, v in conf.items() if k == "topic.metadata.refresh.interval.ms"}
    feeds = [Feed(cluster.judge_bootstrap(), run.topic, rate, run, refresh) for run in runs.values()]
    player = Faults(cluster, faults, [run.topic for run in runs.values()])
    start = now()
    player.run(start)
    joined_at: float | None = None
    if joiner:  # right after the first fault struck
        while not faults[0].started and not player.errors:
            time.sleep(0.01)
        joined_at = now()
        team += [Member(CLIENTS[name], "joiner", cluster.bootstrap(), run, conf) for name, run in runs.items()]
    time.sleep(max(0.0, start + duration - now()))
    for feed in feeds:
        feed.join()
    player.join()
    deadline = now() + 120
    while now() < deadline:  # until every member has read all that was fed (or gives up)
        if all(
            {(p, o) for p, o, _ in run.fed.values()} <= {(p, o) for _, _, p, o, _ in run.reads} for run in runs.values()
        ):
            break
        time.sleep(0.5)
    time.sleep(2.0)  # one more auto-commit
    for run in runs.values():
        run.closing = now()
    for member in team:
        member.join()
    return [
        check_group(
            run,
            committed(cluster.judge_bootstrap(), run.group, run.topic, len(cluster.leaders(run.topic))),
            faults,
            joined_at,
        )
        for run in runs.values()
    ]
