"""What a share consumer measures itself for its client metrics (KIP-714), the names librdkafka's
share consumer pushes: poll() timing from the caller's thread, record acknowledgements sent and
bytes fetched from the IO thread. Fetch and heartbeat counts, fetch latency and throttle times come
from the connections' counters (client/telemetry.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.telemetry import Meter, PollIdle, PollSpacing, Tally


class ShareMetrics:
    """One share consumer's own meters, read by its metrics pusher at each push (IO thread)."""

    def __init__(self) -> None:
        self.poll_idle = PollIdle()
        self.poll_spacing = PollSpacing()
        self._acks_sent = Tally()
        self._bytes = Tally()
        self._fetch_size = Meter()

    def acknowledgements_sent(self, acks: Mapping[Any, Mapping[int, int]]) -> None:
        """IO thread: a request carries these acknowledgements (offset -> type, by partition)."""
        self._acks_sent.add(sum(len(types) for types in acks.values()))

    def fetched(self, size: int) -> None:
        """IO thread: a ShareFetch answer brought ``size`` bytes of records (0: none)."""
        self._bytes.add(size)
        self._fetch_size.add(size)

    def values(self) -> dict[str, float]:
        size_avg, size_max = self._fetch_size.take()
        spacing_avg, spacing_max = self.poll_spacing.meter.take()
        return {
            "poll.idle.ratio.avg": self.poll_idle.meter.take()[0],
            "time.between.poll.avg": spacing_avg,
            "time.between.poll.max": spacing_max,
            "fetch.manager.fetch.size.avg": size_avg,
            "fetch.manager.fetch.size.max": size_max,
        }

    def counts(self) -> dict[str, tuple[int, int]]:
        return {
            "fetch.manager.acknowledgements.send": self._acks_sent.take(),
            "fetch.manager.bytes.consumed": self._bytes.take(),
        }
