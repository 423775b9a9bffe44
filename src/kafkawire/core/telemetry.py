"""Client metrics push (KIP-714): the catalog of metrics and the decisions, with no IO.

`TelemetryState` is the state machine of ``enable.metrics.push``: it is told what happened (a
broker offering GetTelemetrySubscriptions came up, a timer fired, an answer came, the client is
closing) and answers with a `Step`: what to send and after how long. The owner service
(client/telemetry.py) does the sending and the timing. Errors are handled by tables keyed by error
code, as KIP-714 asks: an unknown subscription asks again at once, a malformed push stops, a push
too large waits for the next interval, anything else asks again after the interval.

The metric names, units and kinds are librdkafka's (its KIP-714 subset): the producer's, the
consumer's and the share consumer's; an admin client is a producer to librdkafka and pushes the
producer's metrics.
"""

from __future__ import annotations

import enum
from typing import Any

from .policy import Meanings

PREFIX = "org.apache.kafka."
ALL_METRICS = "*"  # a subscription of this one name asks for every metric
DEFAULT_INTERVAL_MS = 30_000  # when a failed subscription request left no interval to wait
JITTER = 0.2  # the first push of a subscription waits the interval times 0.8 .. 1.2


class Metric:
    """One client metric: its name after `PREFIX`, and how it travels (a Sum is monotonic).
    (This module's classes are plain classes: a dataclass cost about a millisecond of every
    client's start-up to create, and metrics push is on by default.)"""

    __slots__ = ("description", "is_int", "is_sum", "name", "per_broker", "short", "unit")

    def __init__(
        self,
        name: str,
        description: str,
        unit: str,
        is_int: bool,
        per_broker: bool,  # one data point per broker, with its ``node.id``
        is_sum: bool = False,
        short: str = "",  # the name after the client kind ("fetch.manager.fetch.total")
    ) -> None:
        self.name = name
        self.description = description
        self.unit = unit
        self.is_int = is_int
        self.per_broker = per_broker
        self.is_sum = is_sum
        self.short = short

    def __repr__(self) -> str:
        return f"Metric({self.name!r})"

    @property
    def full_name(self) -> str:
        return PREFIX + self.name


def _catalog(kind: str, rows: list[tuple[str, str, str, bool, bool, bool]]) -> tuple[Metric, ...]:
    return tuple(
        Metric(f"{kind}.{name}", description, unit, is_int, per_broker, is_sum, name)
        for name, description, unit, is_int, per_broker, is_sum in rows
    )


