"""One broker's connection: resolve, connect, run the handshake, write frames, read answers, reconnect.

Runs on the IO thread only, and moves bytes only: the framing and correlation (core/connection.py),
the version choice (core/versions.py) and the backoff (core/backoff.py) are the sans-IO core's; the
bytes go through a `Transport` (io/transport.py); the handshake runs in `HandshakeDriver`
(io/handshake_driver.py).

Lifecycle: DISCONNECTED -> CONNECTING (resolve, TCP, TLS) -> NEGOTIATING (handshake) -> READY, and
back to DISCONNECTED on any failure (or, quietly, after ``connections.max.idle.ms`` with nothing to
do, at once for a retired bootstrap connection). It reconnects while requests wait for it, or always when the client keeps it (`keep`:
``enable.sparse.connections=false``). A READY connection whose SASL session has a lifetime
re-authenticates before it ends (KIP-368), new requests held back until it is done. Every state but READY and DISCONNECTED has a deadline
(``socket.connection.setup.timeout.ms`` up to READY, ``api.version.request.timeout.ms`` for the
ApiVersions answer), every request in flight its own. Invariants: each request's callback runs
exactly once; requests in flight on a failed connection fail with ``_TRANSPORT``, ``_TIMED_OUT``
or ``_BAD_MSG`` (the caller's policy retries them), queued ones wait for the reconnect until
their own deadline; only `close()` fails them with ``_DESTROY``.
"""

from __future__ import annotations

import enum
import functools
import random
from collections import deque
from collections.abc import Callable

from ..base.debug import broker_name
from ..core.backoff import backoff_delay
from ..core.broker_stats import BrokerStats
from ..core.cluster_health import REPORTED_PER_ADDRESS
from ..core.connection import Connection, ProtocolError, Response
from ..core.failover import WhenDown, request_when_down
from ..core.kafka_error import KafkaError
from ..core.mismatch import close_mismatch, lasting
from ..core.versions import Doubts, UnsupportedVersionError
from ..protocol.apis import API_VERSIONS
from ..protocol.frame import Frame
from ..protocol.schema import Api
from . import wire_log
from .connection_settings import ConnectionSettings, TransportFactory, tcp_transport
from .handshake_driver import HandshakeDriver
from .io_engine import Engine, Timer, guarded
from .outbox import Outbox
from .queued import Body, Callback, Queued
from .resolve import Addresses, Resolver
from .transport import READ, WRITE, PeerClosed, Transport, TransportError

_NOTHING = memoryview(b"")


class ConnectionState(enum.Enum):
    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    NEGOTIATING = "negotiating"
    READY = "ready"
    CLOSED = "closed"


