"""Subscriptions being left, and when their revocation is served.

confluent-kafka's ``unsubscribe()`` returns at once: the revocation (``on_revoke``, the automatic
commit, ``on_commit``) is served by the next ``poll()``, or by ``close()`` when that comes first,
and the LeaveGroup follows it. `Departures` holds the subscriptions left that way until then, and
the LeaveGroups sent, which ``close()`` waits for before the client stops.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..client.driver import after_all
from ..client.executor import CallbackExecutor
from .rebalance import Subscription

# What revokes a subscription's partitions in the application's thread (the engine's callbacks),
# then calls its second argument with the futures of the commit it started (not waited for).
Revoke = Callable[[Subscription, Callable[[list[Future[Any]]], None]], None]


class Departures:
    def __init__(self, revoke: Revoke, executor: CallbackExecutor, request_timeout: float) -> None:
        self._revoke = revoke
        self._executor = executor
        self._timeout = request_timeout
        self._pending: list[Subscription] = []  # left, the revocation not served yet
        self._revoking: dict[Subscription, Future[None]] = {}  # revocations started, not ended yet
        self._sent: list[Future[None]] = []  # LeaveGroups not answered yet

    def later(self, sub: Subscription) -> None:
        """unsubscribe(): the revocation waits for whoever serves the callback queue next."""
        self._pending.append(sub)
        self._executor.put(self._served, (sub,))

    def now(self, sub: Subscription) -> Future[None]:
        """Revoke, then leave once the revocation's commit is answered (a member that left could
        not commit); the future resolves once the LeaveGroup is answered. Nothing here waits: the
        revocation may be served on an event loop, its callback awaited after this returns."""
        left: Future[None] = Future()
        self._sent = [f for f in self._sent if not f.done()] + [left]
        self._revoking[sub] = left

        def leave(committing: list[Future[Any]]) -> None:
            if self._revoking.pop(sub, None) is not None:  # (else close() gave up on the revocation)
                after_all(committing, lambda: self._leave(sub, left))

        self._revoke(sub, leave)
        return left

    def _leave(self, sub: Subscription, left: Future[None]) -> None:
        sub.leave(self._timeout).add_done_callback(lambda _f: left.set_result(None))

    def abandon(self) -> list[Subscription]:
        """close(): revocations that will not end (held behind, or inside, an awaited callback the
        close abandoned) are given up, their subscriptions leave at once; returns them."""
        given_up = []
        while self._revoking:
            sub, left = self._revoking.popitem()
            self._leave(sub, left)
            given_up.append(sub)
        return given_up

    def leave_now(self, sub: Subscription | None) -> None:
        """`now`, waiting for the LeaveGroup's answer (close(), or a face serving elsewhere)."""
        if sub is not None:
            self.now(sub).result(self._timeout + 5)

    def _served(self, sub: Subscription) -> None:
        if sub in self._pending:  # (close() may have served it already)
            self._pending.remove(sub)
            self.now(sub)

    def serve_pending(self) -> None:
        """close(): the revocations still pending are served now, in order."""
        while self._pending:
            self.now(self._pending.pop(0))

    def wait(self) -> None:
        """close(): every LeaveGroup sent is answered (or given up) before the client stops."""
        for left in self._sent:
            try:
                left.result(self._timeout + 5)
            except Exception:  # a LeaveGroup that never got through: the session ends it
                pass