_COMMON = [
    ("connection.creation.rate", "The rate of connections established per second.", "1", False, False, False),
    ("connection.creation.total", "The total number of connections established.", "1", True, False, True),
    ("node.request.latency.avg", "The average request latency in ms for a node.", "ms", False, True, False),
    ("node.request.latency.max", "The maximum request latency in ms for a node.", "ms", True, True, False),
]
PRODUCER_METRICS = _catalog("producer", [
    *_COMMON,
    ("produce.throttle.time.avg", "The average throttle time in ms for a node.", "ms", False, False, False),
    ("produce.throttle.time.max", "The maximum throttle time in ms for a node.", "ms", True, False, False),
    ("record.queue.time.avg", "The average time in ms a record spends in the producer queue.", "ms", False, False, False),
    ("record.queue.time.max", "The maximum time in ms a record spends in the producer queue.", "ms", True, False, False),
    ("request.latency.avg", "The average request latency in ms for produce requests.", "ms", False, False, False),
    ("request.latency.max", "The maximum request latency in ms for produce requests.", "ms", True, False, False),
])  # fmt: skip
CONSUMER_METRICS = _catalog("consumer", [
    *_COMMON,
    ("coordinator.assigned.partitions", "The number of partitions currently assigned to this consumer.", "1", True, False, False),
    ("coordinator.rebalance.latency.avg", "The average rebalance latency in ms for the consumer coordinator.", "ms", False, False, False),
    ("coordinator.rebalance.latency.max", "The maximum rebalance latency in ms for the consumer coordinator.", "ms", True, False, False),
    ("coordinator.rebalance.latency.total", "The total rebalance latency in ms for the consumer coordinator.", "ms", True, False, True),
    ("fetch.manager.fetch.latency.avg", "The average fetch latency in ms for the fetch manager.", "ms", False, False, False),
    ("fetch.manager.fetch.latency.max", "The maximum fetch latency in ms for the fetch manager.", "ms", True, False, False),
    ("poll.idle.ratio.avg", "The average ratio of idle to poll for a consumer.", "1", False, False, False),
    ("coordinator.commit.latency.avg", "The average commit latency in ms for the consumer coordinator.", "ms", False, False, False),
    ("coordinator.commit.latency.max", "The maximum commit latency in ms for the consumer coordinator.", "ms", True, False, False),
])  # fmt: skip
# A share consumer's (KIP-932) are its own, in librdkafka's order; no connection nor node metrics.
SHARE_CONSUMER_METRICS = _catalog("consumer.share", [
    ("poll.idle.ratio.avg", "The average fraction of time the consumer's poll() is idle as opposed to waiting for the user code to process records.", "1", False, False, False),
    ("time.between.poll.avg", "The average delay between invocations of poll() in milliseconds.", "ms", False, False, False),
    ("time.between.poll.max", "The max delay between invocations of poll() in milliseconds.", "ms", True, False, False),
    ("fetch.manager.fetch.total", "The total number of fetch requests.", "1", True, False, True),
    ("fetch.manager.fetch.rate", "The number of fetch requests per second.", "1", False, False, False),
    ("fetch.manager.fetch.latency.avg", "The average time taken for a fetch request.", "ms", False, False, False),
    ("fetch.manager.fetch.latency.max", "The maximum time taken for any fetch request.", "ms", True, False, False),
    ("fetch.manager.acknowledgements.send.total", "The total number of record acknowledgements sent.", "1", True, False, True),
    ("fetch.manager.acknowledgements.send.rate", "The average number of record acknowledgements sent per second.", "1", False, False, False),
    ("fetch.manager.fetch.throttle.time.avg", "The average throttle time in ms.", "ms", False, False, False),
    ("fetch.manager.fetch.throttle.time.max", "The maximum throttle time in ms.", "ms", True, False, False),
    ("coordinator.heartbeat.total", "The total number of heartbeats.", "1", True, False, True),
    ("coordinator.heartbeat.rate", "The number of heartbeats per second.", "1", False, False, False),
    ("fetch.manager.fetch.size.avg", "The average number of bytes fetched per request.", "By", False, False, False),
    ("fetch.manager.fetch.size.max", "The maximum number of bytes fetched per request.", "By", True, False, False),
    ("fetch.manager.bytes.consumed.total", "The total number of bytes fetched.", "By", True, False, True),
    ("fetch.manager.bytes.consumed.rate", "The average number of bytes fetched per second.", "By", False, False, False),
])  # fmt: skip
CATALOGS = {"producer": PRODUCER_METRICS, "consumer": CONSUMER_METRICS, "share_consumer": SHARE_CONSUMER_METRICS}


def match(requested: list[str], catalog: tuple[Metric, ...]) -> tuple[Metric, ...]:
    """The metrics a subscription asks for: ``*`` alone is all of them, otherwise each requested
    name is a prefix of full names; overlapping prefixes name a metric once."""
    if requested == [ALL_METRICS]:
        return catalog
    chosen: list[Metric] = []
    for prefix in requested:
        chosen += [m for m in catalog if m not in chosen and m.full_name.startswith(prefix)]
    return tuple(chosen)


class Meter:
    """Samples over one push interval: the average and maximum, then a fresh interval."""

    __slots__ = ("count", "max", "sum", "total")

    def __init__(self) -> None:
        self.sum = 0.0
        self.count = 0
        self.max = 0.0
        self.total = 0.0  # every sample ever (cumulative sums)

    def add(self, value: float) -> None:
        self.sum += value
        self.count += 1
        self.total += value
        if value > self.max:
            self.max = value

    def take(self) -> tuple[float, float]:
        """(average, maximum) of the interval (0, 0 when empty), and start the next one."""
        avg = self.sum / self.count if self.count else 0.0
        peak = self.max
        self.sum, self.count, self.max = 0.0, 0, 0.0
        return avg, peak


class Tally:
    """A count kept by a client for a ``.total`` / ``.rate`` pair: the part of this push interval
    and every one ever (the delta and the cumulative sum)."""

    __slots__ = ("_interval", "total")

    def __init__(self) -> None:
        self._interval = 0
        self.total = 0

    def add(self, n: int) -> None:
        self._interval += n
        self.total += n

    def take(self) -> tuple[int, int]:
        """(this interval's count, every count ever), and start the next interval."""
        interval, self._interval = self._interval, 0
        return interval, self.total


class PollSpacing:
    """A share consumer's ``time.between.poll``: the time (ms) from one poll() call to the next."""

    __slots__ = ("_entered", "meter")

    def __init__(self) -> None:
        self._entered: float | None = None
        self.meter = Meter()

    def entered(self, now: float) -> None:
        if self._entered is not None:
            self.meter.add((now - self._entered) * 1000)
        self._entered = now


