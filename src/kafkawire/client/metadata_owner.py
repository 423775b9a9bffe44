"""The one owner of a client's metadata refreshes: every part asks here, one request goes out.

Runs on the IO thread. `ask` records what a caller wants in `core.metadata_refresh.RefreshSchedule`,
which decides when a request leaves; asks made in one turn of the IO loop leave together, and an ask
that a request in flight covers waits for that request's answer. Each answer is folded into the
cluster picture (``fold``, under the guards' locks with their steps, `guard`), then the askers are
told, then the subscribers (`subscribe`). With
`keep_fresh` the owner also asks again for the known topics (or every topic) every
``topic.metadata.refresh.interval.ms``.

It also runs the metadata recovery `core.metadata_refresh.Recovery` decides: ``rebootstrap`` (the
client's) makes the client connect to ``bootstrap.servers`` again, then a refresh is asked for.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, ExitStack
from typing import Any

from ..base.debug import MAIN, OFF, Debug
from ..core.kafka_error import KafkaError
from ..core.metadata import request_body
from ..core.metadata_refresh import Intervals, Pace, Recovery, RefreshSchedule, Request
from ..io.io_engine import Timer, guarded
from ..io.queued import Body, Callback
from ..protocol.codec import Struct
from .driver import Timers

# How a Metadata request leaves: (body, callback, timeout, lane: the broker whose coordinator lane
# carries it, None: the connection the client picks); how an answer enters the picture: (answer, full).
Send = Callable[[Body, Callback, float | None, int | None], None]
Fold = Callable[[Struct, bool], None]


class MetadataOwner:
    def __init__(
        self,
        timers: Timers,
        send: Send,
        fold: Fold,
        known: Callable[[], Iterable[str]],
        intervals: Intervals,
        debug: Debug = OFF,
        *,
        recovery: Recovery | None = None,
        rebootstrap: Callable[[], None] | None = None,
    ) -> None:
        self._timers = timers
        self._debug = debug
        self._send = send
        self._fold = fold
        self._known = known
        self._schedule: RefreshSchedule[Callback] = RefreshSchedule(intervals)
        self._subscribers: list[Callable[[], None]] = []
        self._guards: list[tuple[AbstractContextManager[Any], Callable[[], None]]] = []
        self._fresh: tuple[bool, bool] | None = None  # keep_fresh's (all_topics, auto_create)
        self._timer: Timer | None = None
        self._pump_due = False
        self._closed = False
        self._rng = random.Random()
        self._recovery = recovery or Recovery(False, 0.0)
        self._rebootstrap = rebootstrap
        self._recovery_timer: Timer | None = None
        self._unanswered: dict[int, Callable[[], None]] = {}  # id(request) -> send it again

    # --- IO thread -------------------------------------------------------------------------

    def ask(
        self,
        topics: Iterable[str] | None,
        then: Callback | None = None,
        *,
        pace: Pace = Pace.NOW,
        auto_create: bool = False,
        timeout: float | None = None,
        lane: int | None = None,
    ) -> None:
        """A refresh of ``topics`` (None: every topic; []: brokers only) at ``pace``; ``then`` hears
        the answer (or the error) of the request that carries it. ``lane``: broker ``lane``'s
        coordinator connection carries that request (shared only with asks for the same lane)."""
        if self._closed:
            if then is not None:
                guarded(then, None, KafkaError(KafkaError._DESTROY, "client closed"))
            return
        if self._schedule.ask(topics, pace, auto_create=auto_create, waiter=then, timeout=timeout, lane=lane):
            self._pump_soon()

    def keep_fresh(self, *, all_topics: bool = False, auto_create: bool = False) -> None:
        """Refresh periodically: the topics known (every topic when ``all_topics`` or
        ``topic.metadata.refresh.sparse`` is false; the brokers alone when none is known). Before
        any answer, one request leaves now, as librdkafka's first on connecting. The parts' wishes
        add up (the client's own, a producer's ``auto_create``, a pattern subscription's)."""
        first = self._fresh is None
        if self._fresh is not None:
            all_topics, auto_create = all_topics or self._fresh[0], auto_create or self._fresh[1]
        self._fresh = (all_topics, auto_create)
        if self._schedule.last_answer is not None:
            self._ask_periodic()
        elif first:
            self.ask(None if all_topics else list(self._known()), pace=Pace.FAST, auto_create=auto_create)

    def subscribe(self, fn: Callable[[], None]) -> None:
        """``fn`` runs (IO thread) after each new picture, whoever asked for it."""
        self._subscribers.append(fn)

    def unsubscribe(self, fn: Callable[[], None]) -> None:
        if fn in self._subscribers:
            self._subscribers.remove(fn)

    def guard(self, lock: AbstractContextManager[Any], fn: Callable[[], None]) -> None:
        """Fold each new picture while holding ``lock`` and run ``fn`` before letting it go: a part
        that reads the picture under ``lock`` never sees it without ``fn``'s consequences (the
        producer: a record produced right after the fold must not overtake the records that
        waited for it)."""
        self._guards.append((lock, fn))

    def all_brokers_down(self) -> None:
        """Every broker the client knows failed its last attempt: rebootstrap, if configured."""
        if self._recovery.on_all_brokers_down():
            self._recover("all known brokers are down")

    def close(self) -> None:
        """No request from here on; later asks hear _DESTROY at once."""
        self._closed = True
        for timer in (self._timer, self._recovery_timer):
            if timer is not None:
                timer.cancel()

    def _recover(self, why: str) -> None:
        """Connect to the bootstrap servers again, then ask for the brokers and known topics."""
        if self._closed or self._rebootstrap is None:
            return
        if self._debug.generic:
            self._debug.log("generic", "REBOOTSTRAP", MAIN, "Starting re-bootstrap sequence (%s)", why)
        self._rebootstrap()
        for send in list(self._unanswered.values()):
            send()  # (a copy through the bootstrap servers: a request queued for a dead broker would wait)
        self.ask(list(self._known()), pace=Pace.FAST)

    def _arm_recovery(self) -> None:
        """(Re)set the one timer for the recovery deadline, if any."""
        if self._recovery_timer is not None:
            self._recovery_timer.cancel()
            self._recovery_timer = None
        deadline = self._recovery.deadline
        if deadline is not None and not self._closed:
            self._recovery_timer = self._timers.call_later(max(0.0, deadline - self._timers.now()), self._recovery_due)

    def _recovery_due(self) -> None:
        self._recovery_timer = None
        if self._recovery.expired(self._timers.now()):
            self._recover("no metadata answer within metadata.recovery.rebootstrap.trigger.ms")
        else:
            self._arm_recovery()

    # --- internals -------------------------------------------------------------------------

    def _ask_periodic(self) -> None:
        assert self._fresh is not None
        all_topics, auto_create = self._fresh
        topics = None if all_topics else self._schedule.periodic_topics(self._known())
        self.ask(topics, pace=Pace.PERIODIC, auto_create=auto_create)

    def _pump_soon(self) -> None:
        if not self._pump_due:
            self._pump_due = True
            self._timers.call_soon(self._pump)

    def _pump(self) -> None:
        self._pump_due = False
        if self._closed:
            return
        now = self._timers.now()
        while (request := self._schedule.take(now)) is not None:
            self._request(request)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        due = self._schedule.due_at()
        if due is not None:
            self._timer = self._timers.call_later(max(0.0, due - now), self._pump)

    def _fold_guarded(self, response: Struct, full: bool) -> None:
        with ExitStack() as held:
            for lock, _fn in self._guards:
                held.enter_context(lock)
            self._fold(response, full)
            for _lock, fn in self._guards:
                guarded(fn)

    def _request(self, request: Request[Callback]) -> None:
        topics = request.topic_list()

        def body(version: int) -> dict[str, Any]:
            return request_body(topics, version, auto_create=request.auto_create)

        copies = 0  # sent and not yet answered: a rebootstrap sends the request again
        ended = False

        def send(lane: int | None) -> None:
            nonlocal copies
            copies += 1
            self._send(body, done, request.timeout, lane)

        def done(response: Struct | None, error: KafkaError | None) -> None:
            nonlocal copies, ended
            copies -= 1
            if ended or ((response is None or error is not None) and copies):
                return  # answered already, or a failed copy while another may still answer
            ended = True
            self._unanswered.pop(id(request), None)
            top = 0 if response is None else response.get("error_code") or 0
            if top:  # (v13+) the answer as a whole is refused: nothing in it is folded in
                response, error = None, KafkaError(top)
            ok = response is not None and error is None
            if self._debug.metadata:
                _answer_lines(self._debug, response, error)
            if ok:
                assert response is not None
                self._recovery.answered()
                self._arm_recovery()
                self._fold_guarded(response, topics is None)
            for waiter in self._schedule.answered(request, self._timers.now(), ok, self._rng.random()):
                guarded(waiter, response, error)
            if ok:
                for fn in list(self._subscribers):
                    guarded(fn)
            if self._fresh is not None and self._schedule.last_answer is not None and not self._closed:
                self._ask_periodic()
            self._pump_soon()
            if top and self._recovery.on_answer_error(top):
                self._recover("the broker answered REBOOTSTRAP_REQUIRED")

        if self._debug.metadata:
            what = "all topics" if topics is None else f"{len(topics)} topic(s)" if topics else "brokers only"
            where = "" if request.lane is None else f" on broker {request.lane}'s coordinator connection"
            self._debug.log(
                "metadata", "METADATA", MAIN, "Request metadata for %s (%s)%s", what, request.pace.name.lower(), where
            )
        if self._recovery.deadline is None:
            self._recovery.sent(self._timers.now(), full=topics is None)
            self._arm_recovery()
        # A rebootstrap's copy goes wherever the client picks: the lane's broker may be the one lost.
        self._unanswered[id(request)] = lambda: send(None)
        send(request.lane)


def _answer_lines(debug: Debug, response: Struct | None, error: KafkaError | None) -> None:
    """The ``metadata`` context's summary of an answer: brokers, then each topic's partitions and leaders."""
    if response is None or error is not None:
        debug.log("metadata", "METADATA", MAIN, "Metadata request failed: %s", error.str() if error else "no answer")
        return
    debug.log(
        "metadata",
        "METADATA",
        MAIN,
        "Received metadata: %d brokers, %d topics (ClusterId %s, ControllerId %d)",
        len(response.brokers),
        len(response.topics),
        response.get("cluster_id"),
        response.get("controller_id", -1),
    )
    for b in response.brokers:
        debug.log("metadata", "METADATA", MAIN, "  Broker %s:%d NodeId %d", b.host, b.port, b.node_id)
    for t in response.topics:
        problem = f": {KafkaError(t.error_code).str()}" if t.error_code else ""
        debug.log("metadata", "METADATA", MAIN, "  Topic %s with %d partitions%s", t.name, len(t.partitions), problem)
        for p in t.partitions:
            debug.log(
                "metadata",
                "METADATA",
                MAIN,
                "    Topic %s [%d] Leader %d Epoch %d%s",
                t.name,
                p.partition_index,
                p.leader_id,
                p.get("leader_epoch", -1),
                f": {KafkaError(p.error_code).str()}" if p.error_code else "",
            )
