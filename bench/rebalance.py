"""The members curve: how long a consumer group takes to reach a stable assignment, and how many
records wait for it, as the group grows (kafkawire against confluent-kafka, issue 52).

``python -m bench.rebalance [--members 1,4,16,32] [--protocol eager,cooperative,consumer]
[--rounds 2]``. Classic groups (``eager``: range; ``cooperative``: cooperative-sticky) run on the
tests' Apache Kafka 2.3 (needs Java; session.timeout.ms 6000, heartbeat.interval.ms 1000,
group.initial.rebalance.delay.ms 0 on the broker), KIP-848 groups (``consumer``:
group.protocol=consumer, the broker's uniform assignor and its own timers; fetch.wait.max.ms 100,
as the mock answers a Fetch only when that runs out) on librdkafka's mock cluster. Before the
first round, one uncounted group on each broker. For each protocol, group size N and client, a
fresh topic of `PARTITIONS` partitions and a fresh group; every member is a consumer of that
client in its own thread, polling with a 100 ms timeout (a member waits on its records, never on
the others), automatic commits on. A confluent-kafka producer in its own process writes `RATE`
records a second, round-robin over the partitions, each record carrying its index and the time it
was produced (CLOCK_MONOTONIC), from before the first phase (once its first record is
acknowledged) to the end of the last. Three
phases, each timed from its action until the assignment is stable (every partition held by
exactly one live member, holdings differing by at most one) and followed by `TAIL` s of steady
state:

- ``join``: N new members subscribe to an empty group;
- ``add``: member N+1 subscribes;
- ``leave``: the first member made calls ``close()``, the other N keep its partitions.

A phase's records are those produced from `LATE` before its action to `LATE` before the next one's
(the last: until the producer stops): a record produced earlier that waited longer than `LATE` did
so before the action. ``late`` counts the phase's records that reached ``poll()`` more than `LATE`
after they were produced (or never); ``worst`` is the longest any of them waited (each partition
gets a record every 200 ms, so it is how long the worst partition went unconsumed); ``twice`` the
records read again (a partition moved before its offsets were committed). The driver's own time
(each member's bookkeeping between two polls) and the steady state's p99 latency show that the
driver keeps up. Writes the ``members`` section of bench/SCALE.md and bench/scale-members.png.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from bench.results import Run
from bench.run import ROOT, machine, versions
from bench.scale_report import Point, merge_sections, plot_members, render_members

CLASSIC = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}
PROTOCOLS: dict[str, dict[str, Any]] = {
    "eager": {**CLASSIC, "partition.assignment.strategy": "range"},
    "cooperative": {**CLASSIC, "partition.assignment.strategy": "cooperative-sticky"},
    "consumer": {"group.protocol": "consumer"},
}
BROKER_OF = {"eager": "kafka23", "cooperative": "kafka23", "consumer": "mock"}
# The mock answers a Fetch when fetch.wait.max.ms runs out, not when a record arrives (steady waits
# of ~500 ms with the default): both clients ask for 100 ms there, so that LATE means the rebalance.
ON_BROKER = {"kafka23": {}, "mock": {"fetch.wait.max.ms": 100}}
COMMON = {"auto.offset.reset": "earliest"}
PHASES = ("join", "add", "leave")
CLIENTS = ("kafkawire", "confluent-kafka")
PARTITIONS = 64  # at least the largest group plus one, so that every member holds some
RATE = 320  # records/s offered, 5 a second on each partition
LATE = 0.5  # seconds: a record read later than this after it was produced waited for the rebalance
TAIL = 2.0  # seconds of steady state after each phase settles
LIMIT = 60.0  # seconds a phase may take before the run fails
POLL = 0.1  # each member's poll() timeout
STAMP = struct.Struct(">qq")  # record index, perf_counter_ns() when produced


def make_consumer(client: str, bootstrap: str, group: str, settings: dict[str, Any]) -> Any:
    """A consumer of ``client`` (confluent-kafka or kafkawire) in ``group`` with ``settings``."""
    conf = {"bootstrap.servers": bootstrap, "group.id": group, **COMMON, **settings}
    if client == "confluent-kafka":
        import confluent_kafka

        conf.update({"broker.address.family": "v4", "log_level": 3})
        return confluent_kafka.Consumer(conf)
    import kafkawire

    return kafkawire.Consumer(conf)


class Arrivals:
    """When each record first reached a ``poll()``, and how many came again. Written by every
    member's thread: single dict stores and integer adds, each one atomic under the GIL."""

    def __init__(self) -> None:
        self.first: dict[int, int] = {}
        self.again: dict[int, int] = {}

    def arrived(self, index: int, now_ns: int) -> None:
        if index in self.first:
            self.again[index] = self.again.get(index, 0) + 1
        else:
            self.first[index] = now_ns


