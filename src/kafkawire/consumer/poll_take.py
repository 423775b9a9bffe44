"""poll()'s take with nothing to serve first: the next buffered record and, with
enable.auto.offset.store, its offset + 1 stored, in one call per record.

`PollTake` is the pure-Python twin of native_c/poll_take.c's, which does the common case (a record
from the middle of a decoded chunk, both locks free) without a Python frame and calls ``slow``
(the fetch engine's `take_one`) for everything else; tests/unit/consumer/test_poll_take.py holds the two
equal. `poll_take` picks the one that runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sized
from typing import Any

from ..base.model import Message
from ..client.committed_offsets import Committed
from ..core.fetch_positions import FetchTable
from ..core.fetch_rows import Chunk
from ..native import native


class PollTake:
    """``slow()``'s record, its offset stored under ``store_lock`` when ``stored`` is a dict (the
    table, its lock and ``held`` are the C twin's, which takes the common case itself)."""

    def __init__(
        self,
        fetch_lock: Any,
        table: FetchTable,
        held: Sized,
        slow: Callable[[], Any],
        store_lock: Any,
        stored: dict[Any, Committed] | None,
        chunk_type: type = Chunk,
        committed_type: type = Committed,
    ) -> None:
        self._slow = slow
        self._store_lock = store_lock
        self._stored = stored

    def __call__(self) -> Any:
        m = self._slow()
        if m is not None and self._stored is not None and m._error is None:
            store_offset(self._store_lock, self._stored, m)
        return m


def new_lock() -> Any:
    """The C RLock when the extension runs (PollTake takes it without a call), else a Lock."""
    return threading.Lock() if native is None else native.RLock()


def store_offset(lock: Any, stored: dict[Any, Committed], m: Message) -> None:
    """``m``'s offset + 1 and leader epoch stored for its partition (PollTake's C twin stores the same)."""
    epoch = m._leader_epoch
    # tuple.__new__: the named tuple made without its generated __new__'s Python frame (per record)
    offset = tuple.__new__(Committed, (m._offset + 1, None, -1 if epoch is None else epoch))  # type: ignore[operator]
    with lock:
        stored[(m._topic, m._partition)] = offset


def poll_take(
    fetch_lock: Any,
    table: FetchTable,
    held: Sized,
    slow: Callable[[], Any],
    store_lock: Any,
    stored: dict[Any, Committed] | None,
) -> Callable[[], Any]:
    """The C PollTake when the extension runs and both locks are its RLocks, else the twin."""
    if native is not None and isinstance(fetch_lock, native.RLock) and isinstance(store_lock, native.RLock):
        take: Callable[[], Any] = native.PollTake(fetch_lock, table, held, slow, store_lock, stored, Chunk, Committed)
        return take
    return PollTake(fetch_lock, table, held, slow, store_lock, stored)