class PollIdle:
    """The consumer's ``poll.idle.ratio``: per poll, the time waiting inside it over the time since
    the previous poll returned (the application's time plus the wait), given the caller's clock."""

    __slots__ = ("_left", "meter")

    def __init__(self) -> None:
        self._left: float | None = None
        self.meter = Meter()

    def polled(self, entered: float, left: float) -> None:
        if self._left is not None and left > self._left:
            self.meter.add((left - entered) / (left - self._left))
        self._left = left


class Phase(enum.Enum):
    AWAIT_BROKER = "AwaitBroker"
    GET_SCHEDULED = "GetSubscriptionsScheduled"
    GET_SENT = "GetSubscriptionsSent"
    PUSH_SCHEDULED = "PushScheduled"
    PUSH_SENT = "PushSent"
    FINAL_PUSH_SCHEDULED = "TerminatingPushScheduled"
    FINAL_PUSH_SENT = "TerminatingPushSent"
    TERMINATED = "Terminated"


class Action(enum.Enum):
    GET = "get"  # send GetTelemetrySubscriptions
    PUSH = "push"  # send PushTelemetry
    FINAL_PUSH = "final"  # send PushTelemetry with terminating=true
    WAIT = "wait"  # arm the timer for ``delay`` and call `fire` then
    NONE = "none"  # nothing to do (waiting for an answer or a broker)
    STOP = "stop"  # metrics push is over for this client


class Step:
    __slots__ = ("action", "delay", "warning")

    def __init__(self, action: Action, delay: float = 0.0, warning: str | None = None) -> None:
        self.action = action
        self.delay = delay  # seconds
        self.warning = warning  # what the application's log hears at WARNING

    def __repr__(self) -> str:
        return f"Step({self.action}, delay={self.delay}, warning={self.warning!r})"


# KIP-714's error codes for a push, and what each means for the client.
NONE_ = 0
INVALID_REQUEST = 42
INVALID_RECORD = 87
THROTTLING_QUOTA_EXCEEDED = 89
UNSUPPORTED_VERSION = 35
UNSUPPORTED_FEATURE = -165  # the client's own: the broker's ApiVersions lack the API
UNKNOWN_SUBSCRIPTION_ID = 117
TELEMETRY_TOO_LARGE = 118


class Then(enum.Enum):
    STOP = "stop"  # stop pushing for the client's life
    GET_NOW = "get now"  # the subscription changed: ask for the new one at once
    PUSH_LATER = "push later"  # keep the subscription, push again after the interval
    GET_LATER = "get later"  # ask for a subscription again after the interval


PUSH_ERRORS = Meanings(
    "client metrics push (PushTelemetry, KIP-714)",
    {
        INVALID_REQUEST: Then.STOP,
        INVALID_RECORD: Then.STOP,
        UNSUPPORTED_VERSION: Then.STOP,
        UNSUPPORTED_FEATURE: Then.STOP,
        UNKNOWN_SUBSCRIPTION_ID: Then.GET_NOW,
        TELEMETRY_TOO_LARGE: Then.PUSH_LATER,
        THROTTLING_QUOTA_EXCEEDED: Then.PUSH_LATER,
    },
    Then.GET_LATER,
)
SUBSCRIPTION_ERRORS = Meanings(
    "client metrics subscription (GetTelemetrySubscriptions, KIP-714)",
    {UNSUPPORTED_VERSION: Then.STOP, UNSUPPORTED_FEATURE: Then.STOP},
    Then.GET_LATER,  # ask again after the interval
)


class TelemetrySubscription:
    """What the broker's GetTelemetrySubscriptions answer asked for."""

    def __init__(
        self,
        client_instance_id: Any,
        subscription_id: int,
        compression_types: list[int],
        interval_ms: int,
        max_bytes: int,
        delta: bool,
        metrics: tuple[Metric, ...],
    ) -> None:
        self.client_instance_id = client_instance_id
        self.subscription_id = subscription_id
        self.compression_types = compression_types
        self.interval_ms = interval_ms
        self.max_bytes = max_bytes
        self.delta = delta
        self.metrics = metrics


