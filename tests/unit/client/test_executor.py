"""`CallbackExecutor`: where producer callbacks run (poll, background and handed-over modes), and their bookkeeping.

No broker: events are queued by hand, as the producer's IO thread queues them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kafkawire.client.executor import CallbackExecutor

WAIT = 5.0  # upper bound for outcomes the test waits on (never reached when things work)


@pytest.fixture
def poll_reports() -> Iterator[CallbackExecutor]:
    reports = CallbackExecutor(background=False)
    yield reports
    reports.close()


@pytest.fixture
def bg_reports() -> Iterator[CallbackExecutor]:
    reports = CallbackExecutor(background=True, name="test-reports")
    yield reports
    reports.close()


class Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value = 0

    def __call__(self) -> None:
        with self.lock:
            self.value += 1


def recorder(log: list[Any]) -> Callable[..., None]:
    def record(*args: Any) -> None:
        log.append((threading.current_thread().name, *args))

    return record


# --- poll mode ------------------------------------------------------------------------------------


def test_poll_mode_serves_in_the_callers_thread_in_order(poll_reports: CallbackExecutor) -> None:
    seen: list[Any] = []
    after = Counter()
    for i in range(5):
        poll_reports.put(recorder(seen), (i,), after)
    assert len(poll_reports) == 5
    assert poll_reports.serve(0) == 5
    me = threading.current_thread().name
    assert seen == [(me, i) for i in range(5)]
    assert after.value == 5
    assert len(poll_reports) == 0


def test_poll_mode_serve_with_nothing_queued_returns_after_its_timeout(poll_reports: CallbackExecutor) -> None:
    assert poll_reports.serve(0) == 0
    start = time.monotonic()
    assert poll_reports.serve(0.05) == 0
    assert time.monotonic() - start >= 0.05


def test_poll_mode_serve_waits_for_an_event_from_another_thread(poll_reports: CallbackExecutor) -> None:
    seen: list[Any] = []
    putter = threading.Thread(target=poll_reports.put, args=(recorder(seen), ("late",)))
    start = time.monotonic()
    putter.start()
    served = poll_reports.serve(WAIT)
    putter.join()
    assert served == 1
    assert seen == [(threading.current_thread().name, "late")]
    assert time.monotonic() - start < WAIT


def test_poll_mode_exception_propagates_after_hook_runs_rest_stay_queued(poll_reports: CallbackExecutor) -> None:
    seen: list[Any] = []
    after = Counter()

    def boom(*_: Any) -> None:
        raise RuntimeError("user callback failed")

    poll_reports.put(recorder(seen), (1,), after)
    poll_reports.put(boom, (2,), after)
    poll_reports.put(recorder(seen), (3,), after)
    with pytest.raises(RuntimeError, match="user callback failed"):
        poll_reports.serve(0)
    assert [s[1] for s in seen] == [1]
    assert after.value == 2  # the raising callback's hook ran too
    assert len(poll_reports) == 1
    assert poll_reports.serve(0) == 1
    assert [s[1] for s in seen] == [1, 3]
    assert after.value == 3


def test_poll_mode_after_hook_runs_when_callback_raises_base_exception(poll_reports: CallbackExecutor) -> None:
    after = Counter()

    def interrupted() -> None:
        raise KeyboardInterrupt

    poll_reports.put(interrupted, (), after)
    with pytest.raises(KeyboardInterrupt):
        poll_reports.serve(0)
    assert after.value == 1


def test_poll_mode_a_failing_after_hook_is_logged_not_raised(
    poll_reports: CallbackExecutor, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[Any] = []

    def bad_after() -> None:
        raise ValueError("bookkeeping")

    poll_reports.put(recorder(seen), (1,), bad_after)
    poll_reports.put(recorder(seen), (2,))
    with caplog.at_level(logging.ERROR, logger="kafkawire.producer"):
        assert poll_reports.serve(0) == 2
    assert [s[1] for s in seen] == [1, 2]
    assert "bookkeeping" in caplog.text


def test_poll_mode_one_serve_does_not_chase_events_queued_while_serving(poll_reports: CallbackExecutor) -> None:
    """A callback that queues another event (a steady stream, e.g. statistics) must not keep one
    ``poll()`` from returning."""
    calls = Counter()

    def requeue() -> None:
        calls()
        if calls.value < 1000:
            poll_reports.put(requeue, ())

    poll_reports.put(requeue, ())
    assert poll_reports.serve(0) == 1
    assert calls.value == 1
    assert len(poll_reports) == 1
    assert poll_reports.serve(0) == 1
    assert calls.value == 2


def test_poll_mode_concurrent_pollers_serve_each_event_exactly_once(poll_reports: CallbackExecutor) -> None:
    total = 20_000
    served: list[int] = []
    after = Counter()
    for i in range(total):
        poll_reports.put(served.append, (i,), after)
    counts: list[int] = []

    def poller() -> None:
        n = 0
        while len(poll_reports):
            n += poll_reports.serve(0)
        counts.append(n)

    threads = [threading.Thread(target=poller) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 4)
    assert sorted(served) == list(range(total))
    assert sum(counts) == total
    assert after.value == total


def test_poll_mode_serve_forever_returns_once_closed(poll_reports: CallbackExecutor) -> None:
    result: list[int] = []
    waiter = threading.Thread(target=lambda: result.append(poll_reports.serve(None)))
    waiter.start()
    poll_reports.close()
    waiter.join(WAIT)
    assert not waiter.is_alive()
    assert result == [0]
    # Events queued after close are still served by poll() (close never loses a report).
    seen: list[Any] = []
    poll_reports.put(recorder(seen), ("after close",))
    assert poll_reports.serve(None) == 1


def test_wait_idle_follows_a_predicate_changed_by_after_hooks(poll_reports: CallbackExecutor) -> None:
    outstanding = [3]

    def release() -> None:
        outstanding[0] -= 1
        poll_reports.notify()

    assert poll_reports.wait_idle(lambda: outstanding[0] == 0, 0.05) is False
    for _ in range(3):
        poll_reports.put(lambda: None, (), release)
    server = threading.Thread(target=lambda: poll_reports.serve(WAIT))
    server.start()
    assert poll_reports.wait_idle(lambda: outstanding[0] == 0, WAIT) is True
    server.join(WAIT)


# --- background mode --------------------------------------------------------------------------------


def test_background_serves_on_its_own_thread_without_poll(bg_reports: CallbackExecutor) -> None:
    assert bg_reports.background
    done = threading.Event()
    seen: list[Any] = []
    after = Counter()
    for i in range(100):
        bg_reports.put(recorder(seen), (i,), after)
    bg_reports.put(done.set, ())
    assert done.wait(WAIT)
    assert [s[1] for s in seen] == list(range(100))
    assert {s[0] for s in seen} == {"test-reports"}
    assert after.value == 100


def test_background_callback_exception_is_logged_and_serving_goes_on(
    bg_reports: CallbackExecutor, caplog: pytest.LogCaptureFixture
) -> None:
    done = threading.Event()
    after = Counter()

    def boom() -> None:
        raise RuntimeError("callback exploded")

    with caplog.at_level(logging.ERROR, logger="kafkawire.producer"):
        bg_reports.put(boom, (), after)
        bg_reports.put(done.set, (), after)
        assert done.wait(WAIT)
        assert bg_reports.wait_idle(lambda: after.value == 2, WAIT)
    assert "callback exploded" in caplog.text


@pytest.mark.parametrize("exc", [SystemExit, KeyboardInterrupt, GeneratorExit])
def test_background_thread_survives_base_exceptions_from_callbacks(
    bg_reports: CallbackExecutor, exc: type[BaseException]
) -> None:
    done = threading.Event()
    after = Counter()

    def raise_it() -> None:
        raise exc

    bg_reports.put(raise_it, (), after)
    bg_reports.put(done.set, ())
    assert done.wait(WAIT), "the report thread died: later reports are never served"
    assert after.value == 1


def test_background_thread_survives_a_failing_after_hook(bg_reports: CallbackExecutor) -> None:
    done = threading.Event()

    def bad_after() -> None:
        raise RuntimeError("bookkeeping")

    bg_reports.put(lambda: None, (), bad_after)
    bg_reports.put(done.set, ())
    assert done.wait(WAIT)


def test_background_close_serves_everything_queued_first() -> None:
    reports = CallbackExecutor(background=True)
    gate = threading.Event()
    seen: list[int] = []
    after = Counter()
    reports.put(lambda: gate.wait(WAIT), ())  # hold the thread so the rest is queued at close
    for i in range(50):
        reports.put(seen.append, (i,), after)
    closer = threading.Thread(target=reports.close, args=(WAIT,))
    closer.start()
    gate.set()
    closer.join(WAIT)
    assert seen == list(range(50))
    assert after.value == 50


def test_background_put_after_the_thread_ended_runs_the_after_hook(caplog: pytest.LogCaptureFixture) -> None:
    reports = CallbackExecutor(background=True)
    reports.close(WAIT)
    called: list[str] = []
    after = Counter()
    with caplog.at_level(logging.WARNING, logger="kafkawire.producer"):
        reports.put(called.append, ("late",), after)
    assert called == []  # no thread is left to run user code on
    assert after.value == 1  # but the bookkeeping is never lost
    assert "after the producer closed" in caplog.text


def test_background_poll_waits_its_timeout_instead_of_spinning(bg_reports: CallbackExecutor) -> None:
    """``while True: producer.poll(1.0)`` written for confluent-kafka must not burn a CPU."""
    start = time.monotonic()
    assert bg_reports.serve(0.1) == 0
    assert time.monotonic() - start >= 0.1


def test_background_poll_forever_returns_on_close() -> None:
    reports = CallbackExecutor(background=True)
    result: list[int] = []
    waiter = threading.Thread(target=lambda: result.append(reports.serve(None)))
    waiter.start()
    reports.close(WAIT)
    waiter.join(WAIT)
    assert not waiter.is_alive()
    assert result == [0]


def test_background_poll_from_a_callback_does_not_block(bg_reports: CallbackExecutor) -> None:
    results: list[int] = []
    done = threading.Event()

    def reentrant() -> None:
        results.append(bg_reports.serve(None))  # would deadlock if it waited for its own thread
        done.set()

    bg_reports.put(reentrant, ())
    assert done.wait(WAIT)
    assert results == [0]


def test_on_report_thread_is_true_only_inside_background_callbacks(
    bg_reports: CallbackExecutor, poll_reports: CallbackExecutor
) -> None:
    inside: list[bool] = []
    done = threading.Event()
    bg_reports.put(lambda: (inside.append(bg_reports.on_report_thread), done.set()), ())
    assert done.wait(WAIT)
    assert inside == [True]
    assert not bg_reports.on_report_thread
    poll_reports.put(lambda: inside.append(poll_reports.on_report_thread), ())
    poll_reports.serve(0)
    assert inside == [True, False]


# --- handed over (AIOProducer's event loop serves) ---------------------------------------------------


@pytest.fixture
def handed(poll_reports: CallbackExecutor) -> tuple[CallbackExecutor, Counter]:
    """Poll-mode reports handed over to a taker that only counts its wake-ups (and serves by hand)."""
    wakes = Counter()
    poll_reports.hand_over(wakes)
    return poll_reports, wakes


def test_hand_over_wakes_once_per_empty_to_non_empty(handed: tuple[CallbackExecutor, Counter]) -> None:
    reports, wakes = handed
    seen: list[Any] = []
    assert reports.background  # the producer's poll()/flush()/close() must wait, not serve
    for i in range(3):
        reports.put(recorder(seen), (i,))
    assert wakes.value == 1
    assert reports.drain() == 3
    assert [s[1:] for s in seen] == [(0,), (1,), (2,)]
    assert seen[0][0] == threading.current_thread().name  # served by whoever drains
    reports.put(recorder(seen), (3,))
    assert wakes.value == 2
    assert reports.drain() == 1
    assert reports.drain() == 0  # nothing queued: returns at once


def test_hand_over_an_event_queued_during_a_drain_leaves_it_queued_without_a_wake(
    handed: tuple[CallbackExecutor, Counter],
) -> None:
    """A drain serves what was queued when it began; what it leaves behind is its taker's to see
    (``len(reports)``): the queue never went empty, so no wake-up comes for it."""
    reports, wakes = handed
    reports.put(lambda: reports.put(lambda: None, ()), ())
    reports.put(lambda: None, ())
    assert reports.drain() == 2
    assert (len(reports), wakes.value) == (1, 1)
    assert reports.drain() == 1
    assert len(reports) == 0


def test_hand_over_hook_runs_outside_the_lock(poll_reports: CallbackExecutor) -> None:
    """The hook may be slow (a syscall to wake a loop) while other threads keep queueing."""
    other_done: list[bool] = []

    def on_ready() -> None:
        putter = threading.Thread(target=poll_reports.put, args=(lambda: None, ()))
        putter.start()
        putter.join(WAIT)
        other_done.append(not putter.is_alive())

    poll_reports.hand_over(on_ready)
    poll_reports.put(lambda: None, ())
    assert other_done == [True]
    assert len(poll_reports) == 2


def test_hand_over_poll_elsewhere_waits_for_the_drain_and_does_not_serve(
    handed: tuple[CallbackExecutor, Counter],
) -> None:
    reports, _ = handed
    seen: list[Any] = []
    reports.put(recorder(seen), ("x",))
    result: list[int] = []
    waiter = threading.Thread(target=lambda: result.append(reports.serve(None)), name="poller")
    waiter.start()
    time.sleep(0.05)
    assert seen == [] and waiter.is_alive()
    assert reports.drain() == 1
    waiter.join(WAIT)
    assert result == [0]
    assert seen == [(threading.current_thread().name, "x")]


def test_hand_over_drain_raises_like_poll_and_keeps_the_rest(handed: tuple[CallbackExecutor, Counter]) -> None:
    reports, _ = handed
    after = Counter()

    def boom() -> None:
        raise RuntimeError("error_cb failed")

    reports.put(boom, (), after)
    reports.put(lambda: None, (), after)
    with pytest.raises(RuntimeError, match="error_cb failed"):
        reports.drain()
    assert (after.value, len(reports)) == (1, 1)
    assert reports.drain() == 1
    assert after.value == 2


def test_hand_over_wait_idle_follows_drains_on_another_thread(handed: tuple[CallbackExecutor, Counter]) -> None:
    """The producer's flush() on a worker thread while the loop drains."""
    reports, _ = handed
    outstanding = [200]

    def release() -> None:
        outstanding[0] -= 1
        if not outstanding[0]:
            reports.notify()

    for _ in range(200):
        reports.put(lambda: None, (), release)

    def drainer() -> None:
        while len(reports):
            reports.drain()

    server = threading.Thread(target=drainer)
    server.start()
    assert reports.wait_idle(lambda: outstanding[0] == 0, WAIT) is True
    server.join(WAIT)


