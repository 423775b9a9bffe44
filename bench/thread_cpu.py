"""CPU per record of each thread of one run, and of the broker: ``python -m bench.thread_cpu [client] [records] [scenario] [broker]``.

With one interpreter lock, a producer's wall time is bounded by what its threads do in turn, and on
the benchmark's two shared cores by the broker's CPU too: this splits a run's CPU between the
application's thread, the IO thread (librdkafka's threads for confluent-kafka) and the broker's
process, with the minor page faults of each thread. It runs `bench.worker`'s client in this process
against a fresh broker (Tansu, or ``kafka23``: the tests' Apache Kafka 2.3, its JVMs counted as the
broker), each thread's CPU clock read just before and after the worker's clock.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench import worker
from bench.run import BROKERS, broker, create_topic
from bench.scenarios import parse_scenario

TICK = os.sysconf("SC_CLK_TCK")


def _stat(path: str) -> tuple[str, float, int]:
    """(name, CPU seconds, minor faults) of a task or process from its /proc stat file."""
    text = Path(path).read_text()
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return name, (int(fields[11]) + int(fields[12])) / TICK, int(fields[7])


def snapshot() -> dict[str, tuple[float, int]]:
    """CPU seconds and minor faults per thread of this process (Python threads by name, from their
    CPU clocks; the others, e.g. librdkafka's, from /proc) and per child process (the broker)."""
    out: dict[str, tuple[float, int]] = {}
    by_tid = {t.native_id: t for t in threading.enumerate()}
    for tid in os.listdir("/proc/self/task"):
        name, cpu, faults = _stat(f"/proc/self/task/{tid}/stat")
        thread = by_tid.get(int(tid))
        if thread is not None and thread.ident is not None:
            cpu = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))  # finer than /proc's ticks
            name = thread.name
        out[f"{name} ({tid})"] = (cpu, faults)
        for child in Path(f"/proc/self/task/{tid}/children").read_text().split():
            name, cpu, faults = _stat(f"/proc/{child}/stat")
            out[f"broker: {name} ({child})"] = (cpu, faults)
    return out


def main() -> None:
    client = sys.argv[1] if len(sys.argv) > 1 else "kafkawire-produce"
    records = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    scenario = parse_scenario(sys.argv[3] if len(sys.argv) > 3 else "1kb-keyless-acks1-none", False)
    kind = sys.argv[4] if len(sys.argv) > 4 else "tansu"
    if kind not in BROKERS:
        raise SystemExit(f"broker: one of {', '.join(BROKERS)}")

    taken: list[dict[str, tuple[float, int]]] = []
    measure = worker.measure

    def measured(work: Any) -> dict[str, float]:
        taken.append(snapshot())
        result = measure(work)
        taken.append(snapshot())
        return result

    worker.measure = measured  # the name each worker function calls
    with broker(None, False, kind) as target:
        topic = f"bench-threads-{os.getpid()}"
        create_topic(target.bootstrap, topic, 4)
        result = worker.THROUGHPUT[client](scenario, target.bootstrap, topic, worker.Workload(scenario, records))
    before, after = taken
    print(f"{client}, {records:,} records, {result['seconds']:.2f} s, {records / result['seconds']:,.0f} msg/s")
    print(f"  {'CPU us/record':>14} {'faults/record':>14}  thread")
    for name, (cpu, faults) in after.items():
        cpu0, faults0 = before.get(name, (0.0, 0))
        if cpu - cpu0 > 0 or faults - faults0 > 0:
            print(f"  {(cpu - cpu0) * 1e6 / records:14.3f} {(faults - faults0) / records:14.4f}  {name}")
    print(f"  {result['cpu'] * 1e6 / records:14.3f} {'':>14}  the producing process (rusage)")


if __name__ == "__main__":
    main()
