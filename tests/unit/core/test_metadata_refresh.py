"""The metadata refresh schedule (core/metadata_refresh.py): coalescing, paces, backoff; no IO."""

from __future__ import annotations

import math

import pytest

from kafkawire.core.backoff import RetryBackoff
from kafkawire.core.metadata_refresh import Intervals, Pace, Recovery, RefreshSchedule
from kafkawire.protocol.error_codes import REBOOTSTRAP_REQUIRED, UNKNOWN_SERVER_ERROR

INTERVALS = Intervals(fast=0.1, periodic=300.0, backoff_ms=100, backoff_max_ms=1000)


def schedule(**kw: object) -> RefreshSchedule[str]:
    return RefreshSchedule(Intervals(**{**INTERVALS.__dict__, **kw}))  # type: ignore[arg-type]


def test_asks_waiting_together_leave_as_one_request_with_every_topic_and_waiter() -> None:
    s = schedule()
    assert s.ask(["a"], Pace.NOW, waiter="w1")
    assert s.ask(["b", "a"], Pace.FAST, waiter="w2")
    assert s.ask(["c"], Pace.PERIODIC, waiter="w1")  # a waiter is told once
    request = s.take(0.0)
    assert request is not None
    assert request.topic_list() == ["a", "b", "c"]
    assert request.waiters == ["w1", "w2"]
    assert request.pace is Pace.NOW  # the most urgent ask decides
    assert s.take(0.0) is None
    assert s.answered(request, 0.05, ok=True) == ["w1", "w2"]
    assert s.take(1.0) is None and s.due_at() is None


def test_an_ask_for_every_topic_swallows_named_ones() -> None:
    s = schedule()
    s.ask(["a"], Pace.NOW)
    s.ask(None, Pace.NOW)
    s.ask([], Pace.NOW)  # brokers only
    request = s.take(0.0)
    assert request is not None and request.topics is None and request.topic_list() is None


def test_an_ask_covered_by_a_request_in_flight_joins_it() -> None:
    s = schedule()
    s.ask(["a", "b"], Pace.NOW, waiter="first")
    request = s.take(0.0)
    assert request is not None
    assert not s.ask(["a"], Pace.NOW, waiter="second")  # joined: nothing new waits
    assert not s.ask(["b"], Pace.FAST, waiter="third")
    assert not s.waiting()
    assert s.ask(["c"], Pace.NOW, waiter="fourth")  # not covered: waits for its own request
    assert s.answered(request, 0.01, ok=True) == ["first", "second", "third"]


def test_auto_creation_is_not_asked_for_topics_that_did_not_ask_for_it() -> None:
    s = schedule()
    s.ask(["a"], Pace.NOW)
    plain = s.take(0.0)
    assert plain is not None and not plain.auto_create
    assert s.ask(["a"], Pace.NOW, auto_create=True)  # the request in flight would not create it
    s.ask(["b"], Pace.NOW)
    first, second = s.take(0.0), s.take(0.0)
    assert first is not None and second is not None
    assert (first.auto_create, first.topic_list()) == (False, ["b"])
    assert (second.auto_create, second.topic_list()) == (True, ["a"])


def test_an_ask_for_a_lane_neither_joins_nor_merges_with_asks_for_any_connection() -> None:
    """The group leader's refresh goes on its coordinator's lane: a request in flight elsewhere that
    covers its topics may be waiting behind a Fetch long-poll, so it does not join it, and no other
    ask rides on the lane's request."""
    s = schedule()
    s.ask(["a", "b"], Pace.NOW, waiter="anywhere")
    shared = s.take(0.0)
    assert shared is not None and shared.lane is None
    assert s.ask(["a"], Pace.NOW, waiter="leader", lane=7)  # covered elsewhere, yet waits for its own
    assert s.ask(["c"], Pace.NOW, waiter="other")  # not merged with the leader's
    assert s.ask(["b"], Pace.NOW, waiter="leader again", lane=7)
    first, second = s.take(0.0), s.take(0.0)
    assert first is not None and second is not None and s.take(0.0) is None
    by_lane = {r.lane: r for r in (first, second)}
    assert (by_lane[7].topic_list(), by_lane[7].waiters) == (["a", "b"], ["leader", "leader again"])
    assert (by_lane[None].topic_list(), by_lane[None].waiters) == (["c"], ["other"])
    assert not s.ask(["a"], Pace.NOW, waiter="leader's follower", lane=7)  # the lane's flight covers it
    assert not s.ask(["b"], Pace.NOW, waiter="elsewhere")  # the first shared flight covers it
    assert s.ask(["b"], Pace.NOW, waiter="another lane", lane=8)
    assert s.answered(by_lane[7], 0.01, ok=True) == ["leader", "leader again", "leader's follower"]
    assert s.answered(shared, 0.01, ok=True) == ["anywhere", "elsewhere"]


