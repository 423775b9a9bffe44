"""The consumer's part of its statistics (``stats_cb``, served by poll()): the assignment's size,
the fetched bytes waiting, and the fetch sessions' counts, after the brokers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..client.cluster import Client
from ..client.executor import CallbackExecutor
from ..client.stats import StatisticsEmitter


class Fetching(Protocol):
    """What the statistics read of a fetch engine (the consumer's, or the share consumer's)."""

    def buffered_bytes(self) -> int: ...

    def session_stats(self) -> dict[str, int]: ...


class ConsumerStatistics(StatisticsEmitter):
    def __init__(
        self,
        client: Client,
        fetch: Fetching,
        executor: CallbackExecutor,
        stats_cb: Callable[[str], Any],
        interval: float,
        assigned: Callable[[], int],
    ) -> None:
        self._fetch = fetch
        self._assigned = assigned
        super().__init__("consumer", client, executor, stats_cb, interval, client.config["client.id"])

    def sections(self) -> dict[str, Any]:
        return {
            "cgrp": {"assignment_size": self._assigned()},
            "fetchq_size": self._fetch.buffered_bytes(),
            "fetch_sessions": self._fetch.session_stats(),  # kafkawire's own (librdkafka has no KIP-227)
        }
