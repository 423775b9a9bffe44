"""The workers of the scale curves (bench/scale.py) that the other scenarios have no worker for:
one consumer subscribed to many topics, and end-to-end latency (produce to ``poll()`` return).

Run inside `bench.worker`'s fresh process like every other client; each checks its own count and
value bytes (what was read must be what was written), as bench/consume.py's readers do.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from bench.consume import MAX_RECORDS, OFFSET_BEGINNING, _confluent, _kafkawire, _outcome
from bench.scenarios import Scenario
from bench.workload import Counts, Workload, kafkawire_producer, librdkafka_style_conf, measure

STALL_SECONDS = 60.0  # no record for this long ends a read (counted short, so the run fails)
STAMP = struct.Struct(">qq")  # record index, perf_counter_ns() when produced


def topic_names(topic: str, sc: Scenario) -> list[str]:
    """The topics of a run: ``topic`` itself, or for the subscribe kind ``<topic>-<i>``."""
    if sc.kind != "subscribe":
        return [topic]
    return [f"{topic}-{i:03d}" for i in range(sc.topics)]


def _fill_topics(bootstrap: str, names: list[str], w: Workload) -> None:
    """``w.records`` records spread round-robin over ``names``, every one acknowledged."""
    counts = Counts()
    producer = kafkawire_producer(Scenario("fill", "throughput"), bootstrap, counts)
    for name in names:
        producer.list_topics(name, timeout=30)
    n = len(names)
    for i in range(w.records):
        while True:
            try:
                producer.produce(names[i % n], w.value(i))
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)
    producer.close()
    if counts.acked != w.records:
        raise RuntimeError(f"filling {n} topics: {counts.acked} of {w.records} acknowledged ({counts.first_error})")


def subscribe_worker(client: str) -> Callable[[Scenario, str, str, Workload], dict[str, Any]]:
    """``consume(1000)`` by a group member subscribed to every topic of the run, by list or by
    regex. ``seconds`` runs from the first record in hand to the last (the read), ``first_seconds``
    from subscribe() to the first record (metadata, the join, the assignment, the first fetches);
    the CPU is the whole span's."""
    make = _confluent if client.startswith("confluent") else _kafkawire

    def run(sc: Scenario, bootstrap: str, topic: str, w: Workload) -> dict[str, Any]:
        names = topic_names(topic, sc)
        _fill_topics(bootstrap, names, w)
        consumer, _ = make(bootstrap)
        wanted: list[str] = [f"^{topic}-.*"] if sc.pattern else names
        counted = [0, 0, 0]
        first = [0.0]

        def work() -> None:
            started = time.perf_counter()
            consumer.subscribe(wanted)
            n = value_bytes = errors = 0
            last = time.monotonic()
            while n < w.records and time.monotonic() - last < STALL_SECONDS:
                got = consumer.consume(MAX_RECORDS, 1.0)
                if got and not n:
                    first[0] = time.perf_counter() - started
                for m in got:
                    if m.error() is not None:
                        errors += 1
                        continue
                    n += 1
                    value_bytes += len(m.value())
                if got:
                    last = time.monotonic()
            counted[:] = [n, value_bytes, errors]

        result = measure(work)
        consumer.close()
        result["seconds"] = max(1e-6, result["seconds"] - first[0])
        out = _outcome(result, counted, len(w.values[0]))
        if counted[0] != w.records:
            out.update(failed=w.records - counted[0], error=f"read {counted[0]:,} of {w.records:,}")
        return {**out, "first_seconds": first[0]}

    return run


def e2e_worker(client: str) -> Callable[[Scenario, str, str, Workload], dict[str, Any]]:
    """One producer thread at a fixed rate and one consumer in the main thread, same library, same
    process (one clock): each value carries its index and the time it was handed to produce(); the
    latency is taken when poll() returns the record. Before the clock, one marker record has gone
    all the way round, so the consumer's fetch is running."""
    confluent = client.startswith("confluent")
    make = _confluent if confluent else _kafkawire

    def run(sc: Scenario, bootstrap: str, topic: str, w: Workload) -> dict[str, Any]:
        records = w.records
        counts = Counts()
        conf = librdkafka_style_conf(sc, bootstrap, counts)
        if confluent:
            import confluent_kafka

            conf.update({"enable.metrics.push": False, "broker.address.family": "v4", "log_level": 3})
            producer = confluent_kafka.Producer(conf)
        else:
            import kafkawire

            producer = kafkawire.Producer(conf)
        consumer, topic_partition = make(bootstrap)
        partitions = sorted(producer.list_topics(topic, timeout=10).topics[topic].partitions)
        consumer.assign([topic_partition(topic, p, OFFSET_BEGINNING) for p in partitions])
        pad = w.values[0][STAMP.size :]
        producer.produce(topic, b"marker")
        producer.flush(30)
        counts.acked = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = consumer.poll(1.0)
            if m is not None and m.error() is None and m.value() == b"marker":
                break
        else:
            return {"failed_run": "the marker record never came back"}
        latencies = [-1] * records
        produced = [0.0]

        def produce_all() -> None:
            produce, poll, stamp, rate = producer.produce, producer.poll, STAMP.pack, sc.rate
            start = time.perf_counter()
            i = 0
            while i < records:
                due = min(records, int((time.perf_counter() - start) * rate) + 1)
                while i < due:
                    try:
                        produce(topic, stamp(i, time.perf_counter_ns()) + pad)
                    except BufferError:
                        poll(0.001)
                        continue
                    i += 1
                poll(0)
                ahead = start + i / rate - time.perf_counter()
                if ahead > 0:
                    time.sleep(ahead)
            produced[0] = time.perf_counter() - start
            producer.flush(60)

        def work() -> None:
            thread = threading.Thread(target=produce_all, name="bench-producer")
            thread.start()
            n = 0
            last = time.monotonic()
            poll, unpack, now = consumer.poll, STAMP.unpack_from, time.perf_counter_ns
            while n < records and time.monotonic() - last < STALL_SECONDS / 6:
                m = poll(0.1)
                if m is None:
                    continue
                if m.error() is None:
                    i, sent = unpack(m.value())
                    latencies[i] = now() - sent
                    n += 1
                    last = time.monotonic()
            thread.join()

        result = measure(work)
        consumer.close()
        got = sorted(v for v in latencies if v >= 0)
        missing = records - len(got)

        def pct(q: float) -> float | None:
            return got[min(len(got) - 1, int(len(got) * q))] / 1e6 if got else None

        return {
            **result,
            "p50": pct(0.5),
            "p99": pct(0.99),
            "p999": pct(0.999),
            "sent_rate": records / produced[0] if produced[0] else None,
            "acked": len(got),
            "failed": missing + counts.failed,
            "error": f"{missing} records never read" if missing else counts.first_error,
            "writes": False,
        }

    return run
