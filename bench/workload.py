"""What every benchmark worker shares: the records of a run, the delivery tally, the timed measure,
the producer settings every client gets, the asyncio clients' loop, and the topic filled before a
read is timed.

Below `bench.worker`, `bench.consume`, `bench.serde` and `bench.asyncio_floor`, which all stand on it.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.scenarios import Scenario, make_keys, make_values

LINGER_MS = 5
BATCH_BYTES = 1_000_000
CHUNK = 10_000  # records per produce_batch() call / per awaited group of futures
_TICK = os.sysconf("SC_CLK_TCK")


class Counts:
    """Delivery reports seen: acknowledged and failed, plus the first error's text."""

    def __init__(self) -> None:
        self.acked = 0
        self.failed = 0
        self.first_error: str | None = None

    def report(self, err: Any, _msg: Any = None) -> None:
        if err is None:
            self.acked += 1
        else:
            self.failed += 1
            if self.first_error is None:
                self.first_error = str(err)


class Workload:
    """The records of one run, built before the clock starts."""

    def __init__(self, sc: Scenario, records: int) -> None:
        self.records = records
        # At most 64 MiB of distinct values (1,024 up to 64 KiB each; a 1 MiB value: 64 of them).
        self.values = make_values(sc.value_size, distinct=min(1024, max(8, 64 * 1024 * 1024 // sc.value_size)))
        self.keys: list[bytes] | None = make_keys() if sc.keyed else None

    def key(self, i: int) -> bytes | None:
        return None if self.keys is None else self.keys[i % len(self.keys)]

    def value(self, i: int) -> bytes:
        return self.values[i % len(self.values)]

    def payload_bytes(self) -> int:
        """Key and value bytes handed over (every value has the scenario's size)."""
        total = self.records * len(self.values[0])
        if self.keys is not None:
            total += sum(len(self.keys[i % len(self.keys)]) for i in range(self.records))
        return total


def measure(work: Callable[[], None]) -> dict[str, float]:
    """Wall-clock seconds and this process's CPU seconds (every thread) spent in ``work``; with
    BENCH_BROKER_PIDS set (bench/scale.py), the broker's processes' CPU seconds over the same span."""
    broker_before = broker_cpu()
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if broker_before is None:
        return {"seconds": seconds, "cpu": cpu}
    return {"seconds": seconds, "cpu": cpu, "broker_cpu": (broker_cpu() or 0.0) - broker_before}


def broker_cpu() -> float | None:
    """User + system CPU seconds of the processes named by BENCH_BROKER_PIDS, or None when unset."""
    pids = os.environ.get("BENCH_BROKER_PIDS")
    if not pids:
        return None
    total = 0.0
    for pid in pids.split(","):
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        total += (int(fields[11]) + int(fields[12])) / _TICK
    return total


def librdkafka_style_conf(sc: Scenario, bootstrap: str, counts: Counts | None) -> dict[str, Any]:
    """Configuration for confluent-kafka and kafkawire (same option names)."""
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "linger.ms": LINGER_MS,
        "batch.size": BATCH_BYTES,
        "acks": "all" if sc.acks_all else 1,
        "enable.idempotence": sc.acks_all,
        "compression.type": sc.compression,
    }
    if counts is not None:
        conf["on_delivery"] = counts.report
    if sc.buffer_kbytes:
        conf["queue.buffering.max.kbytes"] = sc.buffer_kbytes
    conf.update(sc.client_conf)  # a secured scenario's listener, CA and credentials
    return conf


def kafkawire_producer(sc: Scenario, bootstrap: str, counts: Counts | None) -> Any:
    import kafkawire

    return kafkawire.Producer(librdkafka_style_conf(sc, bootstrap, counts))


def fill(bootstrap: str, topic: str, w: Workload) -> None:
    """The records to read, written before the clock starts (produce_arrow, every one acknowledged)."""
    import pyarrow as pa

    from kafkawire.producer.arrow import produce_arrow

    counts = Counts()
    producer = kafkawire_producer(Scenario("fill", "throughput"), bootstrap, counts)
    nv = len(w.values)
    for start in range(0, w.records, CHUNK):
        stop = min(start + CHUNK, w.records)
        produce_arrow(
            producer,
            pa.RecordBatch.from_pydict(
                {"value": pa.array([w.values[i % nv] for i in range(start, stop)], pa.binary())}
            ),
            topic,
        )
        producer.poll(0)
    producer.flush(120)
    producer.close()
    if counts.acked != w.records:
        raise RuntimeError(f"filling {topic}: {counts.acked} of {w.records} acknowledged ({counts.first_error})")


async def _gather_oldest(pending: deque[list[Any]], counts: Counts) -> None:
    for outcome in await asyncio.gather(*pending.popleft(), return_exceptions=True):
        counts.report(outcome if isinstance(outcome, BaseException) else None)


async def await_each(send: Callable[..., Awaitable[Any]], topic: str, w: Workload, counts: Counts) -> None:
    """``await send()`` per record (a producer's ``produce``, aiokafka's ``send``), the delivery
    futures it returns gathered in groups of CHUNK, at most 8 groups pending: kafkawire-aio's and
    aiokafka's loop, and bench.asyncio_floor's with no producer behind it."""
    pending: deque[list[Any]] = deque([[]])
    for i in range(w.records):
        pending[-1].append(await send(topic, w.value(i), w.key(i)))
        if len(pending[-1]) >= CHUNK:
            pending.append([])
            if len(pending) > 8:
                await _gather_oldest(pending, counts)
    while pending:
        await _gather_oldest(pending, counts)