def test_a_fast_ask_waits_the_fast_interval_after_the_last_request() -> None:
    s = schedule(fast=0.5)
    s.ask(["a"], Pace.NOW)
    request = s.take(10.0)
    assert request is not None
    s.answered(request, 10.1, ok=True)
    s.ask(["a"], Pace.FAST, waiter="leader unknown")
    assert s.due_at() == pytest.approx(10.5)
    assert s.take(10.2) is None  # asked sooner than the interval: it waits
    later = s.take(10.5)
    assert later is not None and later.waiters == ["leader unknown"]


def test_the_first_fast_ask_leaves_at_once() -> None:
    s = schedule()
    s.ask(["a"], Pace.FAST)
    assert s.due_at() == -math.inf
    assert s.take(0.0) is not None


def test_a_now_ask_is_not_held_by_the_fast_interval() -> None:
    s = schedule(fast=5.0)
    s.ask(["a"], Pace.NOW)
    first = s.take(0.0)
    assert first is not None
    s.answered(first, 0.01, ok=True)
    s.ask(["b"], Pace.NOW)
    assert s.take(0.02) is not None


def test_periodic_asks_wait_the_refresh_interval_after_the_last_answer() -> None:
    s = schedule(periodic=60.0)
    s.ask(["a"], Pace.NOW)
    request = s.take(0.0)
    assert request is not None
    s.answered(request, 1.0, ok=True)
    s.ask(["a"], Pace.PERIODIC)
    assert s.due_at() == pytest.approx(61.0)
    assert s.take(30.0) is None
    assert s.take(61.0) is not None


def test_a_periodic_ask_leaves_with_a_sooner_one() -> None:
    s = schedule(periodic=60.0)
    first = (s.ask(["a"], Pace.NOW), s.take(0.0))[1]
    assert first is not None
    s.answered(first, 0.0, ok=True)
    s.ask(["known"], Pace.PERIODIC)
    s.ask(["new"], Pace.FAST)
    request = s.take(0.2)
    assert request is not None and request.topic_list() == ["known", "new"]


def test_background_asks_wait_while_a_background_request_is_in_flight() -> None:
    s = schedule()
    s.ask(["a"], Pace.FAST)
    background = s.take(0.0)
    assert background is not None
    s.ask(["b"], Pace.FAST)
    assert s.due_at() is None  # decided once the answer is in
    assert s.take(5.0) is None
    s.ask(["c"], Pace.NOW)  # someone waiting does not wait behind a background request
    now = s.take(5.0)
    assert now is not None and now.topic_list() == ["b", "c"]


def test_failed_requests_back_background_asks_off_exponentially() -> None:
    s = schedule(fast=0.01, backoff_ms=100, backoff_max_ms=400)
    t = 0.0
    waits = []
    for _ in range(4):
        s.ask(["a"], Pace.FAST)
        request = s.take(t)
        assert request is not None
        s.answered(request, t, ok=False, jitter=0.5)  # 0.5: no spread
        s.ask(["a"], Pace.FAST)
        due = s.due_at()
        assert due is not None and s.take(due - 0.001) is None
        waits.append(round(due - t, 3))
        t = due
    assert waits == [0.1, 0.2, 0.4, 0.4]  # retry.backoff.ms doubling up to retry.backoff.max.ms
    request = s.take(t)
    assert request is not None
    s.answered(request, t, ok=True)
    s.ask(["a"], Pace.FAST)
    assert s.due_at() == pytest.approx(t + 0.01)  # answered again: the fast pace


