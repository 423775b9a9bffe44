"""`CallbackExecutor`: where a client's callbacks run: the caller's thread (``poll()``/``flush()``),
a thread of the client, or an event loop. Shared by every client (producer now, consumer next).

The IO thread never runs user callbacks (delivery reports, error_cb, throttle_cb, stats_cb); it
queues them here. With ``delivery.reports = "poll"`` (confluent-kafka's behaviour) they run
inside ``poll()``/``flush()`` on the caller's thread and an exception a callback raises comes
out of that call (the events after it stay queued for the next call). With ``"background"`` a
thread of the client serves them as they arrive, so no one has to call ``poll()``; there a
raising callback is logged and the thread goes on, and ``poll(timeout)`` only waits (up to
``timeout``, or until the report thread served something) so that a ``while: poll(1)`` loop
written for confluent-kafka does not spin. `CallbackExecutor.hand_over` (the public hook of the
asyncio faces) gives the serving to someone else (`AIOProducer`'s event loop): it is told when the queue stops being empty and serves with
``drain()``; ``poll()``/``flush()``/``close()`` wait for it as they wait for a report thread.

Every event's ``after`` hook runs exactly once, once its callback returned or raised, whichever
thread serves it (the producer uses it to free buffer room and count reports). Events queued
while the reports are being closed are still served; an event queued after the report thread
has ended is dropped with a warning, its ``after`` hook still run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sized
from typing import Any

from ..base.debug import OFF, Debug
from . import queue_log

Event = tuple[Callable[..., Any], tuple[Any, ...], Callable[[], None] | None]


class CallbackExecutor:
    """The queue of one client's callbacks and whoever serves it. ``owner`` names the client in
    log messages (and its logger, ``kafkawire.<owner>``)."""

    def __init__(self, background: bool, name: str = "kafkawire-reports", owner: str = "producer") -> None:
        self._owner = owner
        self._log = logging.getLogger(f"kafkawire.{owner}")
        self._queue: deque[Event] = deque()
        # What is queued, read only: its len() or truth costs no Python call (poll()'s fast path asks per record).
        self.waiting: Sized = self._queue
        # Held with the lock itself, not the condition: a Condition's ``with`` is two Python calls
        # around the C lock's, and a one-record flush() takes it four times.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._closed = False
        self._finished = False  # the report thread has ended: nothing will serve the queue again
        self._served = 0  # events served by the report thread or drain(), for poll() waiting on them
        self.timed_out = 0  # waits of serve()/wait_idle() that ended at their timeout, not by an event
        self._thread: threading.Thread | None = None
        self._on_ready: Callable[[], None] | None = None  # hand_over()'s hook
        self._debug = OFF  # the client's, once it exists (`diagnose`)
        if background:
            self._thread = threading.Thread(target=self._serve_forever, name=name, daemon=True)
            self._thread.start()

    def diagnose(self, debug: Debug) -> None:
        """Write the ``queue`` context's handover lines to ``debug`` from now on."""
        self._debug = debug

    def hand_over(self, on_ready: Callable[[], None]) -> None:
        """Let someone else serve (poll mode only): ``on_ready()`` is called, outside the lock and on
        the queueing thread, when an event is queued into an empty queue; they serve with `drain`
        until the queue is empty. Events queued before this wait for their first drain."""
        assert self._thread is None, "a report thread serves already"
        self._on_ready = on_ready

    @property
    def background(self) -> bool:
        """Callbacks are served by someone other than the caller of poll()/flush()/close()."""
        return self._thread is not None or self._on_ready is not None

    @property
    def on_report_thread(self) -> bool:
        """True inside a callback run by the report thread, where waiting for reports would deadlock
        (the running callback's own record is not reported until it returns)."""
        return self._thread is not None and self._thread is threading.current_thread()

    def __len__(self) -> int:
        return len(self._queue)

    def put(self, fn: Callable[..., Any], args: tuple[Any, ...], after: Callable[[], None] | None = None) -> None:
        """Queue ``fn(*args)``; ``after()`` runs once it has been served (used to free buffer space)."""
        with self._lock:
            queued = not self._finished
            if queued:
                first = not self._queue
                self._queue.append((fn, args, after))
                self._cond.notify_all()
        if queued:
            if first and self._on_ready is not None:
                self._on_ready()
            return
        self._log.warning("a %s callback was queued after the %s closed; dropped: %r", self._owner, self._owner, fn)
        if after is not None:
            _run_after(after, self._log)

    def serve(self, timeout: float | None, until: Callable[[], bool] | None = None) -> int:
        """Run the callbacks queued now, here; wait up to ``timeout`` (None = forever) for the first,
        or until ``until()`` holds (checked at each `notify`: what the caller waits for may come
        with no callback, a record without ``on_delivery`` answered, say).

        Serves at most what was queued when the first event was taken, so a steady stream of
        new events (statistics, say) cannot keep one call from returning. In background mode
        nothing is served here: it waits up to ``timeout`` (None: until the report thread or a
        drain served something) and returns 0.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.background:
            if not self.on_report_thread:
                self._wait_background(deadline)
            return 0
        return self._serve(deadline, until)

    def drain(self) -> int:
        """Run the callbacks queued now, here, without waiting: serving for `hand_over`'s taker."""
        return self._serve(time.monotonic(), None)

    def _serve(self, deadline: float | None, until: Callable[[], bool] | None) -> int:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    if until is not None and until():
                        return 0
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        return 0
                    self._wait(remaining)
                batch = len(self._queue)
            served = 0
            try:
                while served < batch:
                    try:
                        fn, args, after = self._queue.popleft()
                    except IndexError:  # another thread polling took the rest
                        break
                    served += 1
                    _run(fn, args, after, self._log)
            finally:
                if served:
                    with self._lock:
                        self._served += served
                        self._cond.notify_all()
                    if self._debug.queue:
                        queue_log.served(self._debug, self._owner, served, len(self._queue))
            if served or self._closed:
                return served
            # Another poll()ing thread took what woke us: wait again for the rest of the timeout.

    def _wait_background(self, deadline: float | None) -> None:
        with self._lock:
            start = self._served
            while not self._closed and self._served == start:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return
                self._wait(remaining)

    def wait_idle(self, predicate: Callable[[], bool], timeout: float | None) -> bool:
        """Block until ``predicate()`` holds, re-checking whenever an event is queued or served and at
        each `notify` (whoever changes what ``predicate`` reads without an event calls it)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while not predicate():
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._wait(remaining)
            return True

    def notify(self) -> None:
        """Wake every waiter to check its condition again (`serve`'s ``until``, `wait_idle`)."""
        with self._lock:
            self._cond.notify_all()

    def _wait(self, remaining: float | None) -> None:
        """One wait on the queue's condition (held); one that ends at its timeout is counted, so a
        test sees that a waiter was released by what it waited for, not by a clock."""
        if not self._cond.wait(remaining):
            self.timed_out += 1

    def close(self, timeout: float = 5.0) -> None:
        """Stop the report thread once it has served everything queued (waiting up to ``timeout``)."""
        with self._lock:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _serve_forever(self) -> None:
        try:
            while True:
                with self._lock:
                    while not self._queue and not self._closed:
                        self._cond.wait()
                    if not self._queue:  # closed, and everything served
                        self._finished = True
                        self._cond.notify_all()
                        return
                    fn, args, after = self._queue.popleft()
                try:
                    _run(fn, args, after, self._log)
                except BaseException:  # the report thread must outlive any callback (SystemExit too)
                    self._log.exception("a %s callback raised (ignored on the background thread)", self._owner)
                with self._lock:
                    self._served += 1
                    self._cond.notify_all()
        finally:
            with self._lock:
                self._finished = True
                self._cond.notify_all()


def _run(fn: Callable[..., Any], args: tuple[Any, ...], after: Callable[[], None] | None, log: logging.Logger) -> None:
    """``fn(*args)``, then ``after()`` whether or not ``fn`` raised; ``fn``'s exception wins."""
    try:
        fn(*args)
    finally:
        if after is not None:
            _run_after(after, log)


def _run_after(after: Callable[[], None], log: logging.Logger) -> None:
    try:
        after()
    except Exception:
        log.exception("a bookkeeping hook raised (ignored)")
