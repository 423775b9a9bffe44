"""The connection's life table (core/connection_life.py), transition by transition, and the timeout
scan's rule (core/connection.py judged_at): no sockets, no clock."""

from __future__ import annotations

import pytest

from kafkawire.core.connection import SCAN_INTERVAL, judged_at
from kafkawire.core.connection_life import (
    FAILURES,
    LEAVING,
    LIVE,
    SEEN,
    TRANSITIONS,
    UP,
    ConnectionState,
    Event,
    Life,
    LifeAction,
    LinkState,
    QueueRule,
    queue_rule,
)
from kafkawire.core.kafka_error import KafkaError

A = LifeAction
BROKEN = KafkaError(KafkaError._TRANSPORT, "reset by peer")


def life_in(state: LinkState, **flags: object) -> Life:
    life = Life(state=state)
    for name, value in flags.items():
        setattr(life, name, value)
    if state is LinkState.READY:
        life.answered = 0
    return life


def test_the_way_up_resolves_opens_handshakes_and_is_ready_with_its_failures_forgotten() -> None:
    life = Life(failures=3, wanted=True, last_error=BROKEN)
    assert life.handle(Event.CONNECT) == (A.RESOLVE,) and life.state is LinkState.CONNECTING
    assert life.handle(Event.RESOLVED) == (A.OPEN_TRANSPORT,) and life.state is LinkState.CONNECTING
    assert life.handle(Event.TRANSPORT_UP) == (A.START_HANDSHAKE,) and life.state is LinkState.NEGOTIATING
    assert life.handle(Event.HANDSHAKE_DONE) == (A.NOTIFY, A.PUMP) and life.state is LinkState.READY
    assert (life.failures, life.wanted, life.last_error, life.answered) == (0, False, None, 0)
    assert life.seen is ConnectionState.READY and not life.proven


def test_the_first_answers_prove_the_connection_once() -> None:
    life = life_in(LinkState.READY, last_mismatch="tls?")
    assert life.handle(Event.ANSWERS_READ, count=0) == ()
    assert life.handle(Event.ANSWERS_READ, count=2) == (A.NOTIFY,)
    assert life.proven and life.answered == 2 and life.last_mismatch is None
    assert life.handle(Event.ANSWERS_READ, count=1) == () and life.answered == 3


# A request timing out unsent counts from the handshake on (`UP`); every other failure from the connect.
LIVE_FAILURES = [(s, f) for s in LIVE for f in FAILURES if f is not Event.QUEUED_TIMED_OUT or s in UP]


@pytest.mark.parametrize(("state", "failure"), LIVE_FAILURES)
def test_every_failure_of_a_live_connection_tears_it_down_and_settles(state: LinkState, failure: Event) -> None:
    """A refused connect, a reset, a silent peer (a request's deadline in flight or queued, the
    setup deadline), a bad answer, a refused handshake: all alike, only READY's counting as a
    ready connection's."""
    life = life_in(state, proven=state is LinkState.READY)
    actions = life.handle(failure, error=BROKEN, lasting=True)
    assert actions == (A.TEARDOWN, A.FAIL_QUEUED, A.NOTIFY, A.SETTLE)
    assert life.state is LinkState.FAILING and life.seen is ConnectionState.DISCONNECTED
    assert (life.failures, life.last_error, life.last_error_lasting) == (1, BROKEN, True)
    assert life.failed_when_ready is (state is LinkState.READY)
    assert not life.proven and life.answered is None
    assert life.backing_off  # a retry queued by a failed request's callback waits for the backoff


@pytest.mark.parametrize("state", [s for s in LinkState if s not in LIVE])
@pytest.mark.parametrize("failure", FAILURES)
def test_a_failure_heard_when_not_live_changes_nothing(state: LinkState, failure: Event) -> None:
    life = life_in(state)
    assert life.handle(failure, error=BROKEN) == ()
    assert life.state is state and life.failures == 0 and life.last_error is None


@pytest.mark.parametrize(
    ("queued", "wanted", "kept", "to", "actions"),
    [
        (True, False, False, LinkState.BACKING_OFF, (A.ARM_BACKOFF,)),
        (False, True, False, LinkState.BACKING_OFF, (A.ARM_BACKOFF,)),
        (False, False, True, LinkState.BACKING_OFF, (A.ARM_BACKOFF,)),
        (False, False, False, LinkState.DISCONNECTED, ()),
    ],
)
def test_a_failed_connection_backs_off_when_wanted_else_rests(
    queued: bool, wanted: bool, kept: bool, to: LinkState, actions: tuple[LifeAction, ...]
) -> None:
    life = life_in(LinkState.FAILING, wanted=wanted, kept=kept)
    assert life.settled(queued) == actions and life.state is to


