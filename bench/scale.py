"""``python -m bench scale``: how kafkawire and confluent-kafka cost as the work grows (issue 52).

Curves (``--curve``): partitions of one topic (produce keyed and keyless, consume by poll() and by
consume(1000)), topics subscribed by one consumer (by list and by regex), record size (compressed
and not, ``message.max.bytes`` raised), and end-to-end latency (produce to poll() return) at a
fixed rate. Every point runs both clients through `bench.run.run_verified` (a fresh process per
run, a fresh topic, the broker's copy read back), alternating kafkawire and confluent-kafka (k, c,
k, c) so that load from the shared host falls on both; the host's load average is taken before
each run and shown. The broker's own CPU over each clock is read from /proc when the benchmark
started the broker. Writes bench/SCALE.md (a table per curve, its growth stated) and a PNG per
curve (bench/scale-<curve>.png).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from bench.results import Curve, Run, Series
from bench.run import ROOT, broker, machine, run_verified, versions
from bench.scale_report import Point, render_scale, write_plots
from bench.scenarios import Scenario, parse_scenario

MiB = 1024 * 1024
KAFKAWIRE, CONFLUENT = "kafkawire", "confluent-kafka"
# Kafka 2.3 for thousands of partitions on a loaded host: with the tests' 256 MiB heap and 6 s
# ZooKeeper sessions, creating a 2,048-partition topic while the last one was being deleted
# expired its ZooKeeper session.
KAFKA23 = {"heap": "1g", "extra": {"zookeeper.session.timeout.ms": "60000"}}


PRODUCERS = {KAFKAWIRE: "kafkawire-produce", CONFLUENT: "confluent-kafka"}
POLLERS = {KAFKAWIRE: "kafkawire-poll", CONFLUENT: "confluent-poll"}
CONSUMERS = {KAFKAWIRE: "kafkawire-consume", CONFLUENT: "confluent-consume"}
ROUND_TRIP = {KAFKAWIRE: "kafkawire", CONFLUENT: "confluent-kafka"}


def _records(full: int, quick: bool) -> int:
    return full // 5 if quick else full


def _produce(name: str) -> Callable[[int, bool], Scenario]:
    def make(x: int, quick: bool) -> Scenario:
        base = parse_scenario(name, False)
        return Scenario(**{**base.to_json(), "records": _records(100_000, quick), "clients": tuple(PRODUCERS.values())})

    return make


def _consume(x: int, quick: bool) -> Scenario:
    return Scenario("consume", "consume", records=_records(100_000, quick), clients=())


def _subscribe(pattern: bool) -> Callable[[int, bool], Scenario]:
    def make(x: int, quick: bool) -> Scenario:
        return Scenario("subscribe", "subscribe", records=_records(100_000, quick), topics=x, pattern=pattern)

    return make


def _size(compression: str) -> Callable[[int, bool], Scenario]:
    def make(x: int, quick: bool) -> Scenario:
        target = 40 * MiB if quick else 200 * MiB
        records = min(_records(1_000_000, quick), max(20, target // x))
        return Scenario(
            f"size-{x}-{compression}",
            "throughput",
            value_size=x,
            compression=compression,
            records=records,
            clients=tuple(PRODUCERS.values()),
            client_conf={"message.max.bytes": 4 * MiB},
            topic_config={"max.message.bytes": str(4 * MiB)},
        )

    return make


def _e2e(x: int, quick: bool) -> Scenario:
    return Scenario("e2e", "e2e", rate=x, seconds=3.0 if quick else 10.0, records=0)


CURVES = {
    "partitions": Curve(
        "partitions",
        "partitions of one topic",
        (1, 16, 256, 2048),
        (
            Series("produce keyless", PRODUCERS, _produce("100b-keyless-acks1-none"), lambda x: x),
            Series("produce keyed", PRODUCERS, _produce("100b-keyed-acks1-none"), lambda x: x),
            Series("consume poll()", POLLERS, _consume, lambda x: x),
            Series("consume consume(1000)", CONSUMERS, _consume, lambda x: x),
        ),
        "record",
    ),
    "topics": Curve(
        "topics",
        "topics subscribed (1 partition each)",
        (1, 50, 500),
        (
            Series("subscribe(list)", CONSUMERS, _subscribe(False), lambda x: 1),
            Series("subscribe(regex)", CONSUMERS, _subscribe(True), lambda x: 1),
        ),
        "record",
    ),
    "size": Curve(
        "size",
        "value bytes",
        (10, 100, 1000, 10_000, 100_000, MiB),
        (
            Series("produce uncompressed", PRODUCERS, _size("none"), lambda x: 4),
            Series("produce lz4", PRODUCERS, _size("lz4"), lambda x: 4),
        ),
        "MB",
    ),
    "latency": Curve(
        "latency",
        "records/s offered",
        (1000, 10_000, 100_000),
        (Series("produce -> poll()", ROUND_TRIP, _e2e, lambda x: 4),),
        "record",
    ),
}


def broker_pids() -> list[int]:
    """This process's descendants: the broker (and its ZooKeeper) the benchmark started."""
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def run_curve(curve: Curve, args: argparse.Namespace, bootstrap: str) -> list[Point]:
    """Each point's rounds, the clients' order alternating from round to round, after one uncounted
    run: a new Kafka 2.3's first seconds of traffic stall whichever client goes first (its first
    produce requests answered 0.2-0.5 s late, measured with either client first), which the
    latency curve's first round took for kafkawire's p99."""
    points: list[Point] = []
    first = curve.series[0]
    sc = first.scenario(curve.xs[0], True)
    topic = f"scale-{curve.name}-warm-up-{uuid.uuid4().hex[:6]}"
    warm = run_verified(first.clients[CONFLUENT], -1, sc, bootstrap, topic, sc.records, first.partitions(curve.xs[0]))
    print(f"   warm-up {CONFLUENT:<16} {_line(warm)}", flush=True)
    for x in curve.xs:
        for series in curve.series:
            sc = series.scenario(x, args.quick)
            partitions = series.partitions(x)
            print(f"\n== {curve.name} {x:,}: {series.name} ({partitions} partitions per topic)", flush=True)
            point = Point(curve.name, series.name, x, sc)
            for rnd in range(args.rounds):
                for who in (KAFKAWIRE, CONFLUENT) if rnd % 2 == 0 else (CONFLUENT, KAFKAWIRE):
                    client = series.clients[who]
                    load = os.getloadavg()[0]
                    topic = f"scale-{curve.name}-{x}-{who}-{rnd}-{uuid.uuid4().hex[:6]}"
                    run = run_verified(client, rnd, sc, bootstrap, topic, sc.records, partitions)
                    run.result["load"] = load
                    point.runs[who].append(run)
                    print(f"   round {rnd + 1} {who:<16} load {load:4.1f}  {_line(run)}", flush=True)
            points.append(point)
    return points


