"""``python -m bench soak --minutes N``: a kafkawire producer and group consumer for N minutes on
three Kafka 2.3 brokers reached through fault proxies (tests/harness/kafka_cluster.py), under a
seeded schedule of faults: a broker killed and restarted, a broker's client proxy blackholed then
healed, a burst of resets. The clients run in a process of their own (bench/soak_client.py) that
samples itself every interval; this one prints each sample, then the slope of every metric after
the warm-up (least squares, per hour): what grows with time is a leak or an unbounded queue.

Not part of CI: an hour by default. Results are kept in bench/SOAK.md.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from typing import Any

from tests.harness.kafka_cluster import KafkaCluster

TOPIC, GROUP, PARTITIONS = "soak", "soak-group", 6
QUIET_END = 90.0  # s at the end without faults: the last samples and counts settle
# The metrics whose slopes are printed (per hour), in this order; others are shown in samples only.
SLOPED = (
    "rss_kb",
    "traced_kb",
    "threads",
    "fds",
    "producer.len",
    "producer.msg_cnt",
    "producer.outbuf_cnt",
    "producer.waitresp_cnt",
    "consumer.fetchq_cnt",
    "consumer.fetchq_size",
    "consumer.outbuf_cnt",
    "consumer.waitresp_cnt",
    "consumer.replyq",
)


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (t, value) pairs, per unit of t (0 for fewer than two)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return 0.0 if var == 0 else sum((t - mt) * (v - mv) for t, v in points) / var


def faults(cluster: KafkaCluster, until: float, seed: int, log: list[str], done: threading.Event) -> None:
    """Kill, blackhole or reset a random broker every 20-40 s until ``until`` (monotonic)."""
    rng = random.Random(seed)
    assert cluster.net is not None
    start = time.monotonic()
    while not done.wait(rng.uniform(20.0, 40.0)) and time.monotonic() < until:
        kind, node = rng.choice(("kill", "blackhole", "resets")), rng.randrange(cluster.size)
        log.append(f"{time.monotonic() - start:7.1f} s {kind} broker {node}")
        print(f"fault: {log[-1]}", flush=True)
        proxy = cluster.net.clients[node]
        if kind == "kill":
            cluster.kill(node)
            done.wait(10.0)
            cluster.restart(node)
        elif kind == "blackhole":
            proxy.blackhole()
            done.wait(15.0)
            proxy.heal()
        else:
            for _ in range(5):
                proxy.reset()
                done.wait(1.0)


def report(samples: list[dict[str, Any]], warmup: float, fault_log: list[str], final: dict[str, Any]) -> str:
    after = [s for s in samples if s["t"] >= warmup]
    lines = ["| metric | after warm-up | last | slope per hour |", "| --- | --- | --- | --- |"]
    for key in SLOPED:
        points = [(s["t"] / 3600, float(s[key])) for s in after if key in s]
        if points:
            lines.append(f"| {key} | {points[0][1]:g} | {points[-1][1]:g} | {slope(points):+.1f} |")
    text = "\n".join(lines)
    growth = final.get("top_growth", [])
    text += "\n\ntracemalloc's top growth from the warm-up to the end:\n" + "\n".join(f"- {g}" for g in growth)
    text += "\n\nfaults:\n" + "\n".join(f"- {f}" for f in fault_log)
    text += "\n\ncounts: " + json.dumps({k: v for k, v in final.items() if k != "top_growth"})
    return text


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m bench soak", description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=60.0, help="how long the clients run (default: %(default)s)")
    p.add_argument("--interval", type=float, default=60.0, help="seconds between samples (default: %(default)s)")
    p.add_argument("--warmup", type=float, default=None, help="seconds before slopes count (default: a quarter)")
    p.add_argument("--rate", type=float, default=500.0, help="records a second produced (default: %(default)s)")
    p.add_argument("--seed", type=int, default=53, help="the fault schedule's seed (default: %(default)s)")
    args = p.parse_args(argv)
    seconds = args.minutes * 60
    warmup = seconds / 4 if args.warmup is None else args.warmup
    samples: list[dict[str, Any]] = []
    final: dict[str, Any] = {}
    fault_log: list[str] = []
    with KafkaCluster(network=True, seed=args.seed) as cluster:
        cluster.create_topic(TOPIC, PARTITIONS)
        argv_child = [cluster.bootstrap(), TOPIC, GROUP, seconds, args.interval, args.rate, warmup]
        child = subprocess.Popen(
            [sys.executable, "-m", "bench.soak_client", *map(str, argv_child)], stdout=subprocess.PIPE, text=True
        )
        done = threading.Event()
        schedule = threading.Thread(
            target=faults, args=(cluster, time.monotonic() + seconds - QUIET_END, args.seed, fault_log, done)
        )
        schedule.start()
        try:
            assert child.stdout is not None
            for line in child.stdout:
                row = json.loads(line)
                if row.get("final"):
                    final = row
                    continue
                samples.append(row)
                print("sample: " + json.dumps(row), flush=True)
            child.wait()
        finally:
            done.set()
            schedule.join()
            if child.poll() is None:
                child.kill()
    print("\n" + report(samples, warmup, fault_log, final))
    return 0 if child.returncode == 0 else 1