def test_the_backoff_over_reconnects_only_what_is_still_wanted() -> None:
    life = life_in(LinkState.BACKING_OFF)
    assert life.backoff_over(queued=False) == () and life.state is LinkState.DISCONNECTED
    life = life_in(LinkState.BACKING_OFF)
    assert life.backoff_over(queued=True) == (A.RESOLVE,) and life.state is LinkState.CONNECTING


@pytest.mark.parametrize("state", [LinkState.BACKING_OFF, LinkState.FAILING, LinkState.RESTARTING])
def test_a_connect_or_keep_asked_while_backing_off_or_settling_waits(state: LinkState) -> None:
    life = life_in(state)
    assert life.handle(Event.CONNECT) == () and life.handle(Event.KEPT) == ()
    assert life.state is state and life.kept and life.backing_off


def test_keep_connects_a_resting_connection_and_retire_lets_it_go() -> None:
    life = Life()
    assert life.handle(Event.KEPT) == (A.RESOLVE,) and life.kept and life.state is LinkState.CONNECTING
    assert life.handle(Event.RETIRED) == () and life.retired and not life.kept
    assert life.handle(Event.UNRETIRED) == () and not life.retired
    life.handle(Event.KEPT)
    assert life.handle(Event.UNKEPT) == () and not life.kept


def test_an_idle_connection_restarts_without_backoff_only_when_kept() -> None:
    life = life_in(LinkState.READY)
    assert life.handle(Event.IDLE_TIMED_OUT) == (A.TEARDOWN, A.SETTLE) and life.state is LinkState.RESTARTING
    assert life.failures == 0 and life.last_error is None  # not a failure
    assert life.settled(queued=False) == () and life.state is LinkState.DISCONNECTED
    life = life_in(LinkState.READY, kept=True)
    life.handle(Event.IDLE_TIMED_OUT)
    assert life.settled(queued=False) == (A.RESOLVE,) and life.state is LinkState.CONNECTING


@pytest.mark.parametrize("state", [LinkState.DISCONNECTED, LinkState.BACKING_OFF, *LIVE])
def test_a_move_forgets_the_failures_and_reconnects_at_once_when_wanted(state: LinkState) -> None:
    life = life_in(state, failures=4, last_error=BROKEN)
    assert life.handle(Event.MOVED, error=BROKEN) == (A.TEARDOWN, A.SETTLE)
    assert (life.state, life.failures, life.last_error) == (LinkState.RESTARTING, 0, None)
    assert life.settled(queued=True) == (A.RESOLVE,) and life.state is LinkState.CONNECTING


@pytest.mark.parametrize("state", [s for s in LinkState if s is not LinkState.CLOSED])
def test_close_is_final_from_every_state(state: LinkState) -> None:
    life = life_in(state)
    assert life.handle(Event.CLOSE) == (A.TEARDOWN, A.FAIL_ALL_QUEUED) and life.state is LinkState.CLOSED
    for event in Event:
        assert life.handle(event, error=BROKEN) == () and life.state is LinkState.CLOSED


def test_a_request_timed_out_unsent_fails_a_connection_up_but_not_one_connecting() -> None:
    """Issue 53, as librdkafka's timeout scan (socket.max.fails 1, from its UP state on): a request
    that waited out its deadline behind others on a slow or dead connection takes the connection
    down, so what waits with it goes again on a new one; while connecting, the setup deadline rules."""
    for state in UP:
        life = life_in(state)
        assert life.handle(Event.QUEUED_TIMED_OUT, error=BROKEN) == (A.TEARDOWN, A.FAIL_QUEUED, A.NOTIFY, A.SETTLE)
        assert life.state is LinkState.FAILING and life.failures == 1
    life = life_in(LinkState.CONNECTING)
    assert life.handle(Event.QUEUED_TIMED_OUT, error=BROKEN) == ()
    assert life.state is LinkState.CONNECTING and life.failures == 0 and life.last_error is None


def test_the_table_moves_only_live_connections_up_and_only_failures_into_failing() -> None:
    for (state, event), move in TRANSITIONS.items():
        assert state is not LinkState.CLOSED
        if move.to is LinkState.FAILING:
            assert event in FAILURES and state in LIVE
        if move.to is LinkState.READY:
            assert state in (LinkState.NEGOTIATING, LinkState.READY)
        if LifeAction.TEARDOWN in move.actions:
            assert move.to in (LinkState.FAILING, LinkState.RESTARTING, LinkState.CLOSED)
    assert set(SEEN) == set(LinkState)


