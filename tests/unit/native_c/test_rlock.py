"""The producer engine's lock: `_native.RLock` behaves as `threading.RLock` wherever the engine and
`threading.Condition` use it. Each test runs on both, so a difference shows as one of them failing."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.native import native

pytestmark = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)

LOCKS: list[Callable[[], Any]] = [threading.RLock, lambda: native.RLock()]  # type: ignore[union-attr]
IDS = ["threading", "native"]


def in_thread(fn: Callable[[], Any]) -> Any:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join(10)
    return out[0]


def _held_elsewhere(lock: Any) -> tuple[threading.Event, threading.Thread]:
    """Another thread takes ``lock`` and keeps it until the returned event is set."""
    held, done = threading.Event(), threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            done.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(10)
    return done, t


@pytest.mark.parametrize("make", LOCKS, ids=IDS)
def test_reentry_and_release(make: Callable[[], Any]) -> None:
    lock = make()
    assert lock.acquire() is True
    assert lock.acquire(False) is True  # the owner again
    assert lock._is_owned()
    assert in_thread(lambda: lock.acquire(False)) is False
    assert in_thread(lambda: lock._is_owned()) is False
    lock.release()
    assert in_thread(lambda: lock.acquire(False)) is False  # still held once
    lock.release()
    assert not lock._is_owned()
    with pytest.raises(RuntimeError):
        lock.release()


@pytest.mark.parametrize("make", LOCKS, ids=IDS)
def test_only_the_owner_releases(make: Callable[[], Any]) -> None:
    lock = make()
    lock.acquire()

    def other() -> str:
        try:
            lock.release()
        except RuntimeError:
            return "refused"
        return "released"

    assert in_thread(other) == "refused"
    lock.release()


@pytest.mark.parametrize("make", LOCKS, ids=IDS)
def test_arguments(make: Callable[[], Any]) -> None:
    lock = make()
    with pytest.raises(ValueError):
        lock.acquire(False, 1)
    with pytest.raises(ValueError):
        lock.acquire(True, -2)
    assert lock.acquire(blocking=True, timeout=0.5) is True
    lock.release()


@pytest.mark.parametrize("make", LOCKS, ids=IDS)
def test_timeout_while_another_holds_it(make: Callable[[], Any]) -> None:
    lock = make()
    done, t = _held_elsewhere(lock)
    started = time.monotonic()
    assert lock.acquire(timeout=0.2) is False
    assert time.monotonic() - started >= 0.15
    done.set()
    t.join(10)
    assert lock.acquire(timeout=5) is True
    lock.release()


@pytest.mark.parametrize("make", LOCKS, ids=IDS)
def test_waiters_get_it_in_turn(make: Callable[[], Any]) -> None:
    lock = make()
    total = [0]

    def work() -> None:
        for _ in range(20_000):
            with lock, lock:
                total[0] += 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert total[0] == 80_000


@pytest.mark.parametrize("make", LOCKS, ids=IDS)
def test_condition_wait_lets_go_of_every_level(make: Callable[[], Any]) -> None:
    lock = make()
    ready = threading.Condition(lock)
    state: list[str] = []

    def waiter() -> None:
        with lock, lock:  # held twice while waiting
            ready.wait_for(lambda: state, timeout=10)
            state.append("woke")
            assert lock._is_owned()

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.1)
    with ready:  # possible only when the waiter let go of both levels
        state.append("set")
        ready.notify()
    t.join(10)
    assert state == ["set", "woke"]
    assert lock.acquire(False) is True
    lock.release()


@pytest.mark.parametrize("make", LOCKS, ids=IDS)
def test_a_signal_handler_runs_during_a_blocking_wait(make: Callable[[], Any]) -> None:
    """A signal sent to the waiting thread interrupts the wait: its Python handler runs at once, and
    the wait goes on to its timeout."""
    lock = make()
    fired: list[float] = []
    done, t = _held_elsewhere(lock)
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: fired.append(time.monotonic()))
    waiter = threading.get_ident()
    sender = threading.Timer(0.1, lambda: signal.pthread_kill(waiter, signal.SIGUSR1))
    try:
        sender.start()
        assert lock.acquire(timeout=1.0) is False
        returned = time.monotonic()
    finally:
        sender.cancel()
        signal.signal(signal.SIGUSR1, previous)
        done.set()
        t.join(10)
    assert len(fired) == 1
    assert returned - fired[0] > 0.5  # the handler ran during the wait, not after it
