"""One broker's connection: resolve, connect, run the handshake, write frames, read answers, reconnect.

Runs on the IO thread only, and moves bytes only: the connection's life (its states, what each event
does, which queued requests a failure fails) is `core/connection_life.py`'s table, fed the events
this sees and performing the actions it returns, as io/handshake_driver.py drives core/handshake.py;
the framing, correlation and deadlines are core/connection.py's, the version choice core/versions.py's,
the backoff core/backoff.py's; the bytes go through a `Transport` (io/transport.py).

Lifecycle (the table's): DISCONNECTED -> CONNECTING (resolve, TCP, TLS) -> NEGOTIATING (handshake)
-> READY, and on a failure back through FAILING to BACKING_OFF (or DISCONNECTED when nothing wants
it); quietly after ``connections.max.idle.ms`` with nothing to do (at once for a retired bootstrap
connection). It reconnects while requests wait for it, one failed over, or the client keeps it
(``enable.sparse.connections=false``). A READY connection whose SASL session has a lifetime
re-authenticates before it ends (KIP-368), new requests held back until it is done. Every state on
the way up has a deadline (``socket.connection.setup.timeout.ms``; ``api.version.request.timeout.ms``
for the ApiVersions answer), every request its own, judged at librdkafka's once-a-second scan
(core/connection.py `judged_at`). Invariants: each request's callback runs exactly once; requests in
flight on a failed connection fail with ``_TRANSPORT``, ``_TIMED_OUT`` or ``_BAD_MSG`` (the caller's
policy retries them), queued ones wait for the reconnect until their own deadline unless the
failure's queue rule says otherwise; only `close()` fails them with ``_DESTROY``.
"""

from __future__ import annotations

import functools
import random
from collections import deque
from collections.abc import Callable

from ..base.debug import broker_name
from ..core.backoff import backoff_delay
from ..core.broker_stats import BrokerStats
from ..core.connection import Connection, ProtocolError, Response, judged_at
from ..core.connection_life import (
    FAILURES,
    LEAVING,
    LIVE,
    STATS_NAMES,
    ConnectionState,
    Event,
    Life,
    LifeAction,
    LinkState,
    QueueRule,
    queue_rule,
)
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
from .io_engine import Engine, Timer, guarded, log_unexpected
from .outbox import Outbox
from .queued import Body, Callback, Queued
from .resolve import Addresses, Resolver
from .transport import READ, WRITE, PeerClosed, Transport, TransportError

__all__ = ["BrokerConnection", "ConnectionState"]

