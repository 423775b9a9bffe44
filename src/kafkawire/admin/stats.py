"""The admin client's statistics: ``stats_cb`` every ``statistics.interval.ms`` (served by poll()),
librdkafka's JSON names for what an admin handle has: identity, times, queued callbacks, brokers."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ..client.cluster import Client
from ..client.executor import CallbackExecutor
from ..client.stats import brokers_snapshot


class AdminStatistics:
    """Queues a snapshot every interval from an engine timer; nothing when no stats_cb or interval 0."""

    def __init__(self, client: Client, reports: CallbackExecutor, config: Mapping[str, Any]) -> None:
        self._client = client
        self._reports = reports
        self._stats_cb = config["stats_cb"]
        self._interval = config["statistics.interval.ms"] / 1000
        self._client_id = config["client.id"]
        self._started = time.monotonic()
        self._stopped = False
        if self._stats_cb is not None and self._interval > 0:
            client.engine.call_soon(self._schedule)

    def _schedule(self) -> None:
        self._client.engine.call_later(self._interval, self._tick)

    def stop(self) -> None:
        self._stopped = True

    def _tick(self) -> None:
        if self._stopped:
            return
        self._reports.put(self._stats_cb, (json.dumps(self.snapshot()),))
        self._schedule()

    def snapshot(self) -> dict[str, Any]:
        now = time.monotonic()
        brokers = brokers_snapshot(self._client)
        return {
            "name": self._client_id,
            "client_id": self._client_id,
            "type": "admin",
            "ts": int(now * 1_000_000),
            "time": int(time.time()),
            "age": int((now - self._started) * 1_000_000),
            "replyq": len(self._reports),
            "tx": sum(b["tx"] for b in brokers.values()),
            "rx": sum(b["rx"] for b in brokers.values()),
            "brokers": brokers,
        }