class Member:
    """One consumer in its own thread: subscribes when started, polls until told to leave, and
    keeps what it holds after each rebalance callback with the callback's time."""

    def __init__(self, consumer: Any, topic: str, arrivals: Arrivals) -> None:
        self.consumer = consumer
        self.topic = topic
        self.arrivals = arrivals
        self.state: tuple[frozenset[int], float] = (frozenset(), 0.0)  # held partitions, when
        self.changed_at: float | None = None
        self.leave = threading.Event()
        self.driver_ns: list[int] = []  # the thread's own time after each poll() that returned
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="bench-member", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _noted(self, _consumer: Any, _partitions: Any) -> None:
        self.changed_at = time.perf_counter()

    def _run(self) -> None:
        c, arrived, unpack, now = self.consumer, self.arrivals.arrived, STAMP.unpack, time.perf_counter_ns
        spent = self.driver_ns
        try:
            c.subscribe([self.topic], on_assign=self._noted, on_revoke=self._noted, on_lost=self._noted)
            while not self.leave.is_set():
                m = c.poll(POLL)
                t0 = now()
                if self.changed_at is not None:
                    at, self.changed_at = self.changed_at, None
                    held = frozenset(tp.partition for tp in c.assignment())
                    if held != self.state[0]:  # a callback with nothing in it changes nothing
                        self.state = (held, at)
                if m is not None and m.error() is None:
                    arrived(unpack(m.value())[0], t0)
                spent.append(now() - t0)
        except BaseException as e:  # reported by the driver
            self.error = e
        finally:
            c.close()


class Feed:
    """A confluent-kafka producer in its own process (so that neither client's threads in this one
    delay it) writing `RATE` stamped records a second, round-robin over the partitions. After
    `stop`: ``sent`` holds each record's production time, ``acked`` its delivery report's
    (perf_counter_ns: CLOCK_MONOTONIC, the same clock in every process)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")  # this process has client threads: no fork
        self.go, self.halt, self.flowing = ctx.Event(), ctx.Event(), ctx.Event()
        self.results, theirs = ctx.Pipe(duplex=False)
        self.process = ctx.Process(
            target=feed,
            args=(bootstrap, topic, partitions, os.getpid(), self.go, self.halt, self.flowing, theirs),
            daemon=True,
        )
        self.process.start()
        self.sent: list[int] = []
        self.acked: dict[int, int] = {}
        self.failed = 0

    def start(self) -> None:
        """Starts producing; returns once the first record was acknowledged (the new topic's
        partitions have their leader), so that no phase pays for the topic's creation."""
        self.go.set()
        if not self.flowing.wait(60):
            raise RuntimeError("the producer's first record was not acknowledged within 60 s")

    def stop(self) -> float:
        """Stops producing; returns when the last record was produced (perf_counter seconds)."""
        self.halt.set()
        if not self.results.poll(90):
            raise RuntimeError("the producer process did not report")
        self.sent, self.acked, self.failed = self.results.recv()
        self.process.join(30)
        return self.sent[-1] / 1e9 if self.sent else time.perf_counter()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            self.process.join(10)


def feed(
    bootstrap: str, topic: str, partitions: int, parent: int, go: Any, halt: Any, flowing: Any, results: Any
) -> None:
    """The producer process of `Feed`; it stops by itself when the benchmark is gone."""
    import confluent_kafka

    sent: list[int] = []
    acked: dict[int, int] = {}
    failed = [0]
    now = time.perf_counter_ns

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            failed[0] += 1
        else:
            acked[STAMP.unpack(msg.value())[0]] = now()
            flowing.set()

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "broker.address.family": "v4", "log_level": 3}
    )
    while not go.wait(1):
        if os.getppid() != parent:
            return
    start = time.perf_counter()
    while not halt.is_set() and os.getppid() == parent:
        due = int((time.perf_counter() - start) * RATE) + 1
        while len(sent) < due:
            i = len(sent)
            t = now()
            producer.produce(topic, STAMP.pack(i, t), partition=i % partitions, on_delivery=delivered)
            sent.append(t)
        producer.poll(0.005)
    producer.flush(30)
    results.send((sent, acked, failed[0]))