# --- waits released by their event ----------------------------------------------------------------


def test_poll_mode_serve_until_is_released_by_notify_without_an_event(poll_reports: CallbackExecutor) -> None:
    """What serve() waits for may come with nothing to serve (a record with no callback reported):
    the notify that comes with it releases the wait, which does not end at its timeout."""
    done = threading.Event()

    def finish() -> None:
        done.set()
        poll_reports.notify()

    threading.Timer(0.01, finish).start()
    assert poll_reports.serve(WAIT, done.is_set) == 0
    assert done.is_set()
    assert poll_reports.timed_out == 0


def test_poll_mode_serve_until_returns_at_once_when_it_holds(poll_reports: CallbackExecutor) -> None:
    assert poll_reports.serve(None, lambda: True) == 0
    assert poll_reports.timed_out == 0


def test_wait_idle_is_released_by_notify(bg_reports: CallbackExecutor) -> None:
    done = threading.Event()

    def finish() -> None:
        done.set()
        bg_reports.notify()

    threading.Timer(0.01, finish).start()
    assert bg_reports.wait_idle(done.is_set, WAIT)
    assert bg_reports.timed_out == 0


def test_background_serve_returns_once_the_report_thread_served(bg_reports: CallbackExecutor) -> None:
    """poll(timeout) with a report thread: released by the first event served, not by its timeout."""
    seen: list[Any] = []
    threading.Timer(0.01, bg_reports.put, (recorder(seen), ("x",))).start()
    assert bg_reports.serve(WAIT) == 0
    assert [s[1] for s in seen] == ["x"]
    assert bg_reports.timed_out == 0


def test_a_wait_that_ends_at_its_timeout_is_counted(poll_reports: CallbackExecutor) -> None:
    assert poll_reports.serve(0.01) == 0
    assert poll_reports.timed_out == 1
