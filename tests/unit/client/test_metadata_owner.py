"""The metadata owner (client/metadata_owner.py) on a virtual clock: what it sends, whom it tells.

Requests go to a recording ``send`` that answers after ``RTT`` virtual seconds; no sockets."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kafkawire.client.metadata_owner import MetadataOwner
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.metadata_refresh import Intervals, Pace, Recovery
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.error_codes import REBOOTSTRAP_REQUIRED
from tests.unit.stand_in import VirtualEngine

RTT = 0.05
INTERVALS = Intervals(fast=0.1, periodic=10.0, backoff_ms=100, backoff_max_ms=1000)


class Recorder:
    def __init__(self, intervals: Intervals = INTERVALS, fail: bool = False) -> None:
        self.engine = VirtualEngine()
        self.sent: list[tuple[float, list[str] | None, bool]] = []  # (at, topics, auto_create)
        self.lanes: list[int | None] = []  # each request's lane
        self.folded: list[bool] = []  # each answer's ``full``
        self.fail = fail
        self.known = ["known"]
        self.owner = MetadataOwner(self.engine, self.send, self.fold, lambda: self.known, intervals)

    def send(self, body: Any, callback: Any, timeout: float | None, lane: int | None) -> None:
        request = body(12)
        topics = None if request["topics"] is None else [t["name"] for t in request["topics"]]
        self.sent.append((self.engine.now(), topics, request["allow_auto_topic_creation"]))
        self.lanes.append(lane)
        if self.fail:
            error = KafkaError(KafkaError._TRANSPORT)
            self.engine.call_later(RTT, lambda: callback(None, error))
        else:
            self.engine.call_later(RTT, lambda: callback(Struct(), None))

    def fold(self, response: Struct, full: bool) -> None:
        self.folded.append(full)


def test_asks_of_one_turn_and_asks_a_request_in_flight_covers_share_one_request() -> None:
    r = Recorder()
    told: list[str] = []
    for name, topics in (("a", ["x"]), ("b", ["y"]), ("c", None)):
        r.owner.ask(topics, lambda _r, _e, name=name: told.append(name))  # type: ignore[misc]
    r.engine.call_later(RTT / 2, lambda: r.owner.ask(["z"], lambda _r, _e: told.append("in flight")))
    r.engine.run()
    assert [(topics, auto) for _at, topics, auto in r.sent] == [(None, False)]
    assert r.folded == [True]  # every topic was asked for: the picture drops what the answer lacks
    assert told == ["a", "b", "c", "in flight"]


def test_subscribers_hear_every_new_picture_and_not_failures() -> None:
    r = Recorder()
    pictures: list[int] = []
    r.owner.subscribe(lambda: pictures.append(len(r.folded)))
    r.owner.ask(["x"])
    r.engine.run()
    r.fail = True
    r.owner.ask(["x"])
    r.engine.run()
    assert pictures == [1]


def test_a_guard_holds_its_lock_over_the_fold_and_its_step_and_fails_nothing_else() -> None:
    """A reader under the guard's lock sees the old picture or the new one with the step done, never
    the new one alone (the producer's records waiting for metadata are placed in that step)."""
    r = Recorder()
    lock = threading.RLock()
    seen: list[tuple[str, bool, int]] = []
    r.fold = lambda _response, _full: seen.append(("fold", lock._is_owned(), len(seen)))  # type: ignore[attr-defined, method-assign]
    r.owner = MetadataOwner(r.engine, r.send, r.fold, lambda: r.known, INTERVALS)
    r.owner.guard(lock, lambda: seen.append(("step", lock._is_owned(), len(seen))))  # type: ignore[attr-defined]
    r.owner.subscribe(lambda: seen.append(("subscriber", lock._is_owned(), len(seen))))  # type: ignore[attr-defined]
    r.owner.ask(["x"])
    r.engine.run()
    assert seen == [("fold", True, 0), ("step", True, 1), ("subscriber", False, 2)]


def test_an_ask_for_a_lane_is_sent_on_that_lane_and_no_other_ask_rides_on_it() -> None:
    r = Recorder()
    told: list[str] = []
    r.owner.ask(["x"], lambda _r, _e: told.append("anywhere"))
    r.owner.ask(["x"], lambda _r, _e: told.append("leader"), lane=3)
    r.engine.run()
    assert sorted(zip(r.lanes, [topics for _at, topics, _auto in r.sent], strict=True), key=str) == [
        (3, ["x"]),
        (None, ["x"]),
    ]
    assert sorted(told) == ["anywhere", "leader"]
    assert r.folded == [False, False]  # each answer folds into the one picture


def test_a_fast_ask_right_after_a_request_waits_the_fast_interval() -> None:
    r = Recorder()
    r.owner.ask(["x"])
    r.engine.run()
    r.owner.ask(["x"], pace=Pace.FAST)
    r.engine.run()
    (first, _, _), (second, _, _) = r.sent
    assert second - first >= INTERVALS.fast


def test_keep_fresh_asks_for_the_known_topics_at_once_then_every_interval() -> None:
    """As librdkafka: a first request at once (on connecting), then one each interval after the
    last answer (measured on its mock cluster: tests/broker/metadata/test_periodic_refresh.py)."""
    r = Recorder()
    r.owner.keep_fresh(auto_create=True)
    r.engine.call_later(35.0, r.owner.close)
    r.engine.run(limit=60.0)
    assert [at for at, _, _ in r.sent] == pytest.approx([0.0, 10.0 + RTT, 20.0 + 2 * RTT, 30.0 + 3 * RTT])
    assert {(tuple(topics or ()), auto) for _, topics, auto in r.sent} == {(("known",), True)}


def test_with_no_topic_known_the_brokers_alone_are_refreshed_at_most_every_10_s() -> None:
    r = Recorder(Intervals(fast=0.1, periodic=1.0, backoff_ms=100, backoff_max_ms=1000))
    r.known = []
    r.owner.keep_fresh()
    r.engine.call_later(25.0, r.owner.close)
    r.engine.run(limit=60.0)
    # the first at once, the first periodic one an interval later, then every 10 s
    assert [at for at, _, _ in r.sent] == pytest.approx([0.0, 1.0 + RTT, 11.0 + RTT, 21.0 + RTT])
    assert {None if topics is None else tuple(topics) for _, topics, _ in r.sent} == {()}  # brokers only


def test_a_closed_owner_sends_nothing_and_tells_askers_at_once() -> None:
    r = Recorder()
    r.owner.close()
    errors: list[KafkaError | None] = []
    r.owner.ask(["x"], lambda _r, e: errors.append(e))
    r.engine.run()
    assert r.sent == []
    assert [e.code() if e else None for e in errors] == [KafkaError._DESTROY]


class Recovering:
    """An owner with metadata recovery on; ``answers`` are given in turn (None: never answered)."""

    def __init__(self, answers: list[Struct | None], strategy: bool = True) -> None:
        self.engine = VirtualEngine()
        self.answers = answers
        self.sent: list[float] = []
        self.lanes: list[int | None] = []
        self.silent: list[Any] = []  # callbacks of the requests never answered
        self.rebootstraps: list[float] = []
        self.owner = MetadataOwner(
            self.engine,
            self.send,
            lambda _r, _f: None,
            lambda: ["known"],
            INTERVALS,
            recovery=Recovery(strategy, 5.0),
            rebootstrap=lambda: self.rebootstraps.append(self.engine.now()),
        )

    def send(self, body: Any, callback: Any, timeout: float | None, lane: int | None) -> None:
        self.sent.append(self.engine.now())
        self.lanes.append(lane)
        answer = self.answers.pop(0) if self.answers else Struct()
        if answer is None:
            self.silent.append(callback)
        else:
            self.engine.call_later(RTT, lambda: callback(answer, None))


def test_no_answer_within_the_trigger_interval_rebootstraps_and_sends_the_request_again() -> None:
    r = Recovering([None])
    told: list[Any] = []
    r.owner.ask(["x"], lambda resp, err: told.append(err))
    r.engine.run()
    assert r.rebootstraps == [pytest.approx(5.0)]
    assert r.sent[:2] == [0.0, pytest.approx(5.0)]  # the same request, through the bootstrap servers
    assert told == [None]  # answered by the copy
    r.silent[0](None, KafkaError(KafkaError._TIMED_OUT))  # the first copy's late failure changes nothing
    assert told == [None]


def test_a_rebootstrap_sends_a_lane_request_again_on_any_connection() -> None:
    """The lane's broker may be the one lost: the copy goes wherever the client picks."""
    r = Recovering([None])
    told: list[Any] = []
    r.owner.ask(["x"], lambda resp, err: told.append(err), lane=2)
    r.engine.run()
    assert r.rebootstraps == [pytest.approx(5.0)]
    assert r.lanes[:2] == [2, None]
    assert told == [None]


def test_rebootstrap_required_in_an_answer_rebootstraps_at_once() -> None:
    r = Recovering([Struct(error_code=REBOOTSTRAP_REQUIRED)])
    told: list[Any] = []
    r.owner.ask(["x"], lambda resp, err: told.append(err and err.code()))
    r.engine.run()
    assert told == [REBOOTSTRAP_REQUIRED]  # nothing of that answer is folded in
    assert r.rebootstraps == [pytest.approx(RTT)]
    assert len(r.sent) == 2  # then the brokers and known topics are asked for


def test_strategy_none_never_rebootstraps() -> None:
    r = Recovering([Struct(error_code=REBOOTSTRAP_REQUIRED), None], strategy=False)
    r.owner.ask(["x"])
    r.engine.run()
    r.owner.ask(["y"])  # never answered: no clock runs either
    r.engine.run()
    r.owner.all_brokers_down()
    assert r.rebootstraps == [] and len(r.sent) == 2
