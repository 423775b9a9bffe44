"""poll()'s gate in front of its take, and the engine state it reads, declared once: one object the
consumer engine (as ``ready``), its face (as ``_ready``) and poll()'s C path share.

`PollReady` is the pure-Python twin of native_c/poll_ready.c's (``kafkawire._native.PollReady``),
whose fields the C path reads at their offsets instead of looking attributes up on the engine per
record: the engine's ``closed``, ``rejoin_due`` (_MAX_POLL_EXCEEDED was handed over: the next poll
joins again), ``subscription`` and ``polled_at`` (the last poll()/consume(), for
max.poll.interval.ms). Called: None when something must be served first (a callback queued, an
error event, a rejoin due, a subscription that left the group for poll()), else ``polled_at``
stamped and one buffered record from the take (consumer/poll_take.py). tests/unit/consumer/test_poll_take.py
and tests/unit/consumer/test_fast_method.py hold the two equal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sized
from typing import Any

from ..base.model import Message
from ..native import native


class PollReady:
    __slots__ = ("_events", "_take", "_waiting", "closed", "polled_at", "rejoin_due", "subscription")

    def __init__(self, waiting: Sized, events: Sized, take: Callable[[], Message | None]) -> None:
        self._waiting = waiting  # the callback queue (CallbackExecutor.waiting)
        self._events = events  # the engine's error events for poll()
        self._take = take
        self.closed = False
        self.rejoin_due = False
        self.polled_at = time.monotonic()
        self.subscription: Any = None  # the engine's Subscription (consumer/rebalance.py), or None

    def __call__(self) -> Message | None:
        sub = self.subscription
        if self._waiting or self._events or self.rejoin_due or (sub is not None and sub.left_for_poll):
            return None
        self.polled_at = time.monotonic()
        return self._take()


def new_poll_ready(waiting: Sized, events: Sized, take: Callable[[], Message | None]) -> PollReady:
    """The C gate when the extension runs (poll()'s C path reads it), else the twin."""
    if native is None:
        return PollReady(waiting, events, take)
    ready: PollReady = native.PollReady(waiting, events, take)
    return ready
