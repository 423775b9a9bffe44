"""When a client asks for metadata: one schedule for all of its parts (sans-IO).

Callers ask for a refresh of some topics (or of all) at a `Pace`:

- ``NOW``: someone waits on the answer (list_topics, an admin call's routing): it leaves at once.
- ``FAST``: a leader or a topic is unknown: no sooner than ``topic.metadata.refresh.fast.interval.ms``
  after the last request left.
- ``PERIODIC``: the picture is getting old: ``topic.metadata.refresh.interval.ms`` (at most
  ``metadata.max.age.ms``) after the last answer. With no topic to ask for, the periodic refresh
  asks for the brokers only, and (as librdkafka, measured) no more often than every 10 s.

An ask that a request in flight already covers joins it. The others wait together and leave as one
request (the union of their topics) once the first of them is due. An ask may name a broker's
coordinator lane to carry its request (the classic group leader's refresh before it assigns, sent
on the connection its JoinGroup answer came on, as librdkafka's: the shared connection may hold a
Fetch long-poll the broker answers first); it joins and merges only with asks for that same lane,
and the others never with it. Background asks (FAST,
PERIODIC) never have two requests in flight, and after failed requests they also wait
``retry.backoff.ms``, doubling up to ``retry.backoff.max.ms``. The IO side
(`kafkawire.client.metadata_owner`) passes ``now``, sends what `take` hands out and reports each
answer with `answered`; waiters are opaque to this module.

`Recovery` decides when the client starts again from ``bootstrap.servers`` (KIP-899, KIP-1102), as
librdkafka 2.16 does with ``metadata.recovery.strategy=rebootstrap``: at once when every broker it
knows is down or an answer says REBOOTSTRAP_REQUIRED, or when no Metadata answer came within
``metadata.recovery.rebootstrap.trigger.ms`` of the first request sent after the last answer.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar

from ..protocol.error_codes import REBOOTSTRAP_REQUIRED
from ..protocol.value_class import ValueClass
from .backoff import RetryBackoff

W = TypeVar("W")
Topics = frozenset[str] | None  # None: every topic of the cluster
NO_TOPICS: Topics = frozenset()
BROKERS_ONLY_EVERY = 10.0  # seconds between periodic refreshes of the brokers alone (librdkafka's)


class Pace(enum.IntEnum):
    """How soon an ask wants its request (a lower value is more urgent)."""

    NOW = 0
    FAST = 1
    PERIODIC = 2


class Intervals(ValueClass):
    """Seconds between requests, from the client's options. (Here and in `Request`, plain classes:
    a dataclass cost about a millisecond of every client's start-up to create; protocol/value_class.py.)"""

    _fields = ("fast", "periodic", "backoff_ms", "backoff_max_ms", "sparse")

    def __init__(
        self,
        fast: float,
        periodic: float,  # the periodic refresh, never longer than the cache's time to live
        backoff_ms: int,
        backoff_max_ms: int,
        sparse: bool = True,  # False: the periodic refresh asks for every topic
    ) -> None:
        self.fast = fast
        self.periodic = periodic
        self.backoff_ms = backoff_ms
        self.backoff_max_ms = backoff_max_ms
        self.sparse = sparse

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Intervals:
        max_age = config["metadata.max.age.ms"] / 1000
        interval = config["topic.metadata.refresh.interval.ms"]
        return cls(
            fast=config["topic.metadata.refresh.fast.interval.ms"] / 1000,
            periodic=min(max_age, interval / 1000) if interval > 0 else max_age,
            backoff_ms=config["retry.backoff.ms"],
            backoff_max_ms=config["retry.backoff.max.ms"],
            sparse=config["topic.metadata.refresh.sparse"],
        )


def _union(a: Topics, b: Topics) -> Topics:
    return None if a is None or b is None else a | b


class Request(Generic[W]):
    """One Metadata request: what it asks for and who waits on its answer."""

    def __init__(
        self,
        topics: Topics,
        auto_create: bool,
        pace: Pace,
        waiters: list[W] | None = None,
        timeout: float | None = None,  # None: the connection's default
        lane: int | None = None,  # the broker whose coordinator lane carries it; None: the client picks
    ) -> None:
        self.topics = topics
        self.auto_create = auto_create
        self.pace = pace
        self.waiters: list[W] = [] if waiters is None else waiters
        self.timeout = timeout
        self.lane = lane
        self.sent_at: float | None = None

    def covers(self, topics: Topics, auto_create: bool, lane: int | None = None) -> bool:
        if (auto_create and not self.auto_create) or lane != self.lane:
            return False
        return self.topics is None or (topics is not None and topics <= self.topics)

    def topic_list(self) -> list[str] | None:
        return None if self.topics is None else sorted(self.topics)

    def merge(self, topics: Topics, pace: Pace, waiter: W | None, timeout: float | None) -> None:
        self.topics = _union(self.topics, topics)
        self.pace = min(self.pace, pace)
        self.add_waiter(waiter)
        if timeout is None or self.timeout is None:
            self.timeout = None
        else:
            self.timeout = max(self.timeout, timeout)

    def add_waiter(self, waiter: W | None) -> None:
        if waiter is not None and waiter not in self.waiters:
            self.waiters.append(waiter)