def stable_since(members: list[Member], partitions: int) -> float | None:
    """When the live ``members`` last changed, if together they hold every partition exactly once
    with holdings differing by at most one; else None."""
    states = [m.state for m in members]
    held = [p for ps, _ in states for p in ps]
    sizes = [len(ps) for ps, _ in states]
    if len(held) != partitions or len(set(held)) != partitions or max(sizes) - min(sizes) > 1:
        return None
    return max(at for _, at in states)


def until_stable(members: list[Member], partitions: int, action: float) -> float:
    """Seconds from ``action`` until the members' assignment is stable (the last change's time)."""
    while True:
        since = stable_since(members, partitions)
        if since is not None:
            return max(0.0, since - action)
        failed = [m.error for m in members if m.error is not None]
        if failed:
            raise RuntimeError(f"a member failed: {failed[0]!r}")
        if time.perf_counter() - action > LIMIT:
            held = [sorted(m.state[0]) for m in members]
            raise TimeoutError(f"the group was not stable within {LIMIT:.0f} s: {held}")
        time.sleep(0.01)


def steady(members: list[Member]) -> str | None:
    """`TAIL` seconds in which the assignment must stay as it is; a problem if it does not."""
    before = [m.state for m in members]
    time.sleep(TAIL)
    after = [m.state for m in members]
    return None if before == after else "the assignment changed after it was stable"


def phase_records(
    sent: list[int], acked: dict[int, int], arrivals: Arrivals, start: float, end: float
) -> dict[str, float]:
    """The records produced in [start, end) (perf_counter seconds; ``sent``: each record's
    production time, ``acked``: its delivery report's): how many reached a poll() more than `LATE`
    after they were produced (or never), and more than `LATE` after their delivery report (the
    group's share, when the broker is slow to take records), the longest wait, how many were read
    again."""
    lo, hi, late_ns = int(start * 1e9), int(end * 1e9), int(LATE * 1e9)
    late = late_acked = unread = twice = 0
    worst = 0
    for i, t in enumerate(sent):
        if not lo <= t < hi:
            continue
        got = arrivals.first.get(i)
        if got is None:
            unread += 1
            continue
        worst = max(worst, got - t)
        late += got - t > late_ns
        late_acked += got - acked.get(i, t) > late_ns
        twice += arrivals.again.get(i, 0)
    return {
        "late": late + unread,
        "late_acked": late_acked + unread,
        "unread": unread,
        "worst": worst / 1e9,
        "twice": twice,
    }


def _p99(values: list[int], scale: float) -> float | None:
    return sorted(values)[int(len(values) * 0.99)] / scale if values else None


