"""A client's statistics (``stats_cb`` every ``statistics.interval.ms``), under librdkafka's names.

`StatisticsEmitter` is the one emitter of the producer, the consumer and the admin client: a timer
on the client's IO engine queues a snapshot for wherever its callbacks run. The header (identity,
times, queued callbacks) and the per-broker entries are the same for every client; each client
adds its own counters and sections in a subclass (the admin client has none).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ..io.engine import Timer
from ..model import broker_name
from .cluster import Client
from .executor import CallbackExecutor


class StatisticsEmitter:
    """Queues ``stats_cb(json)`` every ``interval`` seconds from an IO-thread timer (no thread of
    its own); nothing when there is no stats_cb or the interval is 0."""

    def __init__(
        self,
        kind: str,
        client: Client,
        executor: CallbackExecutor,
        stats_cb: Callable[[str], Any] | None,
        interval: float,
        client_id: str,
    ) -> None:
        self._kind = kind  # librdkafka's "type" of the handle
        self._client = client
        self._executor = executor
        self._stats_cb = stats_cb
        self._interval = interval
        self._client_id = client_id
        self._started = time.monotonic()
        self._timer: Timer | None = None
        self._stopped = False
        if stats_cb is not None and interval > 0:
            client.engine.call_soon(self._arm)

    def _arm(self) -> None:
        if not self._stopped:
            self._timer = self._client.engine.call_later(self._interval, self._tick)

    def _tick(self) -> None:
        if self._stopped or self._stats_cb is None:
            return
        self._executor.put(self._stats_cb, (json.dumps(self.snapshot()),))
        self._arm()

    def stop(self) -> None:
        self._stopped = True
        timer = self._timer
        if timer is not None:
            self._client.engine.call_soon(timer.cancel)

    def counters(self) -> dict[str, Any]:
        """The client's own top-level counters, placed after the header (librdkafka's order)."""
        return {}

    def sections(self) -> dict[str, Any]:
        """The client's own sections, placed after the brokers."""
        return {}

    def snapshot(self) -> dict[str, Any]:
        now = time.monotonic()
        head = {
            "name": self._client_id,
            "client_id": self._client_id,
            "type": self._kind,
            "ts": int(now * 1_000_000),
            "time": int(time.time()),
            "age": int((now - self._started) * 1_000_000),
            "replyq": len(self._executor),
        }
        counters = self.counters()
        brokers = brokers_snapshot(self._client)
        return {
            **head,
            **counters,
            "tx": sum(b["tx"] for b in brokers.values()),
            "rx": sum(b["rx"] for b in brokers.values()),
            "brokers": brokers,
            **self.sections(),
        }


def brokers_snapshot(client: Client) -> dict[str, Any]:
    """One entry per connection; librdkafka lists its coordinator connection as "GroupCoordinator"."""
    brokers = {}
    lanes = client.lanes()
    for conn in client.connections():
        st = conn.stats
        lane = conn in lanes
        name = "GroupCoordinator" if lane else broker_name(conn.host, conn.port, conn.node_id)
        brokers[name] = {
            "name": name,
            "nodeid": -1 if lane else conn.node_id,
            "state": conn.state.value.upper(),
            "tx": st.tx,
            "rx": st.rx,
            "waitresp_cnt": conn.in_flight,
            "outbuf_cnt": conn.load - conn.in_flight,
            "rtt": {
                "min": int(st.rtt_min * 1e6),
                "max": int(st.rtt_max * 1e6),
                "avg": int(st.rtt_sum / st.rx * 1e6) if st.rx else 0,
                "cnt": st.rx,
            },
        }
    return brokers
