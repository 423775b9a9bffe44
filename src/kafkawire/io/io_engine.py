"""The IO engine: one thread that moves bytes between sockets and fires timers.

It decides nothing about Kafka. Sockets register a handler for readiness; other threads hand
work in with `call_soon` (which wakes the selector through an eventfd, or a socket pair);
`call_later` keeps a heap of timers. A handler that raises is logged and the loop goes on: one
broken connection must never stop the others.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import os
import selectors
import socket
import threading
import time
from _thread import get_ident
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

log = logging.getLogger("kafkawire.io")

T = TypeVar("T")
Handler = Callable[[int], None]  # called with the ready event mask


_here = threading.local()  # .io: this thread runs an IOEngine's loop


def on_io_thread() -> bool:
    """Whether the calling thread is some client's IO thread (an interceptor's on_acknowledgement
    runs there): a wait for that thread's work would never end, so callers refuse it at once."""
    return getattr(_here, "io", False)


class Selectable(Protocol):
    def fileno(self) -> int: ...


def guarded(fn: Callable[..., None], *args: Any) -> None:
    """Call ``fn``; log what it raises and go on (one failing callback must not stop the others)."""
    try:
        fn(*args)
    except Exception:
        log_unexpected()


def log_unexpected() -> None:
    """(In an ``except`` block) What a handler raised, logged: `guarded`'s, for a hot path that writes
    out its try (a frame less per call)."""
    log.exception("unexpected error on the IO thread (the loop continues)")


_WAKE_READ = 4096  # bytes of wake-up signals read at once


class _EventFdWake:
    """The loop's wake-up as a Linux eventfd: a counter, one 8-byte write and one read however many
    wake-ups came. A write wakes the waiting loop a few microseconds sooner than a socket pair's
    (a one-record produce()+flush() waits for it: bench/PROFILE.md)."""

    def __init__(self) -> None:
        self._fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)

    def fileno(self) -> int:
        return self._fd

    def wake(self) -> None:
        fd = self._fd  # (-1 once closed: a wake-up after the loop ended writes nowhere)
        if fd >= 0:
            try:
                os.eventfd_write(fd, 1)
            except OSError:
                pass  # closed meanwhile

    def drain(self, _mask: int = 0) -> None:
        try:
            os.eventfd_read(self._fd)
        except BlockingIOError:
            pass

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        os.close(fd)


class _SocketPairWake:
    """The loop's wake-up where there is no eventfd: a byte written to a socket pair."""

    def __init__(self) -> None:
        self._r, self._w = socket.socketpair()
        self._r.setblocking(False)
        self._w.setblocking(False)

    def fileno(self) -> int:
        return self._r.fileno()

    def wake(self) -> None:
        try:
            self._w.send(b"\x00")
        except (BlockingIOError, OSError):
            pass  # already awake, or shutting down

    def drain(self, _mask: int = 0) -> None:
        # A read short of the buffer took all there was: not asked again only to fail (one system
        # call and one exception fewer per wake-up).
        try:
            while len(self._r.recv(_WAKE_READ)) == _WAKE_READ:
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        self._r.close()
        self._w.close()


_Wake = _EventFdWake if hasattr(os, "eventfd") else _SocketPairWake

# The fewest timers the heap holds before it sheds its cancelled ones (`Engine._shed_cancelled`).
_TIMERS_KEPT = 256


class Timer:
    __slots__ = ("cancelled", "fn", "seq", "when")

    def __init__(self, when: float, seq: int, fn: Callable[[], None]) -> None:
        self.when = when
        self.seq = seq
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def __lt__(self, other: Timer) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)


class Engine:
    def __init__(self, name: str = "kafkawire-io") -> None:
        self._selector = selectors.DefaultSelector()
        self._waker = _Wake()
        self._selector.register(self._waker, selectors.EVENT_READ, self._waker.drain)
        self._wake = self._waker.wake  # (bound once: call_soon from another thread calls it)
        self._calls: deque[Callable[[], None]] = deque()
        self._timers: list[Timer] = []
        self._timers_kept = _TIMERS_KEPT  # the heap's size that next sheds its cancelled timers
        self._seq = itertools.count()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._ident = self._thread.ident  # (compared by ident: threading.current_thread() is a Python call)

    # The clock of every timer and deadline; time.monotonic itself, not a wrapper around it:
    # the producer reads it once per record.
    now = staticmethod(time.monotonic)

    @property
    def in_io_thread(self) -> bool:
        return get_ident() == self._ident

    # --- thread-safe -----------------------------------------------------------------------

    def call_soon(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the IO thread (from any thread)."""
        self._calls.append(fn)
        if get_ident() != self._ident:
            self._wake()

    def run(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn`` on the IO thread and return a future of its result."""
        fut: Future[T] = Future()

        def call() -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(fn())
            except BaseException as exc:  # handed to the caller through the future
                fut.set_exception(exc)

        self.call_soon(call)
        return fut

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        self._wake()
        if not self.in_io_thread:
            self._thread.join(timeout)

    # --- IO thread only --------------------------------------------------------------------

    def call_later(self, delay: float, fn: Callable[[], None]) -> Timer:
        return self.call_at(self.now() + max(0.0, delay), fn)

    def call_at(self, when: float, fn: Callable[[], None]) -> Timer:
        """A timer at ``when`` on this engine's clock; its ``when`` is that deadline exactly, so an
        owner re-arming for the same deadline can tell it already has that timer."""
        timer = Timer(when, next(self._seq), fn)
        heapq.heappush(self._timers, timer)
        if len(self._timers) > self._timers_kept:
            self._shed_cancelled()
        return timer

    def _shed_cancelled(self) -> None:
        """Drop the cancelled timers from the heap. A cancelled timer otherwise stays until it is
        due: a connection re-arms its one timer at each request, so a busy client held tens of
        thousands of them, its deadlines minutes away (the soak, bench/SOAK.md). Shed whenever the
        heap doubled since: at most twice the live timers, at an amortised constant cost a timer."""
        self._timers = [t for t in self._timers if not t.cancelled]
        heapq.heapify(self._timers)
        self._timers_kept = max(_TIMERS_KEPT, 2 * len(self._timers))

    def register(self, sock: Selectable, events: int, handler: Handler) -> None:
        self._selector.register(sock, events, handler)

    def modify(self, sock: Selectable, events: int, handler: Handler) -> None:
        self._selector.modify(sock, events, handler)

    def unregister(self, sock: Selectable) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)

    # --- the loop --------------------------------------------------------------------------

    def _next_timeout(self) -> float | None:
        if self._calls:
            return 0.0
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        if not self._timers:
            return None
        return max(0.0, self._timers[0].when - self.now())

    def _run(self) -> None:
        _here.io = True
        try:
            # (`guarded`, written out: a frame less per event, timer and call handed in.)
            while not self._stopping:
                for key, mask in self._selector.select(self._next_timeout()):
                    try:
                        key.data(mask)
                    except Exception:
                        log_unexpected()
                now = self.now()
                while self._timers and self._timers[0].when <= now:
                    timer = heapq.heappop(self._timers)
                    if not timer.cancelled:
                        try:
                            timer.fn()
                        except Exception:
                            log_unexpected()
                for _ in range(len(self._calls)):
                    try:
                        self._calls.popleft()()
                    except Exception:
                        log_unexpected()
        finally:
            self._selector.close()
            self._waker.close()