def test_wants_and_trying_ask_the_same_question_once() -> None:
    assert not Life().wants(False) and Life().wants(True)
    assert Life(wanted=True).wants(False) and Life(kept=True).wants(False)
    assert Life(state=LinkState.BACKING_OFF).trying(False)
    assert Life(state=LinkState.CONNECTING).trying(True) and not Life(state=LinkState.CONNECTING).trying(False)
    assert not life_in(LinkState.READY, kept=True).trying(True)
    assert not Life(state=LinkState.CLOSED).trying(True)


def test_a_failed_over_request_wants_its_broker_back() -> None:
    life = Life(state=LinkState.BACKING_OFF)
    assert life.handle(Event.WANTED) == () and life.wanted and life.state is LinkState.BACKING_OFF


@pytest.mark.parametrize(
    ("code", "lasting", "named", "rule"),
    [
        (KafkaError._RESOLVE, False, True, QueueRule.HAND_BACK),  # a stale advertised name: route again
        (KafkaError._RESOLVE, False, False, QueueRule.FAIL_FAST),  # a bootstrap name
        (KafkaError._SSL, False, True, QueueRule.FAIL_FAST),
        (KafkaError._AUTHENTICATION, False, False, QueueRule.FAIL_FAST),
        (KafkaError._TRANSPORT, True, True, QueueRule.FAIL_FAST),  # a security.protocol mismatch
        (KafkaError._TRANSPORT, False, True, QueueRule.FAIL_OVER),
        (KafkaError._TIMED_OUT, False, False, QueueRule.FAIL_OVER),
        (KafkaError._BAD_MSG, False, True, QueueRule.FAIL_OVER),
    ],
)
def test_which_queued_requests_a_failure_fails(code: int, lasting: bool, named: bool, rule: QueueRule) -> None:
    assert queue_rule(code, lasting=lasting, named=named) is rule


def test_what_each_queue_rule_picks() -> None:
    flags = [(fast, over) for fast in (False, True) for over in (False, True)]
    picks = {rule: [f for f in flags if LEAVING[rule][0](*f)] for rule in QueueRule}
    assert picks[QueueRule.HAND_BACK] == flags and LEAVING[QueueRule.HAND_BACK][1]
    assert picks[QueueRule.FAIL_FAST] == [(False, True), (True, False), (True, True)]
    assert not LEAVING[QueueRule.FAIL_FAST][1]  # the failure itself: the caller hears why
    assert picks[QueueRule.FAIL_OVER] == [(False, True), (True, True)] and LEAVING[QueueRule.FAIL_OVER][1]


def test_a_failure_is_reported_unless_retired_or_a_slow_ready_broker() -> None:
    assert not Life().reported()
    assert Life(last_error=BROKEN).reported()
    assert not Life(last_error=BROKEN, retired=True).reported()
    timed_out = KafkaError(KafkaError._TIMED_OUT, "Metadata timed out")
    assert not Life(last_error=timed_out, failed_when_ready=True).reported()
    assert Life(last_error=timed_out, failed_when_ready=False).reported()


def test_an_idle_deadline_only_for_a_ready_connection_with_nothing_to_do() -> None:
    ready = life_in(LinkState.READY)
    assert ready.idle_deadline(10.0, 540.0, busy=False) == 550.0
    assert ready.idle_deadline(10.0, 540.0, busy=True) is None
    assert ready.idle_deadline(10.0, 0.0, busy=False) is None  # connections.max.idle.ms=0: never
    assert life_in(LinkState.READY, retired=True).idle_deadline(10.0, 0.0, busy=False) == 10.0
    assert life_in(LinkState.CONNECTING).idle_deadline(10.0, 540.0, busy=False) is None


def test_a_deadline_is_judged_at_the_first_scan_tick_a_whole_interval_after_sending() -> None:
    """librdkafka's scan: a 10 ms timeout is not judged before the next second's scan, so a slow
    answer (30 ms) is never late; a long one is judged at the first tick at or past it."""
    assert SCAN_INTERVAL == 1.0
    assert judged_at(5.01, 5.0, 0.0) == 6.0
    assert judged_at(5.01, 5.0, 0.25) == 6.25
    assert judged_at(35.0, 5.0, 0.0) == 35.0  # on a tick
    assert judged_at(35.2, 5.0, 0.0) == 36.0
    assert judged_at(35.2, 5.0, 0.5) == 35.5
    for since in (0.0, 0.3, 7.77, 1e6 + 0.1):
        for timeout in (0.001, 0.01, 0.999, 1.0, 2.5, 30.0):
            tick = judged_at(since + timeout, since, 0.125)
            assert tick >= since + max(timeout, SCAN_INTERVAL) - 1e-6
            assert tick < since + max(timeout, SCAN_INTERVAL) + SCAN_INTERVAL
            assert abs((tick - 0.125) / SCAN_INTERVAL - round((tick - 0.125) / SCAN_INTERVAL)) < 1e-6
