"""One broker connection's life, sans-IO (as h11's `_state.py` is HTTP's): its states, the events that
move it, and what each move asks the IO layer to do, as one table (TRANSITIONS); which queued requests
fail on which failure, as another (QUEUE_RULES).

`io/broker.py` drives it: it feeds the events it sees (a name resolved, the transport up, bytes read,
a timer fired, a caller's wish) into `Life.handle` and performs the actions it gets back, in order.
Every flag of the life is here (failures, wanted, kept, retired, proven, answers since ready, the
last failure), so "should it reconnect" is asked in one place (`Life.wants`). A (state, event) pair
absent from the table leaves the life as it is: an event that does not concern that state (a name
resolved for an attempt already given up, a keep while backing off).

Invariants the table keeps: only a failure of a live connection counts towards the backoff; a
connection torn down first settles (its in-flight requests are failed, and a retry queued meanwhile
waits for the backoff, as librdkafka's), then backs off, reconnects or rests by `wants`; CLOSED is
final.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from .cluster_health import REPORTED_PER_ADDRESS
from .kafka_error import KafkaError


class LinkState(enum.Enum):
    """Where the connection is. `ConnectionState` is what the rest of the client sees of it."""

    DISCONNECTED = "disconnected"  # resting: nothing wants it, or never opened
    BACKING_OFF = "backing off"  # failed; the next attempt waits for the reconnect backoff
    CONNECTING = "connecting"  # resolving, TCP, TLS
    NEGOTIATING = "negotiating"  # the handshake (ApiVersions, SASL)
    READY = "ready"
    FAILING = "failing"  # torn down by a failure: its in-flight requests are being failed
    RESTARTING = "restarting"  # torn down without a failure (idle, moved): the same, no backoff after
    CLOSED = "closed"  # for good


class ConnectionState(enum.Enum):
    """The connection's state as the client, statistics and debug lines name it."""

    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    NEGOTIATING = "negotiating"
    READY = "ready"
    CLOSED = "closed"


SEEN: dict[LinkState, ConnectionState] = {
    LinkState.DISCONNECTED: ConnectionState.DISCONNECTED,
    LinkState.BACKING_OFF: ConnectionState.DISCONNECTED,
    LinkState.FAILING: ConnectionState.DISCONNECTED,
    LinkState.RESTARTING: ConnectionState.DISCONNECTED,
    LinkState.CONNECTING: ConnectionState.CONNECTING,
    LinkState.NEGOTIATING: ConnectionState.NEGOTIATING,
    LinkState.READY: ConnectionState.READY,
    LinkState.CLOSED: ConnectionState.CLOSED,
}

# librdkafka's broker state names in statistics, for ours (its INIT: never connected; TRY_CONNECT:
# waiting to retry, shown as DOWN here as before).
STATS_NAMES: dict[ConnectionState, str] = {
    ConnectionState.DISCONNECTED: "DOWN",
    ConnectionState.CONNECTING: "CONNECT",
    ConnectionState.NEGOTIATING: "APIVERSION_QUERY",
    ConnectionState.READY: "UP",
    ConnectionState.CLOSED: "DOWN",
}


class Event(enum.Enum):
    CONNECT = "connect asked"  # open(), a request queued, a keep: a resting connection connects
    RESOLVED = "address resolved"
    RESOLVE_FAILED = "name did not resolve"
    CONNECT_FAILED = "connect refused or failed"  # TCP refused or reset, TLS refused
    TRANSPORT_UP = "transport up"
    HANDSHAKE_DONE = "handshake done"
    HANDSHAKE_REFUSED = "handshake refused"  # versions, SASL, a token source
    ANSWERS_READ = "answers read"
    BAD_ANSWER = "answer broke the protocol"  # or a version gap to be asked about again
    WRITE_FAILED = "write failed"
    PEER_CLOSED = "peer closed or reset"
    REQUEST_TIMED_OUT = "a request in flight passed its deadline"
    QUEUED_TIMED_OUT = "a request not yet sent passed its deadline"
    SETUP_TIMED_OUT = "connect or setup deadline passed"
    IDLE_TIMED_OUT = "idle deadline passed"
    KEPT = "kept"
    UNKEPT = "no longer kept"
    RETIRED = "retired"
    UNRETIRED = "no longer retired"
    WANTED = "a request failed over: it wants this broker back"
    MOVED = "moved to another address"
    SETTLED = "torn down, and wanted"  # (`Life.settled` picks this or SETTLED_UNWANTED)
    SETTLED_UNWANTED = "torn down, and nothing wants it"
    BACKOFF_OVER = "reconnect backoff over, and wanted"  # (`Life.backoff_over` picks)
    BACKOFF_OVER_UNWANTED = "reconnect backoff over, and nothing wants it"
    CLOSE = "close"


