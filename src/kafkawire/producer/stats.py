"""The producer's statistics (``stats_cb`` every ``statistics.interval.ms``): a documented subset of
librdkafka's statistics JSON, under librdkafka's names (README)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from ..client.stats import brokers_snapshot
from .engine import ProducerEngine


class Statistics:
    """The stats thread: wakes every interval and queues ``stats_cb`` with a fresh snapshot."""

    def __init__(self, engine: ProducerEngine) -> None:
        self._engine = engine
        self._started = time.monotonic()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        conf = engine.conf
        if conf.stats_cb is not None and conf.statistics_interval_ms > 0:
            self._thread = threading.Thread(target=self._loop, name="kafkawire-stats", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _loop(self) -> None:
        conf = self._engine.conf
        while not self._stopping.wait(conf.statistics_interval_ms / 1000):
            if conf.stats_cb is not None:
                self._engine.executor.put(conf.stats_cb, (json.dumps(self.snapshot()),))

    def snapshot(self) -> dict[str, Any]:
        engine = self._engine
        conf = engine.conf
        with engine.lock:
            depths = engine.acc.depths()
        topics: dict[str, Any] = {}
        for (topic, partition), (count, size) in depths.items():
            parts = topics.setdefault(topic, {"topic": topic, "partitions": {}})["partitions"]
            parts[str(partition)] = {"partition": partition, "msgq_cnt": count, "msgq_bytes": size}
        brokers = brokers_snapshot(engine.client)
        now = time.monotonic()
        return {
            "name": conf.raw["client.id"],
            "client_id": conf.raw["client.id"],
            "type": "producer",
            "ts": int(now * 1_000_000),
            "time": int(time.time()),
            "age": int((now - self._started) * 1_000_000),
            "replyq": len(engine.executor),
            "msg_cnt": engine.outstanding,
            "msg_size": engine.buffered_bytes,
            "msg_max": conf.queue_buffering_max_messages,
            "msg_size_max": conf.queue_buffering_max_kbytes * 1024,
            "txmsgs": engine.deliveries.delivered_count,
            "txmsg_bytes": engine.deliveries.delivered_bytes,
            "tx": sum(b["tx"] for b in brokers.values()),
            "rx": sum(b["rx"] for b in brokers.values()),
            "brokers": brokers,
            "topics": topics,
        }
