"""Where callbacks run: the caller's thread (``poll()``/``flush()``) or a producer thread.

The IO thread never runs user callbacks (delivery reports, error_cb, throttle_cb, stats_cb); it
queues them here. With ``delivery.reports = "poll"`` (confluent-kafka's behaviour) they run
inside ``poll()``/``flush()`` on the caller's thread and an exception a callback raises comes
out of that call. With ``"background"`` a thread of the producer serves them as they arrive, so
no one has to call ``poll()``; there a raising callback is logged and the thread goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger("kafkawire.producer")

Event = tuple[Callable[..., Any], tuple[Any, ...], Callable[[], None] | None]


class Reports:
    def __init__(self, background: bool, name: str = "kafkawire-reports") -> None:
        self._queue: deque[Event] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._serve_forever, name=name, daemon=True)
            self._thread.start()

    @property
    def background(self) -> bool:
        return self._thread is not None

    def __len__(self) -> int:
        return len(self._queue)

    def put(self, fn: Callable[..., Any], args: tuple[Any, ...], after: Callable[[], None] | None = None) -> None:
        """Queue ``fn(*args)``; ``after()`` runs once it has been served (used to free buffer space)."""
        with self._cond:
            self._queue.append((fn, args, after))
            self._cond.notify_all()

    def serve(self, timeout: float | None) -> int:
        """Run queued callbacks here; wait up to ``timeout`` (None = forever) for the first one."""
        if self._thread is not None:
            return 0  # the producer's own thread serves them
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._queue and not self._closed:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return 0
                self._cond.wait(remaining)
        served = 0
        while True:
            try:
                fn, args, after = self._queue.popleft()
            except IndexError:
                return served
            served += 1
            try:
                fn(*args)
            finally:
                if after is not None:
                    after()

    def wait_idle(self, predicate: Callable[[], bool], timeout: float | None) -> bool:
        """Block until ``predicate()`` holds, re-checking whenever an event is queued or served."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not predicate():
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining if remaining is None else min(remaining, 0.1))
            return True

    def notify(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def close(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _serve_forever(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue and self._closed:
                    return
            while self._queue:
                fn, args, after = self._queue.popleft()
                try:
                    fn(*args)
                except Exception:
                    log.exception("a producer callback raised (ignored on the background thread)")
                finally:
                    if after is not None:
                        after()
            with self._cond:
                self._cond.notify_all()
