"""What a heartbeat-driven group member (KIP-848's and the share group's) does between heartbeats:
one timer, the coordinator found (then a heartbeat at once) or lost, a retry after the member's
backoff, the start and the stop."""

from __future__ import annotations

from collections.abc import Callable

from ..client.coordinators import GROUP, Coordinators
from ..client.network_client import Client
from ..io.io_engine import Timer


class HeartbeatLoop:
    client: Client
    coordinators: Coordinators
    coordinator: int | None
    _group: str  # the group id the coordinator is found for
    _timer: Timer | None
    _stopped: bool

    def _heartbeat(self) -> None:
        raise NotImplementedError

    def _retry_delay(self) -> float:
        raise NotImplementedError

    def start(self) -> None:
        self.client.engine.call_soon(self._heartbeat)

    def _stop(self) -> None:
        """No heartbeat from now on (the member leaves)."""
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()

    def _later(self, delay: float, fn: Callable[[], None]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.client.engine.call_later(delay, fn)

    def _found(self, node: int) -> None:
        self.coordinator = node
        self._heartbeat()

    def _lost_coordinator(self) -> None:
        self.coordinators.forget(GROUP, self._group)
        self.coordinator = None
        self._later(self._retry_delay(), self._heartbeat)

    def _retry_later(self) -> None:
        if not self._stopped:
            self._later(self._retry_delay(), self._heartbeat)