def one_run(protocol: str, members_wanted: int, client: str, bootstrap: str, topic: str) -> dict[str, Any]:
    """One group of ``members_wanted`` through the three phases; each phase's settle time and
    records, the steady state's p99 wait, the driver's own time and the process's CPU."""
    group = f"bench-{uuid.uuid4().hex[:8]}"
    settings = {**PROTOCOLS[protocol], **ON_BROKER[BROKER_OF[protocol]]}
    arrivals = Arrivals()
    feed = Feed(bootstrap, topic, PARTITIONS)
    live: list[Member] = []
    gone: list[Member] = []
    out: dict[str, Any] = {"phases": {}}
    actions: list[float] = []
    settled: list[float] = []
    problems: list[str] = []
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.perf_counter()

    def member() -> Member:
        return Member(make_consumer(client, bootstrap, group, settings), topic, arrivals)

    try:
        live = [member() for _ in range(members_wanted)]
        feed.start()
        for phase in PHASES:
            newcomer = member() if phase == "add" else None
            action = time.perf_counter()
            if phase == "join":
                for m in live:
                    m.start()
            elif newcomer is not None:
                live.append(newcomer)
                newcomer.start()
            else:
                leaver = live.pop(0)
                gone.append(leaver)
                leaver.leave.set()
            seconds = until_stable(live, PARTITIONS, action)
            actions.append(action)
            settled.append(action + seconds)
            out["phases"][phase] = {"settle": seconds}
            problem = steady(live)
            if problem:
                problems.append(f"{phase}: {problem}")
        end = feed.stop()
        time.sleep(TAIL)  # the last records reach their members
    finally:
        feed.kill()
        for m in live + gone:
            m.leave.set()
        for m in live + gone:
            m.thread.join(60)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    bounds = [a - LATE for a in actions] + [end]
    for n, phase in enumerate(PHASES):
        out["phases"][phase].update(phase_records(feed.sent, feed.acked, arrivals, bounds[n], bounds[n + 1]))
    calm = list(zip(settled, [a - LATE for a in actions[1:]] + [end], strict=True))  # settled -> next phase
    quiet = [i for i, t in enumerate(feed.sent) if any(lo <= t / 1e9 < hi for lo, hi in calm)]
    spent = [ns for m in live + gone for ns in m.driver_ns]
    out.update(
        steady_p99=_p99([arrivals.first[i] - feed.sent[i] for i in quiet if i in arrivals.first], 1e6),
        ack_p99=_p99([feed.acked[i] - feed.sent[i] for i in quiet if i in feed.acked], 1e6),
        driver_p99=_p99(spent, 1e3),
        driver_share=sum(spent) / 1e9 / (time.perf_counter() - wall0),
        cpu=(cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime),
        produced=len(feed.sent),
        failed_deliveries=feed.failed,
    )
    unread = sum(p["unread"] for p in out["phases"].values())
    if unread:
        problems.append(f"{unread} records never read")
    if feed.failed:
        problems.append(f"{feed.failed} records not delivered")
    out["problems"] = problems
    return out


@contextmanager
def brokers(protocols: list[str]) -> Iterator[dict[str, Any]]:
    """The brokers the protocols need: {"kafka23": bootstrap, "mock": the cluster}."""
    with ExitStack() as stack:
        found: dict[str, Any] = {}
        if any(BROKER_OF[p] == "kafka23" for p in protocols):
            from tests.harness.kafka_broker import KafkaBroker

            found["kafka23"] = stack.enter_context(KafkaBroker()).bootstrap()
        if any(BROKER_OF[p] == "mock" for p in protocols):
            from tests.harness.mock_cluster import MockCluster

            found["mock"] = stack.enter_context(MockCluster(broker_count=1))
        yield found


def warm_up(where: Any, protocol: str) -> None:
    """One uncounted group on a new broker: Kafka 2.3 creates __consumer_offsets for the first
    group, which the first run would otherwise wait for alone (0.7 s more for one member)."""
    topic = f"members-warm-up-{uuid.uuid4().hex[:6]}"
    bootstrap = new_topic(where, topic)
    consumer = make_consumer("confluent-kafka", bootstrap, f"warm-up-{uuid.uuid4().hex[:6]}", PROTOCOLS[protocol])
    consumer.subscribe([topic])
    deadline = time.monotonic() + LIMIT
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.1)
    consumer.close()


def new_topic(where: Any, topic: str) -> str:
    """``topic`` of `PARTITIONS` partitions on ``where`` (a bootstrap or the mock); its bootstrap."""
    if isinstance(where, str):
        from bench.run import create_topic

        create_topic(where, topic, PARTITIONS)
        return where
    where.create_topic(topic, PARTITIONS)
    return str(where.bootstraps)


