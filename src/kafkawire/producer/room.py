"""`Room`: waiting for room in the producer's buffer (``queue.buffering.max.*``), woken by its release.

Room is freed when a record is reported: on the IO thread for a record without a callback, or
once its callback was served (``poll()``/``flush()``, or the report thread). A waiter is woken by
that release, never by a time slice: `ProducerEngine.release` calls `freed` (under the engine's
lock) and notifies the callback queue when someone waits.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ..client.executor import CallbackExecutor


class Room:
    def __init__(self, lock: Any, executor: CallbackExecutor) -> None:
        self._lock = lock  # the engine's: the counts it guards are the buffer's
        self._space = threading.Condition(lock)
        self._executor = executor
        self._freed = 0  # releases so far: a wait for room ends when this moves
        self._waiters = 0  # threads in `wait`
        self._in_space = 0  # threads waiting on `_space` (background mode's `take`)

    def freed(self) -> bool:
        """Some room was released (under the lock); True when a `wait` must be woken."""
        self._freed += 1
        if self._in_space:
            self._space.notify_all()
        return self._waiters > 0

    def take(self, counts: Any, charge: int, block: float) -> None:
        """Take room for a record (under the lock): wait up to ``block`` s while the buffer has none
        (``counts.take_room``, the lane state's rule), serving reports in poll mode (only that frees
        a callback's room); else `BufferError`."""
        deadline = time.monotonic() + block
        while not counts.take_room(charge):
            remaining = deadline - time.monotonic()
            if block == 0 or remaining <= 0:
                raise BufferError("Local: Queue full")
            if self._executor.background:
                self._in_space += 1
                try:
                    self._space.wait(remaining)
                finally:
                    self._in_space -= 1
            else:
                self._lock.release()
                try:
                    self.wait(remaining)
                finally:
                    self._lock.acquire()

    def wait(self, timeout: float | None) -> None:
        """Until some room is freed or ``timeout`` s passed (None: no limit), serving reports in
        poll mode; not holding the lock."""
        with self._lock:
            start = self._freed
            self._waiters += 1

        def freed() -> bool:
            return self._freed != start

        try:
            if self._executor.background:
                self._executor.wait_idle(freed, timeout)
            else:
                self._executor.serve(timeout, freed)
        finally:
            with self._lock:
                self._waiters -= 1