class RefreshSchedule(Generic[W]):
    """The asks waiting, the requests in flight, and when the next request may leave."""

    def __init__(self, intervals: Intervals) -> None:
        self.intervals = intervals
        self._waiting: dict[tuple[bool, int | None], Request[W]] = {}  # per (auto_create, lane): asks merged
        self._flights: list[Request[W]] = []
        self.last_sent: float | None = None
        self.last_answer: float | None = None  # the last successful answer
        self._failures = RetryBackoff(intervals.backoff_ms, intervals.backoff_max_ms)  # failed requests in a row
        self._retry_at = -math.inf  # background asks wait until then after a failure
        self._brokers_only_sent = -math.inf  # when the last periodic brokers-only request left

    def ask(
        self,
        topics: Iterable[str] | None,
        pace: Pace,
        *,
        auto_create: bool = False,
        waiter: W | None = None,
        timeout: float | None = None,
        lane: int | None = None,
    ) -> bool:
        """Record an ask. False when a request in flight covers it (the waiter joins that one)."""
        wanted: Topics = None if topics is None else frozenset(topics)
        for flight in self._flights:
            if flight.covers(wanted, auto_create, lane):
                flight.add_waiter(waiter)
                return False
        key = (auto_create, lane)
        waiting = self._waiting.get(key)
        if waiting is None:
            waiters = [] if waiter is None else [waiter]
            self._waiting[key] = Request(wanted, auto_create, pace, waiters, timeout, lane)
        else:
            waiting.merge(wanted, pace, waiter, timeout)
        return True

    def waiting(self) -> bool:
        return bool(self._waiting)

    def due_at(self) -> float | None:
        """When the next request may leave (-inf: now); None when nothing can leave before an answer."""
        times = [t for r in self._waiting.values() if (t := self._due(r)) < math.inf]
        return min(times, default=None)

    def _due(self, request: Request[W]) -> float:
        if request.pace is Pace.NOW:
            return -math.inf
        if any(f.pace is not Pace.NOW for f in self._flights):
            return math.inf  # one background request at a time: the answer brings a new look
        if request.pace is Pace.FAST:
            due = -math.inf if self.last_sent is None else self.last_sent + self.intervals.fast
        else:
            due = -math.inf if self.last_answer is None else self.last_answer + self.intervals.periodic
            if request.topics == NO_TOPICS:
                due = max(due, self._brokers_only_sent + BROKERS_ONLY_EVERY)
        return max(due, self._retry_at)

    def take(self, now: float) -> Request[W] | None:
        """The request to send now, if one is due (it is in flight from here on)."""
        for key, request in sorted(self._waiting.items(), key=lambda item: item[0][0]):  # no auto_create first
            if self._due(request) <= now:
                del self._waiting[key]
                request.sent_at = now
                if request.pace is Pace.PERIODIC and request.topics == NO_TOPICS:
                    self._brokers_only_sent = now
                self._flights.append(request)
                self.last_sent = now
                return request
        return None

    def answered(self, request: Request[W], now: float, ok: bool, jitter: float = 0.5) -> list[W]:
        """A request ended (``ok``: its answer was folded into the picture); its waiters, to be told."""
        self._flights.remove(request)
        if ok:
            self.last_answer = now
            self._failures.reset()
            self._retry_at = -math.inf
        else:
            self._retry_at = now + self._failures.next(jitter)
        return request.waiters

    def periodic_topics(self, known: Iterable[str]) -> Topics:
        """What the periodic refresh asks for: the topics known (sparse), else every topic."""
        return frozenset(known) if self.intervals.sparse else None


class Recovery:
    """Whether and when to repeat the bootstrap; the owner asks and runs the one timer it names."""

    def __init__(self, rebootstrap: bool, trigger: float) -> None:
        self.enabled = rebootstrap
        self.trigger = trigger  # seconds without an answer, from the first request after the last answer
        self.deadline: float | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Recovery:
        return cls(
            config["metadata.recovery.strategy"] == "rebootstrap",
            config["metadata.recovery.rebootstrap.trigger.ms"] / 1000,
        )

    def sent(self, now: float, full: bool) -> None:
        """A Metadata request left. The first one since the last answer starts the clock; a request
        for every topic does not (as librdkafka: it is not retried, so it cannot prove the silence)."""
        if self.enabled and not full and self.deadline is None:
            self.deadline = now + self.trigger

    def answered(self) -> None:
        self.deadline = None

    def expired(self, now: float) -> bool:
        """The trigger interval passed with no answer: rebootstrap (the clock restarts with the next request)."""
        if self.deadline is None or now < self.deadline:
            return False
        self.deadline = None
        return self.enabled

    def on_all_brokers_down(self) -> bool:
        return self.enabled

    def on_answer_error(self, code: int) -> bool:
        """A Metadata answer's top-level error (v13+): REBOOTSTRAP_REQUIRED asks for it at once."""
        return self.enabled and code == REBOOTSTRAP_REQUIRED