class BrokerConnection:
    def __init__(
        self,
        engine: Engine,
        node_id: int,
        host: str,
        port: int,
        settings: ConnectionSettings,
        on_state: Callable[[BrokerConnection], None] | None = None,
        *,
        resolver: Resolver,
        transport: TransportFactory = tcp_transport,
    ) -> None:
        self.engine = engine
        self.node_id = node_id
        self.host = host
        self.port = port
        self.settings = settings
        self.on_state = on_state  # told when the connection becomes ready or fails
        self._debug = settings.debug
        self._state = ConnectionState.DISCONNECTED
        self.versions: dict[int, tuple[int, int]] = {}
        self.last_error: KafkaError | None = None
        self.last_error_lasting = False  # no reconnect mends it (core/mismatch.py): report once per address
        self.failed_when_ready = False  # the last failure struck a ready connection (Client._state_changed)
        self.proven = False  # answered a request since its handshake (what "up" means to error reports)
        self._answered_since_ready: int | None = None  # None until the handshake is done
        self._last_mismatch: str | None = None  # the close diagnosis of the previous attempt
        self.stats = BrokerStats(settings.stats_windows, engine.now())
        self._resolver = resolver
        self._new_transport = transport
        self._transport: Transport | None = None
        self._attempt = 0  # numbers connection attempts: a late resolver answer for an old one is dropped
        self._conn = Connection(settings.client_id, settings.max_response_size, stats=self.stats)
        self._handshake = HandshakeDriver(
            engine, settings, write=self._write_step, ready=self._ready, resumed=self._pump, failed=self._refused
        )
        self._doubts = Doubts()
        self._queue: deque[Queued] = deque()
        self._out = Outbox()
        self._on_sent: list[Callable[[], None]] = []  # one-shot (when_sent)
        self._failures = 0
        self._timer: Timer | None = None
        self._reconnect_timer: Timer | None = None
        self._connect_deadline = 0.0
        self._settling = False  # failing in-flight requests: a retry queued now waits for the backoff
        self._wanted = False  # a request that failed over wants this broker back: keep reconnecting
        self.kept = False  # held up whether or not a request waits (`keep`)
        self.retired = False  # a bootstrap connection once the brokers are named (`retire`)
        self._active_at = 0.0  # the last bytes sent or read (connections.max.idle.ms)

    def __repr__(self) -> str:
        return f"<broker {self.node_id} {self.host}:{self.port} {self.state.value}>"

    @property
    def name(self) -> str:
        """As diagnostics name this broker: ``host:port/id`` (``/bootstrap`` before metadata)."""
        return broker_name(self.host, self.port, self.node_id)

    @property
    def state(self) -> ConnectionState:
        return self._state

    @state.setter
    def state(self, new: ConnectionState) -> None:
        self.stats.moved(self._state.value, new.value, self.engine.now())
        if new is not self._state and self._debug.broker:
            wire_log.state_changed(self._debug, self.name, self._state, new)
        self._state = new

    @property
    def in_flight(self) -> int:
        return self._conn.in_flight

    @property
    def trying(self) -> bool:  # not ready, still trying to come back (core/cluster_health.py)
        waiting = bool(self._queue or self._wanted or self.kept or self._reconnect_timer)
        return waiting and self.state not in (ConnectionState.READY, ConnectionState.CLOSED)

    @property
    def unsent(self) -> int:
        """Requests not wholly written to the socket yet: queued here, or written in part."""
        return len(self._queue) + self._out.frames

    def when_sent(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once, on the IO thread, the next time ``unsent`` may have gone down (a
        request written whole, or queued ones failed or dropped with the connection)."""
        if callback not in self._on_sent:
            self._on_sent.append(callback)

    def _sent(self) -> None:
        if self._on_sent:
            callbacks, self._on_sent = self._on_sent, []
            for callback in callbacks:
                guarded(callback)

    @property
    def load(self) -> int:
        """Requests waiting or in flight: used to pick the least busy broker."""
        return self._conn.in_flight + len(self._queue)

    def request(
        self,
        api: Api,
        body: Body,
        callback: Callback,
        *,
        timeout: float | None = None,
        expect_response: bool = True,
        max_version: int | None = None,
        fail_fast: bool = False,
        fails_over: bool = False,
        give_up: float | None = None,
    ) -> None:
        """Queue a request. ``body`` may be a function of the negotiated version.

        ``callback(response, error)`` runs on the IO thread exactly once. With
        ``expect_response=False`` (acks=0 produce) it runs once the bytes are written.
        ``fails_over``, ``give_up``: see Client.request_io.
        """
        if self.state is ConnectionState.CLOSED:
            callback(None, KafkaError(KafkaError._DESTROY))
            return
        backing_off = self.state is ConnectionState.DISCONNECTED and (
            self._reconnect_timer is not None or self._settling
        )
        down = request_when_down(fails_over=fails_over, failed_since_ready=self._failures > 0, backing_off=backing_off)
        if down is WhenDown.FAIL:
            self._wanted = True
            callback(None, KafkaError(KafkaError._TRANSPORT, f"{self.host}:{self.port} is down: {self.last_error}"))
            return
        deadline = (now := self.engine.now()) + (self.settings.request_timeout if timeout is None else timeout)
        self._queue.append(
            Queued(api, body, callback, deadline, expect_response, max_version, fail_fast, fails_over, now, give_up)
        )
        self.open()
        self._pump()
        self._arm_timer()

    def open(self) -> None:
        """Connect now if down (and not waiting out a reconnect backoff), whether or not a request
        waits: a producer opens its partitions' leaders before their first batch, as librdkafka does."""
        if self.state is ConnectionState.DISCONNECTED and self._reconnect_timer is None and not self._settling:
            self._connect()

    def keep(self, kept: bool) -> None:
        """Hold this connection up (the client's choice, core/held_connections.py): connected now,
        again after a failure (once the backoff passed) or an idle close, with or without a request."""
        self.kept = kept
        if kept:
            self.open()

    def retire(self, retired: bool) -> None:
        """A bootstrap connection steps aside once the brokers are named (librdkafka decommissions
        its bootstrap brokers): it closes as soon as nothing is queued or in flight on it and stays
        closed, out of the statistics, until a rebootstrap brings it back (``retire(False)``)."""
        self.retired = retired
        if retired:
            self.kept = False
        self._arm_timer()

    def move_to(self, host: str, port: int) -> None:
        """The broker now advertises another address: reconnect there. Queued requests stay queued
        and go to the new address; those in flight fail with ``_TRANSPORT`` (retried by policy)."""
        if (host, port) == (self.host, self.port) or self.state is ConnectionState.CLOSED:
            return
        old = f"{self.host}:{self.port}"
        self._teardown(KafkaError(KafkaError._TRANSPORT, f"broker {self.node_id} moved from {old} to {host}:{port}"))
        self.host, self.port = host, port
        self._failures = 0
        self.last_error = None
        if self._queue or self.kept:
            self._connect()
        self._arm_timer()

    def close(self) -> None:
        """Fail everything with ``_DESTROY`` and stop for good."""
        self._teardown(KafkaError(KafkaError._DESTROY, "client closed"))
        self.state = ConnectionState.CLOSED
        self._fail_queued(lambda q: True, KafkaError(KafkaError._DESTROY, "client closed"))

    # --- connecting ------------------------------------------------------------------------

    def _connect(self) -> None:
        self.state = ConnectionState.CONNECTING
        self._attempt += 1
        self._connect_deadline = self.engine.now() + self.settings.connect_timeout
        self._arm_timer()
        done, s = functools.partial(self._resolved, self._attempt), self.settings
        self._resolver.resolve(self.host, self.port, done, family=s.address_family, ttl=s.address_ttl)

    def _resolved(self, attempt: int, addresses: Addresses | None, reason: str | None) -> None:
        if attempt != self._attempt or self.state is not ConnectionState.CONNECTING:
            return  # this attempt already ended (deadline, close, move)
        if addresses is None:
            self._failed(KafkaError(KafkaError._RESOLVE, f"Failed to resolve '{self.host}:{self.port}': {reason}"))
            return
        family, address = addresses[self._failures % len(addresses)]  # the next address on each retry
        if self._debug.broker:
            protocol = "plaintext" if self.settings.security is None else self.settings.security.protocol
            wire_log.connecting(self._debug, self.name, family, address, protocol)
        transport = self._new_transport(family, address, self.host, self.port)
        self._transport = transport
        try:
            transport.start()
        except TransportError as exc:
            self._failed(KafkaError(exc.code or KafkaError._TRANSPORT, str(exc)))
            return
        self.engine.register(transport, WRITE, self._on_connecting)
        self._on_connecting(0)

    def _on_connecting(self, mask: int) -> None:
        transport = self._transport
        assert transport is not None
        try:
            wanted = transport.advance(mask)
        except TransportError as exc:
            self._failed_closing(exc, during_tls_handshake=exc.handshaking)
            return
        if wanted:
            self.engine.modify(transport, wanted, self._on_connecting)
            return
        self.state = ConnectionState.NEGOTIATING
        self.engine.modify(transport, READ, self._on_event)
        self._handshake.start(self._conn, self.name, self.host)

    def _write_step(self, frame: Frame) -> None:
        self._write(frame, None)
        self._arm_timer()

    def _refused(self, code: int, why: str) -> None:  # the handshake cannot go on
        self._failed(KafkaError(code, f"{self.host}:{self.port}: {why}"))

    def _ready(self, versions: dict[int, tuple[int, int]]) -> None:
        self.versions = versions
        self.state = ConnectionState.READY
        self._answered_since_ready = 0
        self._failures = 0
        self.last_error = None
        self._wanted = False
        if self.on_state is not None:
            self.on_state(self)
        self._pump()

    # --- sending and receiving -------------------------------------------------------------

    def _pump(self) -> None:
        """Move queued requests onto the wire while the in-flight limit allows."""
        # (a write that fails tears the connection down: stop there, the rest waits for the reconnect)
        while (
            self._queue
            and self.state is ConnectionState.READY
            and not self._handshake.reauthenticating
            and self._conn.in_flight < self.settings.max_in_flight
        ):
            q = self._queue.popleft()
            try:
                version = self._doubts.choose(q.api, self.versions, max_version=q.max_version)
                body = q.body(version) if callable(q.body) else q.body
                frame, req = self._conn.send_request(
                    q.api,
                    version,
                    body,
                    now=self.engine.now(),
                    timeout=max(0.0, q.deadline - self.engine.now()),
                    expect_response=q.expect_response,
                    context=q.callback,
                    give_up=None if q.give_up is None else max(0.0, q.queued_at + q.give_up - self.engine.now()),
                )
            except UnsupportedVersionError as exc:
                if not exc.confirmed:  # believe a gap only when the next connection's answer agrees
                    q.fails_over = False  # it waits for that answer here: no other broker is asked meanwhile
                    self._queue.appendleft(q)
                    self._failed(KafkaError(KafkaError._BAD_MSG, f"{self.host}:{self.port}: {exc}; asking again"))
                    return
                guarded(q.callback, None, KafkaError(KafkaError._UNSUPPORTED_FEATURE, str(exc)))
                continue
            except Exception as exc:  # a body that cannot be encoded is the caller's error
                guarded(q.callback, None, KafkaError(KafkaError._INVALID_ARG, f"cannot encode {q.api.name}: {exc}"))
                continue
            self.stats.waited(self.engine.now() - q.queued_at)
            if self._debug.protocol:
                wire_log.sent(self._debug, self.name, q.api, version, frame)
            self._write(frame, None if req is not None else functools.partial(q.callback, None, None))
        self._arm_timer()

    def _write(self, frame: Frame, on_written: Callable[[], None] | None) -> None:
        self._active_at = self.engine.now()
        was_idle = not self._out
        self._out.add(frame, on_written)
        if was_idle:
            self._flush()

    def _flush(self) -> None:
        transport = self._transport
        if transport is None:
            return
        try:
            if transport.pending():
                transport.send(_NOTHING)
            before = self._out.frames
            for on_written in self._out.write(transport):
                guarded(on_written)
            if self._out.frames < before:
                self._sent()
        except TransportError as exc:
            self.stats.txerrs += 1
            self._failed(KafkaError(exc.code or KafkaError._TRANSPORT, str(exc)))
            return
        if self._transport is transport:  # (a callback above may have torn it down)
            events = READ | (WRITE if self._out or transport.pending() else 0)
            self.engine.modify(transport, events, self._on_event)

    def _on_event(self, mask: int) -> None:
        if mask & WRITE:
            self._flush()
        if mask & READ and self._transport is not None:
            self._read()

    def _read(self) -> None:
        """Read into the connection's buffer (a large answer's own) until the socket has nothing
        more: a full buffer may leave bytes behind that no event announces (TLS)."""
        transport = self._transport
        assert transport is not None
        responses: list[Response] = []
        failure: KafkaError | None = None
        closed: TransportError | None = None
        lasting_failure = False
        got = wanted = 0
        while got == wanted and failure is None and closed is None:
            try:
                with self._conn.receive_buffer() as room:  # released before `received` may grow it
                    wanted = len(room)
                    got = transport.recv_into(room) or 0
                responses += self._conn.received(got) if got else ()
            except TransportError as exc:
                closed = exc
                if isinstance(exc, PeerClosed) and self.settings.log_close:
                    self._debug.info("FAIL", self.name, "%s: Disconnected (%s)", self.name, exc)
            except ProtocolError as exc:
                responses += exc.completed
                code = KafkaError._TRANSPORT if exc.mismatch else KafkaError._BAD_MSG
                failure = KafkaError(code, f"{self.host}:{self.port}: {exc}")
                lasting_failure = exc.mismatch
        self._active_at = now = self.stats.read_ended(self.engine.now(), closed is not None or failure is not None)
        if self._answered_since_ready is not None and self.state is ConnectionState.READY:
            self._answered_since_ready += len(responses)
        for r in responses:
            self.stats.answered(now, r.request.sent_at, r.body, r.request.api.key)
            if self._debug.protocol:
                wire_log.received(self._debug, self.name, r, now - r.request.sent_at)
            if r.request.context is not None:  # (None: its caller gave up on it)
                guarded(r.request.context, r.body, None)
        if self._answered_since_ready and not self.proven and self.state is ConnectionState.READY:
            self._proven()
        if self._transport is not transport:  # a callback closed it
            return
        if closed is not None:
            self._failed_closing(closed, during_tls_handshake=False)
        elif failure is not None:
            self._failed(failure, lasting=lasting_failure)
        else:
            self._pump()

    def _proven(self) -> None:
        self.proven = True
        self._last_mismatch = None
        if self.on_state is not None:
            self.on_state(self)

    def _failed_closing(self, exc: TransportError, *, during_tls_handshake: bool) -> None:
        """The transport failed or the broker closed it: named as a security.protocol mismatch
        when it has the signs of one (core/mismatch.py), else as it came."""
        security = self.settings.security
        sasl = security is not None and security.uses_sasl
        answered = self._answered_since_ready if self.state is ConnectionState.READY and self._conn.in_flight else None
        why = close_mismatch(during_tls_handshake=during_tls_handshake, answered_since_ready=answered, sasl=sasl)
        if why is None:
            self._failed(KafkaError(exc.code or KafkaError._TRANSPORT, str(exc)))
            return
        sure = lasting(why, self._last_mismatch)
        self._last_mismatch = why
        self._failed(KafkaError(KafkaError._TRANSPORT, f"{self.host}:{self.port}: {why} ({exc})"), lasting=sure)

    # --- timers and failure ----------------------------------------------------------------

    def _arm_timer(self) -> None:
        """One timer at the earliest deadline: connect, in-flight or queued."""
        deadlines = [q.expires for q in self._queue]
        nxt = self._conn.next_deadline()
        if nxt is not None:
            deadlines.append(nxt)
        if self.state in (ConnectionState.CONNECTING, ConnectionState.NEGOTIATING):
            deadlines.append(self._connect_deadline)
        if self._idle_closes():
            deadlines.append(self._idle_deadline())
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deadlines:
            when = min(deadlines)
            self._timer = self.engine.call_later(when - self.engine.now(), self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        now = self.engine.now()
        if self.state in (ConnectionState.CONNECTING, ConnectionState.NEGOTIATING) and now >= self._connect_deadline:
            what = "connect to" if self.state is ConnectionState.CONNECTING else "handshake with"
            why = f"{what} {self.host}:{self.port} timed out (socket.connection.setup.timeout.ms)"
            self._failed(KafkaError(KafkaError._TRANSPORT, why))
        elif self._idle_closes() and now >= self._idle_deadline():
            why = "bootstrap connection retired: the brokers are known" if self.retired else "idle connection closed"
            self._teardown(KafkaError(KafkaError._TRANSPORT, why))  # nothing is in flight
            if self.kept:
                self._connect()
        elif expired := self._conn.expired(now):
            # Responses come in order, so the connection is unusable once one is overdue.
            setting = "api.version.request.timeout.ms" if expired[0].api is API_VERSIONS else "the request timeout"
            why = f"{expired[0].api.name} to {self.host}:{self.port} timed out ({setting})"
            self._failed(KafkaError(KafkaError._TIMED_OUT, why))
        else:
            for api, callback in self._conn.given_up(now):
                why = f"{api.name} to {self.host}:{self.port} given up by its caller (its answer will be dropped)"
                guarded(callback, None, KafkaError(KafkaError._TIMED_OUT, why))
        self._expire_queue(now)
        self._arm_timer()

    def _idle_closes(self) -> bool:
        """A ready connection with nothing to do closes: after connections.max.idle.ms, or at once retired."""
        idle = self.state is ConnectionState.READY and not self._queue and not self._out and not self._conn.in_flight
        return idle and (self.retired or self.settings.idle_timeout > 0) and not self._handshake.reauthenticating

    def _idle_deadline(self) -> float:
        return self._active_at + (0.0 if self.retired else self.settings.idle_timeout)

    def _expire_queue(self, now: float) -> None:
        if self.stats.timed_out(sum(q.expires <= now for q in self._queue)):
            err = self.last_error if self.last_error is not None else KafkaError(KafkaError._TIMED_OUT)
            reason = f"request timed out before it could be sent to {self.host}:{self.port}: {err.str()}"
            self._fail_queued(lambda q: q.expires <= now, KafkaError(KafkaError._TIMED_OUT, reason))

    def _fail_queued(self, leaving: Callable[[Queued], bool], error: KafkaError) -> None:
        """Fail the queued requests ``leaving`` picks, each with its own copy of ``error``. The queue
        is settled first: a callback may queue a new request (a retry)."""
        gone = [q for q in self._queue if leaving(q)]
        self._queue = deque(q for q in self._queue if not leaving(q))
        for q in gone:
            guarded(q.callback, None, KafkaError(error.code(), error.str()))
        if gone:
            self._sent()

    def _failed(self, error: KafkaError, *, lasting: bool = False) -> None:
        if self.state is ConnectionState.CLOSED:
            return
        if self._debug.broker:
            wire_log.failed(self._debug, self.name, self.state, error.str())
        self.last_error = error
        self.last_error_lasting = lasting
        self.failed_when_ready = self.state is ConnectionState.READY
        self._teardown(error)
        self._failures += 1
        if error.code() == KafkaError._RESOLVE and self.node_id >= 0:
            # The metadata named an address that does not resolve: perhaps stale. Hand the queue
            # back (never sent) so the callers' policies refresh metadata instead of waiting here.
            self._fail_queued(lambda q: True, KafkaError(KafkaError._TRANSPORT, error.str()))
        elif lasting or error.code() in REPORTED_PER_ADDRESS:
            self._fail_queued(lambda q: q.fail_fast or q.fails_over, error)
        elif any(q.fails_over for q in self._queue):
            self._wanted = True
            self._fail_queued(lambda q: q.fails_over, KafkaError(KafkaError._TRANSPORT, error.str()))
        if self.on_state is not None:
            self.on_state(self)
        if (
            (self._queue or self._wanted or self.kept)
            and self.state is ConnectionState.DISCONNECTED
            and self._reconnect_timer is None
        ):
            s = self.settings
            delay = backoff_delay(self._failures - 1, s.backoff_ms, s.backoff_max_ms, random.random())
            self._reconnect_timer = self.engine.call_later(delay, self._reconnect)
        self._arm_timer()

    def _reconnect(self) -> None:
        self._reconnect_timer = None
        if self.state is ConnectionState.DISCONNECTED and (self._queue or self._wanted or self.kept):
            self._connect()

    def _teardown(self, error: KafkaError) -> None:
        """Close the transport and fail the requests that were in flight on it."""
        self._attempt += 1  # a resolver answer still on its way belongs to no attempt now
        if self._transport is not None:
            self.engine.unregister(self._transport)
            self._transport.close()
            self._transport = None
        pending = self._conn.pending()
        self._conn = Connection(self.settings.client_id, self.settings.max_response_size, stats=self.stats)
        self._handshake.stop()
        self._out.clear()
        self.state = ConnectionState.DISCONNECTED
        self.proven = False
        self._answered_since_ready = None
        for timer in (self._timer, self._reconnect_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._reconnect_timer = None
        self._settling = True
        try:
            for req in pending:
                if req.context is not None:
                    guarded(req.context, None, KafkaError(error.code(), error.str()))
        finally:
            self._settling = False
        self._sent()  # what was written in part is gone with the connection