def _line(run: dict[str, Any]) -> str:
    parts = [
        f"{p} {v['settle']:5.2f} s late {v['late']:4} ({v['late_acked']} after ack) worst {v['worst']:5.2f} s "
        f"twice {v['twice']}"
        for p, v in run["phases"].items()
    ]
    parts.append(
        f"steady p99 {run['steady_p99'] or 0:.0f} ms, ack p99 {run['ack_p99'] or 0:.0f} ms, "
        f"driver p99 {run['driver_p99'] or 0:.0f} us, cpu {run['cpu']:.1f} s"
    )
    return "  ".join(parts) + (f"  PROBLEM: {'; '.join(run['problems'])}" if run["problems"] else "")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.rebalance", description=__doc__.splitlines()[0])
    p.add_argument("--members", default="1,4,16,32", help="comma-separated group sizes (default: %(default)s)")
    p.add_argument("--protocol", default=",".join(PROTOCOLS), help="comma-separated (default: %(default)s)")
    p.add_argument("--rounds", type=int, default=2, help="rounds per point (default: %(default)s)")
    p.add_argument("--output", default=str(ROOT / "bench" / "SCALE.md"), help="default: %(default)s")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    p.add_argument("--json", help="also write every run's numbers to this file")
    p.add_argument("--from-json", help="render a --json file's runs again instead of running")
    args = p.parse_args(argv)
    args.members = [int(n) for n in args.members.split(",")]
    args.protocol = args.protocol.split(",")
    unknown = [x for x in args.protocol if x not in PROTOCOLS]
    if unknown:
        raise SystemExit(f"unknown protocols {unknown}: choose from {', '.join(PROTOCOLS)}")
    if max(args.members) + 1 > PARTITIONS:
        raise SystemExit(f"at most {PARTITIONS - 1} members: the topic has {PARTITIONS} partitions")
    return args


def run_points(args: argparse.Namespace) -> tuple[list[Point], dict[str, Any]]:
    """Every protocol, group size, round and client; the points and the run's description."""
    started = time.time()
    points = {(p, n): Point("members", p, n) for p in args.protocol for n in args.members}
    with brokers(args.protocol) as found:
        for protocol in {BROKER_OF[p]: p for p in args.protocol}.values():
            warm_up(found[BROKER_OF[protocol]], protocol)
        for rnd in range(args.rounds):
            for (protocol, n), point in points.items():
                order: tuple[str, ...] = CLIENTS if rnd % 2 == 0 else CLIENTS[::-1]
                for client in order:
                    load = os.getloadavg()[0]
                    topic = f"members-{protocol}-{n}-{uuid.uuid4().hex[:6]}"
                    bootstrap = new_topic(found[BROKER_OF[protocol]], topic)
                    try:
                        result = one_run(protocol, n, client, bootstrap, topic)
                        problem = "; ".join(result["problems"]) or None
                        line = _line(result)
                    except (RuntimeError, TimeoutError) as e:
                        result, problem, line = {}, str(e), f"FAILED: {e}"
                    result["load"] = load
                    point.runs[client].append(Run(client, rnd, result, problem=problem))
                    print(
                        f"{protocol:11} {n:2} members  round {rnd + 1} {client:15} load {load:4.1f}  {line}", flush=True
                    )
    loads = [r.result["load"] for p in points.values() for rs in p.runs.values() for r in rs]
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "minutes": (time.time() - started) / 60,
        "machine": machine(),
        "versions": versions(),
        "command": "python -m bench.rebalance " + " ".join(args.argv),
        "rounds": args.rounds,
        "broker": "Apache Kafka 2.3 (classic groups; the tests' harness) and librdkafka's mock cluster (KIP-848)",
        "load": (min(loads), max(loads)),
    }
    return list(points.values()), meta


def load_points(path: str) -> tuple[list[Point], dict[str, Any]]:
    """The points and description a ``--json`` file kept."""
    saved = json.loads(Path(path).read_text())
    points: dict[tuple[str, int], Point] = {}
    for run in saved["runs"]:
        point = points.setdefault((run["protocol"], run["members"]), Point("members", run["protocol"], run["members"]))
        point.runs[run["client"]].append(Run(run["client"], run["round"], run["result"], problem=run["problem"]))
    return list(points.values()), saved["meta"]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    points, meta = load_points(args.from_json) if args.from_json else run_points(args)
    if args.json:
        runs = [
            {"protocol": p.series, "members": p.x, **r.__dict__} for p in points for rs in p.runs.values() for r in rs
        ]
        Path(args.json).write_text(json.dumps({"meta": meta, "runs": runs}, indent=1))
    text = render_members(points, meta)
    print("\n" + text)
    if not args.no_write:
        path = Path(args.output)
        plot_members(points, path.parent)
        path.write_text(merge_sections(path.read_text() if path.exists() else "", text, {"members"}))
        print(f"Wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
