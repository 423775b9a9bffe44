"""A broker's statistics counters (librdkafka's "brokers" fields): what the connection and its
IO count, read by the client's statistics emitter (client/stats.py)."""

from __future__ import annotations

from typing import Any

from .stats_window import Window
from .telemetry import Meter

# The meters of throttle times, by the API key of the answers that carry them (Produce, ShareFetch).
THROTTLE_METERS = {0: "throttle", 78: "share_fetch_throttle"}


class BrokerStats:
    """One broker's counters and windows for statistics, under librdkafka's names (STATISTICS.md,
    "brokers"), kept across its connections. Counted per request, answer, read or write, never per
    record (the caller passes the time); the windows (microseconds; throttle in milliseconds) exist
    only when statistics are on."""

    __slots__ = (
        "connects",
        "disconnects",
        "meters",
        "received_at",
        "req",
        "req_timeouts",
        "rx",
        "rxbytes",
        "rxerrs",
        "sent_at",
        "state_at",
        "throttled",
        "tx",
        "txbytes",
        "txerrs",
        "wakeups",
        "windows",
    )

    def __init__(self, windows: bool = False, now: float = 0.0) -> None:
        self.tx = self.txbytes = self.txerrs = self.req_timeouts = 0
        self.rx = self.rxbytes = self.rxerrs = 0
        self.wakeups = self.connects = self.disconnects = 0
        self.sent_at = self.received_at = 0.0  # the IO clock's last send / receive (0: none on this connection)
        self.state_at = now  # the last state change
        self.req: dict[int, int] = {}  # requests sent, by API key
        # librdkafka's spans: int_latency and outbuf_latency 100 ms, rtt 500 ms, throttle 5,000 s
        self.windows = (
            {
                "int_latency": Window(0, 100_000),
                "outbuf_latency": Window(0, 100_000),
                "rtt": Window(0, 500_000),
                "throttle": Window(0, 5_000_000),
            }
            if windows
            else None
        )
        self.throttled = False  # the last throttle time recorded was not 0
        # Round trips (ms) of every request, and by API key (Produce, Fetch, OffsetCommit, ShareFetch),
        # and the throttle times of Produce and ShareFetch answers: the client metrics pushed to the
        # broker (KIP-714), over each push interval.
        self.meters: dict[int | str, Meter] = {"all": Meter(), 0: Meter(), 1: Meter(), 8: Meter(), 78: Meter()}
        self.meters.update((name, Meter()) for name in THROTTLE_METERS.values())

    def moved(self, old: str, new: str, now: float) -> None:
        """A change of the connection's state (values of io/broker.State): attempts to connect,
        disconnects of a connection that was up, and the idle times, which are per connection."""
        if new != old:
            self.state_at = now
            self.connects += new == "connecting"
            if new == "disconnected":
                self.disconnects += old in ("negotiating", "ready")
                self.sent_at = self.received_at = 0.0

    def sent(self, key: int, size: int, now: float) -> None:
        """A request of API ``key`` framed for the wire (``size`` bytes)."""
        self.tx += 1
        self.txbytes += size
        self.sent_at = now
        self.req[key] = self.req.get(key, 0) + 1

    def waited(self, queued_for: float) -> None:
        """A request leaves the broker's queue after ``queued_for`` seconds (outbuf_latency)."""
        if self.windows is not None:
            self.windows["outbuf_latency"].add(int(queued_for * 1e6))

    def read_ended(self, now: float, failed: bool) -> float:
        """A read from the socket ended (``failed``: the peer closed, or the bytes were bad): ``now``."""
        self.rxerrs += failed
        return now

    def timed_out(self, count: int) -> int:
        self.req_timeouts += count
        return count

    def answered(self, now: float, sent_at: float, body: Any, key: int = -1) -> None:
        """An answer to a request of API ``key`` sent at ``sent_at``; its throttle time is a sample
        when not 0, or when it ends a throttle (librdkafka records throttle times so)."""
        throttle_ms = (body.get("throttle_time_ms", 0) or 0) if body is not None else 0
        rtt_ms = (now - sent_at) * 1000
        meters = self.meters
        meters["all"].add(rtt_ms)
        if key in meters:
            meters[key].add(rtt_ms)
        throttled = THROTTLE_METERS.get(key)
        if throttled is not None:
            meters[throttled].add(throttle_ms)
        self.rx += 1
        self.received_at = now
        windows = self.windows
        if windows is not None:
            windows["rtt"].add(int((now - sent_at) * 1e6))
            if throttle_ms or self.throttled:
                windows["throttle"].add(throttle_ms)
        self.throttled = throttle_ms > 0
