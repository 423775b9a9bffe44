"""The consumer's statistics (``stats_cb`` every ``statistics.interval.ms``): a subset of
librdkafka's statistics JSON under its names, queued from an IO-thread timer and served by poll()."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..client.cluster import Client
from ..client.executor import CallbackExecutor
from ..client.stats import brokers_snapshot
from ..io.engine import Timer


class Fetching(Protocol):
    """What the statistics read of a fetch engine (the consumer's, or the share consumer's)."""

    def buffered_bytes(self) -> int: ...

    def session_stats(self) -> dict[str, int]: ...


class ConsumerStatistics:
    def __init__(
        self,
        client: Client,
        fetch: Fetching,
        executor: CallbackExecutor,
        stats_cb: Callable[[str], Any],
        interval: float,
        assigned: Callable[[], int],
    ) -> None:
        self._client = client
        self._fetch = fetch
        self._executor = executor
        self._stats_cb = stats_cb
        self._interval = interval
        self._assigned = assigned
        self._started = time.monotonic()
        self._timer: Timer | None = None
        self._stopped = False
        client.engine.call_soon(self._arm)

    def _arm(self) -> None:
        if not self._stopped:
            self._timer = self._client.engine.call_later(self._interval, self._tick)

    def _tick(self) -> None:
        if self._stopped:
            return
        self._executor.put(self._stats_cb, (json.dumps(self.snapshot()),))
        self._arm()

    def stop(self) -> None:
        self._stopped = True
        timer = self._timer
        if timer is not None:
            self._client.engine.call_soon(timer.cancel)

    def snapshot(self) -> dict[str, Any]:
        brokers = brokers_snapshot(self._client)
        now = time.monotonic()
        client_id = self._client.config["client.id"]
        return {
            "name": client_id,
            "client_id": client_id,
            "type": "consumer",
            "ts": int(now * 1_000_000),
            "time": int(time.time()),
            "age": int((now - self._started) * 1_000_000),
            "replyq": len(self._executor),
            "tx": sum(b["tx"] for b in brokers.values()),
            "rx": sum(b["rx"] for b in brokers.values()),
            "brokers": brokers,
            "cgrp": {"assignment_size": self._assigned()},
            "fetchq_size": self._fetch.buffered_bytes(),
            "fetch_sessions": self._fetch.session_stats(),  # kafkawire's own (librdkafka has no KIP-227)
        }
