"""The producer's part of its statistics (``stats_cb``): message counts and limits after the header,
per-partition queue depths after the brokers (librdkafka's names; README)."""

from __future__ import annotations

from typing import Any

from ..client.stats import StatisticsEmitter
from .engine import ProducerEngine


class Statistics(StatisticsEmitter):
    def __init__(self, engine: ProducerEngine) -> None:
        self._engine = engine
        conf = engine.conf
        super().__init__(
            "producer",
            engine.client,
            engine.executor,
            conf.stats_cb,
            conf.statistics_interval_ms / 1000,
            conf.raw["client.id"],
        )

    def counters(self) -> dict[str, Any]:
        engine = self._engine
        conf = engine.conf
        return {
            "msg_cnt": engine.state.outstanding,
            "msg_size": engine.state.buffered_bytes,
            "msg_max": conf.queue_buffering_max_messages,
            "msg_size_max": conf.queue_buffering_max_kbytes * 1024,
            "txmsgs": engine.deliveries.delivered_count,
            "txmsg_bytes": engine.deliveries.delivered_bytes,
        }

    def sections(self) -> dict[str, Any]:
        engine = self._engine
        with engine.lock:
            depths = engine.acc.depths()
        topics: dict[str, Any] = {}
        for (topic, partition), (count, size) in depths.items():
            parts = topics.setdefault(topic, {"topic": topic, "partitions": {}})["partitions"]
            parts[str(partition)] = {"partition": partition, "msgq_cnt": count, "msgq_bytes": size}
        return {"topics": topics}