def _line(run: Run) -> str:
    r = run.result
    if "failed_run" in r:
        return f"FAILED: {r['failed_run']}"
    text = f"{r['records'] / r['seconds']:>11,.0f} rec/s  {r['seconds']:6.2f} s"
    if r.get("cpu"):
        text += f"  cpu {r['cpu'] * 1e6 / r['records']:7.2f} us/rec"
    if r.get("broker_cpu") is not None:
        text += f"  broker {r['broker_cpu'] * 1e6 / r['records']:7.2f} us/rec"
    text += f"  rss {r['rss_kb'] / 1024:5.0f} MiB"
    if r.get("p99") is not None:
        text += f"  p50 {r['p50']:.2f} p99 {r['p99']:.2f} p99.9 {r['p999']:.2f} ms"
    if r.get("first_seconds"):
        text += f"  first record {r['first_seconds']:.2f} s"
    return text + (f"  PROBLEM: {run.problem}" if run.problem else "")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench scale", description=__doc__.splitlines()[0])
    p.add_argument("--curve", default=",".join(CURVES), help="comma-separated curves (default: %(default)s)")
    p.add_argument("--broker", choices=("kafka23", "tansu"), default="kafka23", help="default: %(default)s")
    p.add_argument("--bootstrap-servers", help="use this broker instead of starting one (no broker CPU then)")
    p.add_argument("--rounds", type=int, default=3, help="rounds per point (default: 3, 1 with --quick)")
    p.add_argument("--points", help="comma-separated x values to run instead of each curve's")
    p.add_argument("--quick", action="store_true", help="a fifth of the records, one round: a smoke run")
    p.add_argument("--output", default=str(ROOT / "bench" / "SCALE.md"), help="default: %(default)s")
    p.add_argument("--no-write", action="store_true", help="print the tables only")
    args = p.parse_args(argv)
    if args.quick and "--rounds" not in argv:
        args.rounds = 1
    unknown = [c for c in args.curve.split(",") if c not in CURVES]
    if unknown:
        raise SystemExit(f"unknown curves {unknown}: choose from {', '.join(CURVES)}")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    started = time.time()
    loads = [os.getloadavg()[0]]
    points: list[Point] = []
    with broker(args.bootstrap_servers, False, args.broker, **(KAFKA23 if args.broker == "kafka23" else {})) as target:
        if not args.bootstrap_servers:
            os.environ["BENCH_BROKER_PIDS"] = ",".join(map(str, broker_pids()))
        for name in args.curve.split(","):
            curve = CURVES[name]
            if args.points:
                curve = Curve(**{**curve.__dict__, "xs": tuple(int(x) for x in args.points.split(","))})
            points += run_curve(curve, args, target.bootstrap)
    loads += [r.result["load"] for p in points for rs in p.runs.values() for r in rs]
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "minutes": (time.time() - started) / 60,
        "machine": machine(),
        "versions": versions(),
        "command": "python -m bench scale " + " ".join(argv),
        "rounds": args.rounds,
        "broker": target.name,
        "load": (min(loads), max(loads)),
    }
    text = render_scale([CURVES[n] for n in args.curve.split(",")], points, meta)
    print("\n" + text)
    if not args.no_write:
        write_plots([CURVES[n] for n in args.curve.split(",")], points, Path(args.output).parent)
        write_scale(Path(args.output), text, [p.curve for p in points])
        print(f"Wrote {args.output}")
    return 0


def write_scale(path: Path, text: str, curves: list[str]) -> None:
    """SCALE.md holds one section per curve: a run replaces the sections of the curves it ran and
    keeps the others (and the notes below the marker)."""
    from bench.scale_report import merge_sections

    path.write_text(merge_sections(path.read_text() if path.exists() else "", text, set(curves)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
