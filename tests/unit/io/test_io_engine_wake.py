"""The IO engine's wake-up (io/io_engine.py): another thread's `call_soon` wakes a loop that has
nothing else to wait for, however many wake-ups came before it looked; a wake-up after the loop
ended goes nowhere. Both kinds: the eventfd (Linux) and the socket pair (elsewhere)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest

from kafkawire.io import io_engine

KINDS = [io_engine._SocketPairWake] + ([io_engine._EventFdWake] if hasattr(os, "eventfd") else [])


@pytest.fixture(params=KINDS, ids=lambda kind: kind.__name__)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[io_engine.Engine]:
    monkeypatch.setattr(io_engine, "_Wake", request.param)
    made = io_engine.Engine("test-wake")
    assert isinstance(made._waker, request.param)
    yield made
    made.stop()


def test_another_threads_call_wakes_a_loop_with_no_timer(engine: io_engine.Engine) -> None:
    ran = threading.Event()
    where: list[bool] = []

    def here() -> None:
        where.append(engine.in_io_thread)
        ran.set()

    engine.call_soon(here)  # from this thread: the loop sleeps in its selector with no deadline
    assert ran.wait(5)
    assert where == [True]


def test_many_wake_ups_are_drained_at_once_and_the_next_one_still_wakes(engine: io_engine.Engine) -> None:
    hold = threading.Event()

    def busy() -> None:  # the loop is busy while the wake-ups pile up
        hold.wait(5)

    engine.call_soon(busy)
    for _ in range(10_000):
        engine.call_soon(lambda: None)
    hold.set()
    drained = threading.Event()
    engine.call_soon(drained.set)
    assert drained.wait(5)
    later = threading.Event()
    engine.call_soon(later.set)  # a wake-up after the drain is not lost
    assert later.wait(5)


def test_a_wake_up_after_the_loop_ended_goes_nowhere(engine: io_engine.Engine) -> None:
    engine.stop()
    assert not engine._thread.is_alive()
    engine.call_soon(lambda: None)  # no error, no write to a descriptor number used since
    if isinstance(engine._waker, io_engine._EventFdWake):
        assert engine._waker.fileno() == -1
