"""The soak's client process (`bench.soak`): one kafkawire producer and one group consumer on a
topic of the soak's cluster, sampled every interval. Kept apart from the cluster and its fault
proxies (threads and sockets of the driver's process) so what it measures is the client's alone.

    python -m bench.soak_client BOOTSTRAP TOPIC GROUP SECONDS INTERVAL RATE WARMUP

Each sample is a JSON line on stdout: resident memory, Python's traced memory, threads, file
descriptors, and the queues the clients' statistics (``stats_cb``, librdkafka's STATISTICS.md names)
report. The last line has the delivery counts and the lines whose allocations grew most between
the first sample after WARMUP seconds and the end (two snapshots only: one of a large heap takes
seconds, time the consumer would not poll).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import tracemalloc
from typing import Any

import kafkawire

TOP = 5  # lines of tracemalloc's growth kept per sample


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Stats:
    """The latest statistics of each client (stats_cb runs in poll())."""

    def __init__(self) -> None:
        self.latest: dict[str, dict[str, Any]] = {}

    def cb(self, kind: str) -> Any:
        def take(text: str) -> None:
            self.latest[kind] = json.loads(text)

        return take

    def queues(self) -> dict[str, int]:
        """The queue sizes librdkafka's statistics name, summed over brokers and partitions."""
        out: dict[str, int] = {}
        for kind, stats in self.latest.items():
            out[f"{kind}.msg_cnt"] = stats.get("msg_cnt", 0)
            out[f"{kind}.msg_size"] = stats.get("msg_size", 0)
            out[f"{kind}.replyq"] = stats.get("replyq", 0)
            brokers = stats.get("brokers", {}).values()
            out[f"{kind}.outbuf_cnt"] = sum(b.get("outbuf_cnt", 0) for b in brokers)
            out[f"{kind}.waitresp_cnt"] = sum(b.get("waitresp_cnt", 0) for b in brokers)
            parts = [p for t in stats.get("topics", {}).values() for p in t.get("partitions", {}).values()]
            out[f"{kind}.fetchq_cnt"] = sum(p.get("fetchq_cnt", 0) for p in parts)
            out[f"{kind}.fetchq_size"] = sum(p.get("fetchq_size", 0) for p in parts)
            out[f"{kind}.msgq_cnt"] = sum(p.get("msgq_cnt", 0) + p.get("xmit_msgq_cnt", 0) for p in parts)
        return out


def main(argv: list[str]) -> None:
    bootstrap, topic, group = argv[0], argv[1], argv[2]
    seconds, interval, rate, warmup = (float(a) for a in argv[3:7])
    tracemalloc.start()
    stats = Stats()
    common = {"bootstrap.servers": bootstrap, "broker.address.family": "v4", "statistics.interval.ms": 5000}
    if os.environ.get("SOAK_DEBUG"):  # librdkafka's debug contexts for both clients, to stderr
        common["debug"] = os.environ["SOAK_DEBUG"]
    producer = kafkawire.Producer(
        {**common, "enable.idempotence": True, "linger.ms": 5, "stats_cb": stats.cb("producer")}
    )
    consumer = kafkawire.Consumer(
        {
            **common,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 10_000,
            "stats_cb": stats.cb("consumer"),
        }
    )
    consumer.subscribe([topic])
    counts = {"produced": 0, "delivered": 0, "failed": 0, "consumed": 0, "errors": 0}
    seen = bytearray()  # a bit per sequence number read, to tell re-reads from new records (small: it grows too)
    unique = 0
    stop = threading.Event()

    def report(err: Any, _msg: Any) -> None:
        counts["failed" if err is not None else "delivered"] += 1

    def produce() -> None:
        n, start = 0, time.monotonic()
        while not stop.is_set():
            wait = start + n / rate - time.monotonic()
            if wait > 0:
                time.sleep(min(0.05, wait))
                producer.poll(0)
                continue
            try:
                producer.produce(topic, n.to_bytes(8, "big"), key=str(n % 97).encode(), on_delivery=report)
                n += 1
                counts["produced"] = n
            except BufferError:  # the queue is full (a broker down): its reports make room
                producer.poll(0.05)
                continue
            producer.poll(0)

    feeder = threading.Thread(target=produce, name="soak-producer", daemon=True)
    feeder.start()
    started = time.monotonic()
    first: tracemalloc.Snapshot | None = None
    next_sample = started
    while time.monotonic() - started < seconds:
        msg = consumer.poll(0.2)
        if msg is not None:
            if msg.error() is not None:
                counts["errors"] += 1
            else:
                counts["consumed"] += 1
                n = int.from_bytes(msg.value(), "big")
                if n // 8 >= len(seen):
                    seen.extend(bytes(max(n // 8 + 1 - len(seen), 1 << 16)))
                if not seen[n // 8] & (1 << n % 8):
                    seen[n // 8] |= 1 << n % 8
                    unique += 1
        if time.monotonic() >= next_sample:
            began = time.monotonic()
            if first is None and began - started >= warmup:  # (a snapshot of a large heap takes seconds)
                first = tracemalloc.take_snapshot()
            sample = {
                "t": round(began - started, 1),
                "rss_kb": rss_kb(),
                "traced_kb": tracemalloc.get_traced_memory()[0] // 1024,
                "threads": threading.active_count(),
                "fds": len(os.listdir("/proc/self/fd")),
                "producer.len": len(producer),
                **stats.queues(),
                **counts,
                "unique_read": unique,
                "sampling_s": round(time.monotonic() - began, 2),
            }
            print(json.dumps(sample), flush=True)
            next_sample = time.monotonic() + interval  # (from the end of this sample)
    growth = []
    if first is not None:
        last = tracemalloc.take_snapshot()
        growth = [
            f"{g.traceback[0].filename}:{g.traceback[0].lineno} {g.size_diff // 1024:+d} KiB ({g.count_diff:+d} blocks)"
            for g in last.compare_to(first, "lineno")[:TOP]
        ]
    stop.set()
    feeder.join()
    left = producer.flush(60)
    consumer.close()
    print(
        json.dumps({"final": True, **counts, "unique_read": unique, "unflushed": left, "top_growth": growth}),
        flush=True,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
