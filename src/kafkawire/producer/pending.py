"""A record waiting in the producer: ``PendingMessage`` is the C twin from ``kafkawire._native``
when built, `PurePendingMessage` otherwise (same fields, same ``size``). It takes the wall clock
for a ``timestamp`` of 0, which is why it lives here and not in the sans-IO core.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ..native import native
from ..records import record_size_upper_bound


class PurePendingMessage:
    """One record between ``produce()`` and its delivery report (`kafkawire.core.accumulator.Pending`).
    A ``timestamp`` of 0 means now (epoch milliseconds), as in ``produce()``."""

    __slots__ = ("callback", "enqueued", "future", "headers", "key", "partition", "size", "timestamp", "topic", "value")

    def __init__(
        self,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
        timestamp: int,
        callback: Callable[..., Any] | None,
        future: Future[Any] | None,
        enqueued: float,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp or int(time.time() * 1000)
        self.callback = callback
        self.future = future
        self.enqueued = enqueued
        self.size = record_size_upper_bound(key, value, headers or ())


if TYPE_CHECKING:  # the C twin has the same fields
    PendingMessage = PurePendingMessage
else:
    PendingMessage = PurePendingMessage if native is None else native.PendingMessage