class LifeAction(enum.Enum):
    RESOLVE = "start an attempt: resolve the name (the setup deadline starts)"
    OPEN_TRANSPORT = "open the transport to the resolved address"
    START_HANDSHAKE = "start the handshake"
    TEARDOWN = "close the transport, fail the requests in flight with the event's error"
    FAIL_QUEUED = "fail the queued requests QUEUE_RULES picks for the failure"
    FAIL_ALL_QUEUED = "fail every queued request (_DESTROY)"
    NOTIFY = "tell the client (ready, proven, failed)"
    PUMP = "write queued requests"
    ARM_BACKOFF = "arm the reconnect backoff timer"
    SETTLE = "the teardown is over: feed SETTLED or SETTLED_UNWANTED"


class Move:
    """A row of the transition table: the state to go to and what to do on the way. (Here and in
    `Life`, plain classes: a dataclass cost about a millisecond of every client's start-up.)"""

    __slots__ = ("actions", "to")

    def __init__(self, to: LinkState, actions: tuple[LifeAction, ...] = ()) -> None:
        self.to = to
        self.actions = actions

    def __repr__(self) -> str:
        return f"Move({self.to.name}, {tuple(a.name for a in self.actions)})"


LIVE = (LinkState.CONNECTING, LinkState.NEGOTIATING, LinkState.READY)
# The failures of a live connection: each tears it down and fails what waits on it by QUEUE_RULES.
FAILURES = (
    Event.RESOLVE_FAILED,
    Event.CONNECT_FAILED,
    Event.HANDSHAKE_REFUSED,
    Event.BAD_ANSWER,
    Event.WRITE_FAILED,
    Event.PEER_CLOSED,
    Event.REQUEST_TIMED_OUT,
    Event.QUEUED_TIMED_OUT,
    Event.SETUP_TIMED_OUT,
)
# A request that passed its deadline unsent fails a connection that is up (librdkafka counts its
# output queue's timeouts towards socket.max.fails from its UP state on: what waits behind them
# would wait as long); one still connecting is bounded by its setup deadline instead.
UP = (LinkState.NEGOTIATING, LinkState.READY)
_FAIL = Move(LinkState.FAILING, (LifeAction.TEARDOWN, LifeAction.FAIL_QUEUED, LifeAction.NOTIFY, LifeAction.SETTLE))
_RESTART = Move(LinkState.RESTARTING, (LifeAction.TEARDOWN, LifeAction.SETTLE))
_CONNECT = Move(LinkState.CONNECTING, (LifeAction.RESOLVE,))