_NOTHING = memoryview(b"")


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
        self.on_state = on_state  # told when the connection becomes ready, is proven, or fails
        self._debug = settings.debug
        self.life = Life()
        self.versions: dict[int, tuple[int, int]] = {}
        self.stats = BrokerStats(settings.stats_windows, engine.now())
        self._scan_origin = engine.now()  # the request timeout scan's ticks (core/connection.py)
        self._resolver = resolver
        self._new_transport = transport
        self._transport: Transport | None = None
        self._addresses: Addresses = []  # the attempt's, once resolved
        self._attempt = 0  # numbers connection attempts: a late resolver answer for an old one is dropped
        self._conn = self._new_conn()
        self._handshake = HandshakeDriver(
            engine, settings, write=self._write_step, ready=self._ready, resumed=self._pump, failed=self._refused
        )
        self._doubts = Doubts()
        self._queue: deque[Queued] = deque()
        self._out = Outbox()
        self._on_room: list[Callable[[], None]] = []  # one-shot (when_room)
        self._timer: Timer | None = None
        self._reconnect_timer: Timer | None = None
        # What the transport is watched for with `_on_event` (0: not yet, or with `_on_connecting`):
        # a write that leaves it as it was asks nothing of the selector (its modify is Python).
        self._watched = 0
        self._connect_deadline = 0.0
        self._active_at = 0.0  # the last bytes sent or read (connections.max.idle.ms)
        # The last bytes read: of two equally busy connections the one heard from last is picked
        # (client/connection_pool.py), so a lookup does not queue behind a Fetch on a connection a
        # dropped flow left silent until that Fetch's request timeout.
        self.heard_at = 0.0

    def __repr__(self) -> str:
        return f"<broker {self.node_id} {self.host}:{self.port} {self.state.value}>"

    def _new_conn(self) -> Connection:
        s = self.settings
        return Connection(s.client_id, s.max_response_size, stats=self.stats, scan_origin=self._scan_origin)

    @property
    def name(self) -> str:
        """As diagnostics name this broker: ``host:port/id`` (``/bootstrap`` before metadata)."""
        return broker_name(self.host, self.port, self.node_id)

    @property
    def state(self) -> ConnectionState:
        return self.life.seen

    @property
    def ready(self) -> bool:
        return self.life.state is LinkState.READY

    @property
    def live(self) -> bool:
        """Up, or on its way up."""
        return self.life.state in (LinkState.CONNECTING, LinkState.NEGOTIATING, LinkState.READY)

    @property
    def stats_state(self) -> str:
        """The state as librdkafka's statistics name it."""
        return STATS_NAMES[self.life.seen]

    @property
    def last_error(self) -> KafkaError | None:
        return self.life.last_error

    @property
    def last_error_lasting(self) -> bool:
        return self.life.last_error_lasting

    @property
    def proven(self) -> bool:
        return self.life.proven

    @property
    def in_flight(self) -> int:
        return self._conn.in_flight

    @property
    def trying(self) -> bool:  # not ready, still trying to come back (core/cluster_health.py)
        return self.life.trying(bool(self._queue))

    @property
    def unsent(self) -> int:
        """Requests not wholly written to the socket yet: queued here, or written in part."""
        return len(self._queue) + self._out.frames

    def when_room(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once, on the IO thread, the next time ``unsent`` or ``load`` may have
        gone down: a request written whole or answered (the handshake's last answer too), queued
        ones failed, or all dropped with the connection."""
        if callback not in self._on_room:
            self._on_room.append(callback)

    def _room(self) -> None:
        if self._on_room:
            callbacks, self._on_room = self._on_room, []
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
    ) -> None:
        """Queue a request. ``body`` may be a function of the negotiated version.

        ``callback(response, error)`` runs on the IO thread exactly once. With
        ``expect_response=False`` (acks=0 produce) it runs once the bytes are written.
        ``fails_over``: see Client.request_io.
        """
        life = self.life
        ready = life.state is LinkState.READY  # (a ready link queues every request: nothing to decide)
        if not ready:
            if life.state is LinkState.CLOSED:
                callback(None, KafkaError(KafkaError._DESTROY))
                return
            down = request_when_down(
                fails_over=fails_over, failed_since_ready=life.failures > 0, backing_off=life.backing_off
            )
            if down is WhenDown.FAIL:
                self._on(Event.WANTED)
                callback(None, self._down_error())
                return
        deadline = (now := self.engine.now()) + (self.settings.request_timeout if timeout is None else timeout)
        q = Queued(api, body, callback, deadline, expect_response, max_version, fail_fast, fails_over, now)
        q.judged = judged_at(deadline, now, self._scan_origin)
        self._queue.append(q)
        if not ready:  # (the table ignores it there: spared on the hot path)
            self._on(Event.CONNECT)
        self._pump()  # (which sets the timer)

    def open(self) -> None:
        """Connect now if resting (not waiting out a reconnect backoff), whether or not a request
        waits: a producer opens its partitions' leaders before their first batch, as librdkafka does."""
        self._on(Event.CONNECT)

    def keep(self, kept: bool) -> None:
        """Hold this connection up (the client's choice, core/held_connections.py): connected now,
        again after a failure (once the backoff passed) or an idle close, with or without a request."""
        self._on(Event.KEPT if kept else Event.UNKEPT)

    @property
    def kept(self) -> bool:
        return self.life.kept

    @property
    def retired(self) -> bool:
        return self.life.retired

    def retire(self, retired: bool) -> None:
        """A bootstrap connection steps aside once the brokers are named (librdkafka decommissions
        its bootstrap brokers): it closes as soon as nothing is queued or in flight on it and stays
        closed, out of the statistics, until a rebootstrap brings it back (``retire(False)``)."""
        self._on(Event.RETIRED if retired else Event.UNRETIRED)
        self._arm_timer()

    def move_to(self, host: str, port: int) -> None:
        """The broker now advertises another address: reconnect there. Queued requests stay queued
        and go to the new address; those in flight fail with ``_TRANSPORT`` (retried by policy)."""
        if (host, port) == (self.host, self.port) or self.life.state is LinkState.CLOSED:
            return
        why = f"broker {self.node_id} moved from {self.host}:{self.port} to {host}:{port}"
        self.host, self.port = host, port  # (the teardown's callbacks may route to the new address)
        self._on(Event.MOVED, KafkaError(KafkaError._TRANSPORT, why))
        self._arm_timer()

    def close(self) -> None:
        """Fail everything with ``_DESTROY`` and stop for good."""
        self._on(Event.CLOSE, KafkaError(KafkaError._DESTROY, "client closed"))

    # --- the life's events and actions -------------------------------------------------------

    def _on(self, event: Event, error: KafkaError | None = None, *, lasting: bool = False, count: int = 0) -> None:
        """Feed ``event`` to the life; perform what it asks, in order."""
        before = self.life.seen
        if event in FAILURES and error is not None and self._debug.broker and self.life.state in LIVE:
            wire_log.failed(self._debug, self.name, before, error.str())
        self._perform(self.life.handle(event, error=error, lasting=lasting, count=count), before, error)

    def _perform(self, actions: tuple[LifeAction, ...], before: ConnectionState, error: KafkaError | None) -> None:
        after = self.life.seen
        if after is not before:
            self.stats.moved(before.value, after.value, self.engine.now())
            if self._debug.broker:
                wire_log.state_changed(self._debug, self.name, before, after)
        for action in actions:
            if action is LifeAction.RESOLVE:
                self._resolve()
            elif action is LifeAction.OPEN_TRANSPORT:
                self._open_transport()
            elif action is LifeAction.START_HANDSHAKE:
                assert self._transport is not None
                self.engine.modify(self._transport, READ, self._on_event)
                self._watched = READ
                self._handshake.start(self._conn, self.name, self.host)
            elif action is LifeAction.TEARDOWN:
                assert error is not None
                self._teardown(error)
            elif action is LifeAction.FAIL_QUEUED:
                assert error is not None
                self._fail_by_rule(error)
            elif action is LifeAction.FAIL_ALL_QUEUED:
                assert error is not None
                self._fail_queued(lambda q: True, error)
            elif action is LifeAction.NOTIFY:
                if self.on_state is not None:
                    self.on_state(self)
            elif action is LifeAction.PUMP:
                self._pump()
            elif action is LifeAction.ARM_BACKOFF:
                s = self.settings
                delay = backoff_delay(self.life.failures - 1, s.backoff_ms, s.backoff_max_ms, random.random())
                self._reconnect_timer = self.engine.call_later(delay, self._backoff_over)
            elif action is LifeAction.SETTLE:
                seen = self.life.seen
                self._perform(self.life.settled(bool(self._queue)), seen, None)
        if actions:
            self._arm_timer()

    def _backoff_over(self) -> None:
        self._reconnect_timer = None
        seen = self.life.seen
        self._perform(self.life.backoff_over(bool(self._queue)), seen, None)

    def _down_error(self) -> KafkaError:
        """What a request that fails over hears while the connection backs off: as if it had been
        queued when the last attempt failed (QUEUE_RULES): that failure itself when its rule fails
        such requests with it (TLS, credentials: its caller must not retry into a timeout), else
        _TRANSPORT naming it."""
        last = self.life.last_error
        if last is not None:
            rule = queue_rule(last.code(), lasting=self.life.last_error_lasting, named=self.node_id >= 0)
            if not LEAVING[rule][1]:
                return last
        return KafkaError(KafkaError._TRANSPORT, f"{self.host}:{self.port} is down: {last}")

    def _fail_by_rule(self, error: KafkaError) -> None:
        """Fail the queued requests the failure's rule picks (core/connection_life.py QUEUE_RULES)."""
        rule = queue_rule(error.code(), lasting=self.life.last_error_lasting, named=self.node_id >= 0)
        leaves, as_transport = LEAVING[rule]
        failed = KafkaError(KafkaError._TRANSPORT, error.str()) if as_transport else error
        if self._fail_queued(lambda q: leaves(q.fail_fast, q.fails_over), failed) and rule is QueueRule.FAIL_OVER:
            self._on(Event.WANTED)

    # --- connecting ------------------------------------------------------------------------

    def _resolve(self) -> None:
        self._attempt += 1
        self._connect_deadline = self.engine.now() + self.settings.connect_timeout
        done, s = functools.partial(self._resolved, self._attempt), self.settings
        self._resolver.resolve(self.host, self.port, done, family=s.address_family, ttl=s.address_ttl)

    def _resolved(self, attempt: int, addresses: Addresses | None, reason: str | None) -> None:
        if attempt != self._attempt:
            return  # this attempt already ended (deadline, close, move)
        if addresses is None:
            why = f"Failed to resolve '{self.host}:{self.port}': {reason}"
            self._on(Event.RESOLVE_FAILED, KafkaError(KafkaError._RESOLVE, why))
            return
        self._addresses = addresses
        self._on(Event.RESOLVED)

    def _open_transport(self) -> None:
        family, address = self._addresses[self.life.failures % len(self._addresses)]  # the next one each retry
        if self._debug.broker:
            protocol = "plaintext" if self.settings.security is None else self.settings.security.protocol
            wire_log.connecting(self._debug, self.name, family, address, protocol)
        transport = self._new_transport(family, address, self.host, self.port)
        self._transport = transport
        try:
            transport.start()
        except TransportError as exc:
            self._on(Event.CONNECT_FAILED, KafkaError(exc.code or KafkaError._TRANSPORT, str(exc)))
            return
        self.engine.register(transport, WRITE, self._on_connecting)
        self._watched = 0
        self._on_connecting(0)

    def _on_connecting(self, mask: int) -> None:
        transport = self._transport
        assert transport is not None
        try:
            wanted = transport.advance(mask)
        except TransportError as exc:
            self._failed_closing(exc, during_tls_handshake=exc.handshaking, event=Event.CONNECT_FAILED)
            return
        if wanted:
            self.engine.modify(transport, wanted, self._on_connecting)
            return
        self._on(Event.TRANSPORT_UP)

    def _write_step(self, frame: Frame) -> None:
        self._write(frame, None)
        self._arm_timer()

    def _refused(self, code: int, why: str) -> None:  # the handshake cannot go on
        self._on(Event.HANDSHAKE_REFUSED, KafkaError(code, f"{self.host}:{self.port}: {why}"))

    def _ready(self, versions: dict[int, tuple[int, int]]) -> None:
        self.versions = versions
        self._on(Event.HANDSHAKE_DONE)

    # --- sending and receiving -------------------------------------------------------------

    def _pump(self) -> None:
        """Move queued requests onto the wire while the in-flight limit allows."""
        # (a write that fails tears the connection down: stop there, the rest waits for the reconnect)
        while (
            self._queue
            and self.life.state is LinkState.READY
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
                )
            except UnsupportedVersionError as exc:
                if not exc.confirmed:  # believe a gap only when the next connection's answer agrees
                    q.fails_over = False  # it waits for that answer here: no other broker is asked meanwhile
                    self._queue.appendleft(q)
                    why = f"{self.host}:{self.port}: {exc}; asking again"
                    self._on(Event.BAD_ANSWER, KafkaError(KafkaError._BAD_MSG, why))
                    break
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
                self._room()
        except TransportError as exc:
            self.stats.txerrs += 1
            self._on(Event.WRITE_FAILED, KafkaError(exc.code or KafkaError._TRANSPORT, str(exc)))
            return
        if self._transport is transport:  # (a callback above may have torn it down)
            events = READ | (WRITE if self._out or transport.pending() else 0)
            if events != self._watched:
                self.engine.modify(transport, events, self._on_event)
                self._watched = events

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
        heard = False
        while got == wanted and failure is None and closed is None:
            try:
                with self._conn.receive_buffer() as room:  # released before `received` may grow it
                    wanted = len(room)
                    got = transport.recv_into(room) or 0
                heard = heard or got > 0
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
        if heard:
            self.heard_at = now
        counted = len(responses) if self.life.state is LinkState.READY else 0  # (not the handshake's)
        for r in responses:
            self.stats.answered(now, r.request.sent_at, r.body, r.request.api.key)
            if self._debug.protocol:
                wire_log.received(self._debug, self.name, r, now - r.request.sent_at)
            if r.request.context is not None:  # (None: its caller gave up on it)
                try:  # (`guarded`, written out: a frame less per answer)
                    r.request.context(r.body, None)
                except Exception:
                    log_unexpected()
        if responses:
            self._room()
        if counted and not self.life.proven and self._transport is transport:  # (only until proven)
            self._on(Event.ANSWERS_READ, count=counted)
        if self._transport is not transport:  # a callback closed it
            return
        if closed is not None:
            self._failed_closing(closed, during_tls_handshake=False, event=Event.PEER_CLOSED)
        elif failure is not None:
            self._on(Event.BAD_ANSWER, failure, lasting=lasting_failure)
        else:
            self._pump()

    def _failed_closing(self, exc: TransportError, *, during_tls_handshake: bool, event: Event) -> None:
        """The transport failed or the broker closed it: named as a security.protocol mismatch
        when it has the signs of one (core/mismatch.py), else as it came."""
        security = self.settings.security
        sasl = security is not None and security.uses_sasl
        life = self.life
        answered = life.answered if life.state is LinkState.READY and self._conn.in_flight else None
        why = close_mismatch(during_tls_handshake=during_tls_handshake, answered_since_ready=answered, sasl=sasl)
        if why is None:
            self._on(event, KafkaError(exc.code or KafkaError._TRANSPORT, str(exc)))
            return
        sure = lasting(why, life.last_mismatch)
        life.last_mismatch = why
        self._on(event, KafkaError(KafkaError._TRANSPORT, f"{self.host}:{self.port}: {why} ({exc})"), lasting=sure)

    # --- timers ----------------------------------------------------------------------------

    def _arm_timer(self) -> None:
        """One timer at the earliest deadline: connect, idle, a request's scan tick (in flight or queued)."""
        deadlines = [q.judged for q in self._queue] if self._queue else []
        nxt = self._conn.next_deadline()
        if nxt is not None:
            deadlines.append(nxt)
        if self.life.state in (LinkState.CONNECTING, LinkState.NEGOTIATING):
            deadlines.append(self._connect_deadline)
        idle = self._idle_deadline()
        if idle is not None:
            deadlines.append(idle)
        if not deadlines:
            return  # a timer set for a request since answered stays: it finds nothing and ends
        when = min(deadlines)
        if self._timer is not None:
            # One due no later stays: `_on_timer` judges every deadline against the clock and
            # re-arms, so an early one costs a look, where moving the timer at each request and
            # answer (the idle deadline moves with every byte) cost a heap push each.
            if self._timer.when <= when:
                return
            self._timer.cancel()
        self._timer = self.engine.call_at(when, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        now = self.engine.now()
        state = self.life.state
        idle = self._idle_deadline()
        if state in (LinkState.CONNECTING, LinkState.NEGOTIATING) and now >= self._connect_deadline:
            what = "connect to" if state is LinkState.CONNECTING else "handshake with"
            why = f"{what} {self.host}:{self.port} timed out (socket.connection.setup.timeout.ms)"
            self._on(Event.SETUP_TIMED_OUT, KafkaError(KafkaError._TRANSPORT, why))
        elif idle is not None and now >= idle:
            why = (
                "bootstrap connection retired: the brokers are known" if self.life.retired else "idle connection closed"
            )
            self._on(Event.IDLE_TIMED_OUT, KafkaError(KafkaError._TRANSPORT, why))  # nothing is in flight
        elif self._conn.next_deadline() is not None and self._late(now):
            expired = self._conn.expired(now)
            # Responses come in order, so the connection is unusable once one is overdue.
            setting = "api.version.request.timeout.ms" if expired[0].api is API_VERSIONS else "the request timeout"
            why = f"{expired[0].api.name} to {self.host}:{self.port} timed out ({setting})"
            self._on(Event.REQUEST_TIMED_OUT, KafkaError(KafkaError._TIMED_OUT, why))
        self._expire_queue(now)
        self._arm_timer()

    def _late(self, now: float) -> bool:
        """Whether a request in flight is past its deadline at this scan tick. As librdkafka's
        broker thread serves its socket before it scans, what has arrived is read first."""
        if not any(r.judged <= now for r in self._conn.pending()):
            return False
        if self._transport is not None and self.life.state is not LinkState.CONNECTING:
            self._read()
        return any(r.judged <= now for r in self._conn.pending())

    def _idle_deadline(self) -> float | None:
        busy = bool(self._queue or self._out.frames or self._conn.in_flight or self._handshake.reauthenticating)
        return self.life.idle_deadline(self._active_at, self.settings.idle_timeout, busy=busy)

    def _expire_queue(self, now: float) -> None:
        """Fail the queued requests past their deadline's scan tick; on a connection that is up, that
        is a request timeout too (the table: QUEUED_TIMED_OUT), as librdkafka counts its output
        queue's towards ``socket.max.fails``: what waits behind them would wait as long."""
        late = sum(q.judged <= now for q in self._queue)
        if self.stats.timed_out(late):
            err = self.last_error if self.last_error is not None else KafkaError(KafkaError._TIMED_OUT)
            reason = f"request timed out before it could be sent to {self.host}:{self.port}: {err.str()}"
            self._fail_queued(lambda q: q.judged <= now, KafkaError(KafkaError._TIMED_OUT, reason))
            why = f"{late} request(s) to {self.host}:{self.port} timed out before they could be sent: disconnect"
            self._on(Event.QUEUED_TIMED_OUT, KafkaError(KafkaError._TIMED_OUT, why))

    def _fail_queued(self, leaving: Callable[[Queued], bool], error: KafkaError) -> bool:
        """Fail the queued requests ``leaving`` picks, each with its own copy of ``error``; whether
        any. The queue is settled first: a callback may queue a new request (a retry)."""
        gone = [q for q in self._queue if leaving(q)]
        self._queue = deque(q for q in self._queue if not leaving(q))
        for q in gone:
            guarded(q.callback, None, KafkaError(error.code(), error.str()))
        if gone:
            self._room()
        return bool(gone)

    def _teardown(self, error: KafkaError) -> None:
        """Close the transport and fail the requests that were in flight on it (the life is already
        FAILING, RESTARTING or CLOSED: a retry queued by a callback here waits for what follows)."""
        self._attempt += 1  # a resolver answer still on its way belongs to no attempt now
        if self._transport is not None:
            self.engine.unregister(self._transport)
            self._transport.close()
            self._transport = None
            self._watched = 0
        pending = self._conn.pending()
        self._conn = self._new_conn()
        self._handshake.stop()
        self._out.clear()
        for timer in (self._timer, self._reconnect_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._reconnect_timer = None
        for req in pending:
            if req.context is not None:
                guarded(req.context, None, KafkaError(error.code(), error.str()))
        self._room()  # what was written in part is gone with the connection