def test_failures_do_not_hold_a_caller_that_waits_on_the_answer() -> None:
    s = schedule(backoff_ms=10_000, backoff_max_ms=10_000)
    s.ask(["a"], Pace.NOW)
    request = s.take(0.0)
    assert request is not None
    s.answered(request, 0.0, ok=False)
    s.ask(["a"], Pace.NOW)
    assert s.take(0.0) is not None


def test_timeouts_merge_to_the_longest_and_the_default_wins() -> None:
    s = schedule()
    s.ask(["a"], Pace.NOW, timeout=2.0)
    s.ask(["b"], Pace.NOW, timeout=5.0)
    request = s.take(0.0)
    assert request is not None and request.timeout == 5.0
    s.ask(["c"], Pace.NOW, timeout=5.0)
    s.ask(["d"], Pace.NOW)
    request = s.take(0.0)
    assert request is not None and request.timeout is None


def test_periodic_topics_follow_sparse() -> None:
    assert schedule().periodic_topics(["a", "b"]) == frozenset({"a", "b"})
    assert schedule(sparse=False).periodic_topics(["a", "b"]) is None


def test_intervals_from_librdkafka_options() -> None:
    config = {
        "metadata.max.age.ms": 900_000,
        "topic.metadata.refresh.interval.ms": 300_000,
        "topic.metadata.refresh.fast.interval.ms": 100,
        "topic.metadata.refresh.sparse": True,
        "retry.backoff.ms": 100,
        "retry.backoff.max.ms": 1000,
    }
    assert Intervals.from_config(config) == Intervals(0.1, 300.0, 100, 1000, True)
    # Periodic refresh off: the cache's time to live still sends the picture to be renewed.
    assert Intervals.from_config({**config, "topic.metadata.refresh.interval.ms": -1}).periodic == 900.0
    assert Intervals.from_config({**config, "metadata.max.age.ms": 1000}).periodic == 1.0


def test_retry_backoff_doubles_to_its_cap_and_resets() -> None:
    b = RetryBackoff(100, 300)
    assert [b.next(0.5) for _ in range(4)] == pytest.approx([0.1, 0.2, 0.3, 0.3])
    b.reset()
    assert b.next(0.5) == pytest.approx(0.1)


def test_recovery_clock_starts_at_the_first_request_after_an_answer() -> None:
    r = Recovery(True, 300.0)
    r.sent(10.0, full=False)
    r.sent(50.0, full=False)  # a later request does not push the deadline back
    assert r.deadline == 310.0
    assert not r.expired(309.9)
    assert r.expired(310.0)
    assert r.deadline is None  # the next request starts it again
    r.sent(400.0, full=False)
    r.answered()
    assert r.deadline is None and not r.expired(10_000.0)


def test_recovery_clock_ignores_requests_for_every_topic() -> None:
    r = Recovery(True, 1.0)
    r.sent(0.0, full=True)
    assert r.deadline is None


def test_recovery_triggers_on_all_brokers_down_and_rebootstrap_required() -> None:
    r = Recovery(True, 300.0)
    assert r.on_all_brokers_down()
    assert r.on_answer_error(REBOOTSTRAP_REQUIRED)
    assert not r.on_answer_error(UNKNOWN_SERVER_ERROR)


def test_recovery_none_never_rebootstraps() -> None:
    r = Recovery.from_config({"metadata.recovery.strategy": "none", "metadata.recovery.rebootstrap.trigger.ms": 5})
    r.sent(0.0, full=False)
    assert r.deadline is None and not r.expired(100.0)
    assert not r.on_all_brokers_down() and not r.on_answer_error(REBOOTSTRAP_REQUIRED)
    r = Recovery.from_config(
        {"metadata.recovery.strategy": "rebootstrap", "metadata.recovery.rebootstrap.trigger.ms": 5}
    )
    assert r.enabled and r.trigger == 0.005