TRANSITIONS: dict[tuple[LinkState, Event], Move] = {
    (LinkState.DISCONNECTED, Event.CONNECT): _CONNECT,
    (LinkState.DISCONNECTED, Event.KEPT): _CONNECT,
    (LinkState.CONNECTING, Event.RESOLVED): Move(LinkState.CONNECTING, (LifeAction.OPEN_TRANSPORT,)),
    (LinkState.CONNECTING, Event.TRANSPORT_UP): Move(LinkState.NEGOTIATING, (LifeAction.START_HANDSHAKE,)),
    (LinkState.NEGOTIATING, Event.HANDSHAKE_DONE): Move(LinkState.READY, (LifeAction.NOTIFY, LifeAction.PUMP)),
    (LinkState.READY, Event.ANSWERS_READ): Move(LinkState.READY),  # (NOTIFY the first time: proven)
    **{(state, failure): _FAIL for state in LIVE for failure in FAILURES if failure is not Event.QUEUED_TIMED_OUT},
    **{(state, Event.QUEUED_TIMED_OUT): _FAIL for state in UP},
    (LinkState.READY, Event.IDLE_TIMED_OUT): _RESTART,
    **{
        (state, Event.MOVED): _RESTART
        for state in (LinkState.DISCONNECTED, LinkState.BACKING_OFF, *LIVE)  # (not while settling)
    },
    (LinkState.FAILING, Event.SETTLED): Move(LinkState.BACKING_OFF, (LifeAction.ARM_BACKOFF,)),
    (LinkState.FAILING, Event.SETTLED_UNWANTED): Move(LinkState.DISCONNECTED),
    (LinkState.RESTARTING, Event.SETTLED): _CONNECT,
    (LinkState.RESTARTING, Event.SETTLED_UNWANTED): Move(LinkState.DISCONNECTED),
    (LinkState.BACKING_OFF, Event.BACKOFF_OVER): _CONNECT,
    (LinkState.BACKING_OFF, Event.BACKOFF_OVER_UNWANTED): Move(LinkState.DISCONNECTED),
    **{
        (state, Event.CLOSE): Move(LinkState.CLOSED, (LifeAction.TEARDOWN, LifeAction.FAIL_ALL_QUEUED))
        for state in LinkState
        if state is not LinkState.CLOSED
    },
}


class QueueRule(enum.Enum):
    """Which queued (never sent) requests a failure fails, and with what."""

    HAND_BACK = "all of them, as _TRANSPORT: their callers route again"
    FAIL_FAST = "those that fail fast or fail over, with the failure itself"
    FAIL_OVER = "those that fail over, as _TRANSPORT; the broker is wanted back"


# A failure's code -> its rule, for a broker the metadata named (negative ids: bootstrap addresses).
# An advertised name that does not resolve is perhaps stale: the queue goes back, unsent, so the
# callers' policies refresh metadata instead of waiting here. TLS, credentials and names fail the
# requests that asked to hear them at once (REPORTED_PER_ADDRESS); a failure a reconnect may mend
# fails only what can be asked elsewhere, the rest waiting for the reconnect until its deadline.
QUEUE_RULES: dict[tuple[int, bool], QueueRule] = {
    **{(code, named): QueueRule.FAIL_FAST for code in REPORTED_PER_ADDRESS for named in (False, True)},
    (KafkaError._RESOLVE, True): QueueRule.HAND_BACK,  # (before the above for a named broker)
}

# Rule -> (does this queued request leave: (fail_fast, fails_over) -> bool, failed as _TRANSPORT).
LEAVING: dict[QueueRule, tuple[Callable[[bool, bool], bool], bool]] = {
    QueueRule.HAND_BACK: (lambda _fast, _over: True, True),
    QueueRule.FAIL_FAST: (lambda fast, over: fast or over, False),
    QueueRule.FAIL_OVER: (lambda _fast, over: over, True),
}


def queue_rule(code: int, *, lasting: bool, named: bool) -> QueueRule:
    """The rule for a failure with ``code``; ``lasting``: no reconnect mends it (core/mismatch.py);
    ``named``: the broker's address came from the metadata."""
    rule = QUEUE_RULES.get((code, named))
    if rule is None:
        return QueueRule.FAIL_FAST if lasting else QueueRule.FAIL_OVER
    return rule