class TelemetryState:
    """The KIP-714 state machine of one client (``kind``: "producer" or "consumer")."""

    def __init__(self, kind: str) -> None:
        self.catalog = CATALOGS[kind]
        self.phase = Phase.AWAIT_BROKER
        self.subscription: TelemetrySubscription | None = None
        self.client_instance_id: Any = None  # None until the broker assigns one (zero UUID on the wire)
        self.interval_ms = 0

    @property
    def done(self) -> bool:
        return self.phase is Phase.TERMINATED

    def broker_ready(self) -> Step:
        """A broker that speaks GetTelemetrySubscriptions is up: the first one starts the push."""
        if self.phase is not Phase.AWAIT_BROKER:
            return Step(Action.NONE)
        self.phase = Phase.GET_SCHEDULED
        return Step(Action.WAIT, 0.0)

    def fire(self, have_broker: bool) -> Step:
        """The timer went off: send what is scheduled, or wait for a broker when none is up."""
        phase = self.phase
        if phase is Phase.FINAL_PUSH_SCHEDULED:
            if not have_broker:
                self.phase = Phase.TERMINATED
                return Step(Action.STOP)
            self.phase = Phase.FINAL_PUSH_SENT
            return Step(Action.FINAL_PUSH)
        if phase not in (Phase.GET_SCHEDULED, Phase.PUSH_SCHEDULED):
            return Step(Action.NONE)
        if not have_broker:
            self.phase = Phase.AWAIT_BROKER
            return Step(Action.NONE)
        if phase is Phase.GET_SCHEDULED:
            self.phase = Phase.GET_SENT
            return Step(Action.GET)
        self.phase = Phase.PUSH_SENT
        return Step(Action.PUSH)

    def subscribed(self, error: int, answer: dict[str, Any] | None, jitter: float, throttle_ms: int = 0) -> Step:
        """The GetTelemetrySubscriptions answer (``error`` 0 with its fields, else the error code;
        ``jitter`` in [-1, 1] spreads the first push of many clients)."""
        if self.phase is not Phase.GET_SENT:
            return Step(Action.NONE)
        if error:
            if SUBSCRIPTION_ERRORS.meaning(error) is Then.STOP:
                self.phase = Phase.TERMINATED
                return Step(Action.STOP)
            self.interval_ms = self.interval_ms or DEFAULT_INTERVAL_MS
            self.phase = Phase.GET_SCHEDULED
            return Step(Action.WAIT, max(self.interval_ms, throttle_ms) / 1000)
        assert answer is not None
        self.client_instance_id = answer["client_instance_id"]
        # (an interval of 0 or less is no interval: a broker must not make the client push in a loop)
        self.interval_ms = answer["push_interval_ms"] if answer["push_interval_ms"] > 0 else DEFAULT_INTERVAL_MS
        requested = list(answer["requested_metrics"])
        self.subscription = TelemetrySubscription(
            answer["client_instance_id"],
            answer["subscription_id"],
            list(answer["accepted_compression_types"]),
            self.interval_ms,
            answer["telemetry_max_bytes"],
            answer["delta_temporality"],
            match(requested, self.catalog),
        )
        if requested:
            self.phase = Phase.PUSH_SCHEDULED
            return Step(Action.WAIT, max(self.interval_ms * (1 + JITTER * jitter), throttle_ms) / 1000)
        self.phase = Phase.GET_SCHEDULED
        return Step(Action.WAIT, max(self.interval_ms, throttle_ms) / 1000)

    def pushed(self, error: int, throttle_ms: int = 0) -> Step:
        """The PushTelemetry answer (0 or its error code)."""
        if self.phase is Phase.FINAL_PUSH_SENT:
            self.phase = Phase.TERMINATED  # the last push is best effort: its answer changes nothing
            return Step(Action.STOP)
        if self.phase is not Phase.PUSH_SENT:
            return Step(Action.NONE)
        later = max(self.interval_ms, throttle_ms) / 1000
        if not error:
            self.phase = Phase.PUSH_SCHEDULED
            return Step(Action.WAIT, later)
        then = PUSH_ERRORS.meaning(error)
        if then is Then.STOP:
            self.phase = Phase.TERMINATED
            return Step(
                Action.STOP, warning=f"PushTelemetry failed with a non-retriable error ({error}): stopping metrics push"
            )
        if then is Then.PUSH_LATER:
            self.phase = Phase.PUSH_SCHEDULED
            return Step(Action.WAIT, later)
        self.phase = Phase.GET_SCHEDULED
        return Step(Action.WAIT, 0.0 if then is Then.GET_NOW else later)

    def terminate(self) -> Step:
        """The client is closing: one last push when a subscription is being served, else stop."""
        if self.phase is Phase.PUSH_SCHEDULED:
            self.phase = Phase.FINAL_PUSH_SCHEDULED
            return Step(Action.WAIT, 0.0)
        self.phase = Phase.TERMINATED
        return Step(Action.STOP)
