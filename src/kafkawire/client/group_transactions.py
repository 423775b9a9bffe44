"""Transactions of this process that carry a consumer group's offsets, until they end.

A transactional producer opens one for a group when it sends offsets to its transaction
(``send_offsets_to_transaction``) and ends it when the transaction is committed or aborted; a
group member of the same process that lost or gave back its partitions joins again, and reads a
new assignment's committed offsets, only once none is open for its group (issue 39). Before KIP-447
(Kafka < 2.5: no ``require_stable``) an OffsetFetch answered before the transaction's end shows the
offsets that transaction replaces, and the records after them are copied twice. A transaction that
is never ended stops counting after its ``transaction.timeout.ms`` (the broker aborts it by then).

EndTxn is answered before the coordinator has written the commit markers: until the marker reaches
the group's offsets partition (seconds while a broker is down), an OffsetFetch on Kafka < 2.5 still
shows the offsets the transaction replaced. So the offsets of a committed transaction are kept as
a floor (`floor`) until an OffsetFetch shows them or ``transaction.timeout.ms`` passed: a member
of this process reading a lower committed offset asks again (issue 39: a member that had committed
a transaction and then got its partitions back copied those 100 records again).

One registry per process (`GROUP_TRANSACTIONS`): the producer opens and ends, the consumer waits;
neither imports the other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol


class Timers(Protocol):
    """The IO engine's part a waiting member uses (`io.engine.Engine`)."""

    def call_soon(self, fn: Callable[[], None]) -> None: ...
    def call_later(self, delay: float, fn: Callable[[], None]) -> object: ...


class GroupTransactions:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[object, tuple[str, float]] = {}  # transaction -> (group, expiry, monotonic)
        self._waiting: list[tuple[str, Callable[[], None]]] = []
        # (group, (topic, partition)) -> (offset a committed transaction wrote, expiry, monotonic)
        self._floors: dict[tuple[str, tuple[str, int]], tuple[int, float]] = {}
        self._fences: dict[object, tuple[str, str, Callable[[], None]]] = {}  # -> (group, member, fence)

    def opened(
        self,
        transaction: object,
        group: str,
        timeout: float,
        fence: tuple[str, Callable[[], None]] | None = None,
    ) -> None:
        """``transaction`` (one per producer) carries offsets of ``group`` from now until `ended`,
        or ``timeout`` seconds at most. ``fence``: (the member id the offsets were sent as, a call
        that makes the transaction abortable): see `lost`."""
        with self._lock:
            self._open[transaction] = (group, time.monotonic() + timeout)
            if fence is not None:
                self._fences[transaction] = (group, *fence)

    def lost(self, group: str, member_id: str) -> None:
        """Member ``member_id`` of ``group`` in this process lost its partitions (its session expired, or the
        coordinator no longer knows it): the open transactions carrying the group's offsets must not
        commit, as a broker with KIP-447 refuses them (ILLEGAL_GENERATION). Kafka 2.3 would take
        the commit of a member it already replaced, whose successor read the offsets before it:
        the records copied twice (issue 39)."""
        with self._lock:
            fences = [f for g, m, f in self._fences.values() if (g, m) == (group, member_id)]
        for fence in fences:
            fence()

    def ended(self, transaction: object, committed: dict[tuple[str, int], int] | None = None) -> None:
        """Committed, aborted or given up: those waiting for its group and no other go on.
        ``committed``: the offsets a committed transaction wrote (their floors until visible)."""
        with self._lock:
            opened = self._open.pop(transaction, None)
            self._fences.pop(transaction, None)
            if opened is None:
                return
            now = time.monotonic()
            group, expiry = opened
            for tp, offset in (committed or {}).items():
                self._floors[(group, tp)] = (offset, expiry)
            busy = {group for group, expiry in self._open.values() if expiry > now}
            ready = [then for group, then in self._waiting if group not in busy]
            self._waiting = [(group, then) for group, then in self._waiting if group in busy]
        for then in ready:
            then()

    def floor(self, group: str, tp: tuple[str, int], offset: int) -> int | None:
        """The offset a committed transaction of this process wrote for ``tp`` when an OffsetFetch
        answered the lower ``offset`` (its commit marker is not there yet: ask again), else None
        (the floor is forgotten once reached or expired)."""
        with self._lock:
            kept = self._floors.get((group, tp))
            if kept is None:
                return None
            floor, expiry = kept
            if offset >= floor or time.monotonic() >= expiry:
                del self._floors[(group, tp)]
                return None
            return floor

    def after(self, group: str, timers: Timers, then: Callable[[], None]) -> None:
        """``then()`` on the IO thread of ``timers``: now when no transaction is open for ``group``,
        else once the last one ended or expired, whichever comes first (called once)."""
        done = threading.Event()

        def go() -> None:
            if not done.is_set():
                done.set()
                then()

        with self._lock:
            now = time.monotonic()
            expiries = [expiry for g, expiry in self._open.values() if g == group and expiry > now]
            if expiries:
                self._waiting.append((group, lambda: timers.call_soon(go)))
        if not expiries:
            go()
            return
        timers.call_later(max(expiries) - now, go)


GROUP_TRANSACTIONS = GroupTransactions()