class Life:
    """The connection's state and flags. `handle` applies an event's flags and its table move."""

    def __init__(
        self,
        *,
        state: LinkState = LinkState.DISCONNECTED,
        failures: int = 0,  # failed attempts since the last handshake (the backoff's exponent, the next address)
        wanted: bool = False,  # a request failed over and wants this broker back: keep reconnecting
        kept: bool = False,  # held up whether or not a request waits (enable.sparse.connections=false)
        retired: bool = False,  # a bootstrap connection once the brokers are named
        proven: bool = False,  # answered a request since its handshake (what "up" means to error reports)
        answered: int | None = None,  # answers since the handshake, told until proven; None until it is done
        last_error: KafkaError | None = None,
        last_error_lasting: bool = False,  # no reconnect mends it (core/mismatch.py): reported once per address
        failed_when_ready: bool = False,  # the last failure struck a ready connection
        last_mismatch: str | None = None,  # the previous attempt's close diagnosis (core/mismatch.py)
    ) -> None:
        self.state = state
        self.failures = failures
        self.wanted = wanted
        self.kept = kept
        self.retired = retired
        self.proven = proven
        self.answered = answered
        self.last_error = last_error
        self.last_error_lasting = last_error_lasting
        self.failed_when_ready = failed_when_ready
        self.last_mismatch = last_mismatch

    @property
    def seen(self) -> ConnectionState:
        return SEEN[self.state]

    @property
    def backing_off(self) -> bool:
        """Down and not to be connected now: a request for it waits for the backoff (or fails over)."""
        return self.state in (LinkState.BACKING_OFF, LinkState.FAILING, LinkState.RESTARTING)

    def wants(self, queued: bool) -> bool:
        """Whether the connection should be up: a request waits for it, one failed over, or it is kept."""
        return queued or self.wanted or self.kept

    def trying(self, queued: bool) -> bool:
        """Not up, and trying to come back (core/cluster_health.py)."""
        down = self.state not in (LinkState.READY, LinkState.CLOSED)
        return down and (self.wants(queued) or self.state is LinkState.BACKING_OFF)

    def handle(
        self, event: Event, *, error: KafkaError | None = None, lasting: bool = False, count: int = 0
    ) -> tuple[LifeAction, ...]:
        """Apply ``event`` (``error``, ``lasting``: a failure's; ``count``: answers read); the actions
        to perform, in order."""
        move = TRANSITIONS.get((self.state, event))
        if event in _FLAGS:
            _FLAGS[event](self)
        if move is None:
            return ()
        actions = move.actions
        if event in FAILURES:
            self.last_error, self.last_error_lasting = error, lasting
            self.failed_when_ready = self.state is LinkState.READY
            self.failures += 1
        elif event is Event.MOVED:
            self.failures, self.last_error = 0, None
        elif event is Event.HANDSHAKE_DONE:
            self.answered, self.failures, self.last_error, self.wanted = 0, 0, None, False
        elif event is Event.ANSWERS_READ and self.answered is not None:
            self.answered += count
            if self.answered and not self.proven:
                self.proven, self.last_mismatch = True, None
                actions = (LifeAction.NOTIFY, *actions)
        if move.to is not LinkState.READY:
            self.proven, self.answered = False, None
        self.state = move.to
        return actions

    def settled(self, queued: bool) -> tuple[LifeAction, ...]:
        """The teardown (its in-flight requests failed) is over."""
        return self.handle(Event.SETTLED if self.wants(queued) else Event.SETTLED_UNWANTED)

    def backoff_over(self, queued: bool) -> tuple[LifeAction, ...]:
        return self.handle(Event.BACKOFF_OVER if self.wants(queued) else Event.BACKOFF_OVER_UNWANTED)

    def idle_deadline(self, active_at: float, idle_timeout: float, *, busy: bool) -> float | None:
        """When a ready connection with nothing to do (not ``busy``) closes: after
        connections.max.idle.ms (0: never), at once when retired; None when it does not."""
        if self.state is not LinkState.READY or busy or not (self.retired or idle_timeout > 0):
            return None
        return active_at + (0.0 if self.retired else idle_timeout)

    def reported(self) -> bool:
        """Whether the last failure says anything of the broker to the user's error reports: not a
        retired bootstrap connection's, nor a request unanswered on a connection the broker served
        (slow, not down: a leader holds acks=all requests while a paused follower drops out of the
        ISR; counted, every broker holding such requests was "down" at once, issue 39)."""
        if self.last_error is None or self.retired:
            return False
        return not (self.last_error.code() == KafkaError._TIMED_OUT and self.failed_when_ready)


def _keep(life: Life) -> None:
    life.kept = True


def _unkeep(life: Life) -> None:
    life.kept = False


def _retire(life: Life) -> None:
    life.retired, life.kept = True, False


def _unretire(life: Life) -> None:
    life.retired = False


def _want(life: Life) -> None:
    life.wanted = True


# The events that only set flags (whatever the state).
_FLAGS: dict[Event, Callable[[Life], None]] = {
    Event.KEPT: _keep,
    Event.UNKEPT: _unkeep,
    Event.RETIRED: _retire,
    Event.UNRETIRED: _unretire,
    Event.WANTED: _want,
}
