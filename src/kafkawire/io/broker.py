"""One broker's socket: connect, negotiate versions, write frames, read responses, reconnect.

Runs on the IO thread only. The protocol decisions (framing, correlation, version choice,
backoff) are the sans-IO core's; this class owns the socket and the timers around them.

Lifecycle: DISCONNECTED -> CONNECTING -> NEGOTIATING (ApiVersions) -> READY, and back to
DISCONNECTED on any failure. Requests sent before READY wait in a queue; on failure the requests
in flight fail with ``_TRANSPORT`` (or ``_TIMED_OUT``), while queued ones wait for the reconnect,
each until its own deadline.
"""

from __future__ import annotations

import enum
import errno
import functools
import logging
import os
import random
import selectors
import socket
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._version import __version__
from ..core.backoff import backoff_delay
from ..core.connection import Connection, ProtocolError
from ..core.versions import UnsupportedVersionError, choose_version, ranges_from_response
from ..errors import KafkaError
from ..protocol.apis import API_VERSIONS
from ..protocol.codec import Struct
from ..protocol.schema import Api
from .engine import Engine, Timer

log = logging.getLogger("kafkawire.io")

Body = Mapping[str, Any] | Callable[[int], Mapping[str, Any]]
Callback = Callable[[Struct | None, KafkaError | None], None]

_UNSUPPORTED_VERSION = 35
_READ_CHUNK = 1 << 20


class State(enum.Enum):
    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    NEGOTIATING = "negotiating"
    READY = "ready"
    CLOSED = "closed"


@dataclass
class ConnectionSettings:
    client_id: str
    request_timeout: float
    connect_timeout: float
    backoff_ms: int
    backoff_max_ms: int
    max_response_size: int
    max_in_flight: int

    @classmethod
    def from_config(cls, conf: Mapping[str, Any]) -> ConnectionSettings:
        return cls(
            client_id=conf["client.id"],
            request_timeout=conf["socket.timeout.ms"] / 1000,
            connect_timeout=conf["socket.connection.setup.timeout.ms"] / 1000,
            backoff_ms=conf["reconnect.backoff.ms"],
            backoff_max_ms=conf["reconnect.backoff.max.ms"],
            max_response_size=conf["receive.message.max.bytes"],
            max_in_flight=conf["max.in.flight.requests.per.connection"],
        )


@dataclass
class BrokerStats:
    """Counters for statistics (librdkafka's names): requests sent, responses read, round trips."""

    tx: int = 0
    rx: int = 0
    rtt_min: float = 0.0
    rtt_max: float = 0.0
    rtt_sum: float = 0.0

    def answered(self, rtt: float) -> None:
        self.rtt_min = rtt if not self.rx or rtt < self.rtt_min else self.rtt_min
        self.rtt_max = max(self.rtt_max, rtt)
        self.rtt_sum += rtt
        self.rx += 1


@dataclass
class Queued:
    api: Api
    body: Body
    callback: Callback
    deadline: float
    expect_response: bool
    max_version: int | None


class BrokerConnection:
    def __init__(
        self,
        engine: Engine,
        node_id: int,
        host: str,
        port: int,
        settings: ConnectionSettings,
        on_state: Callable[[BrokerConnection], None] | None = None,
    ) -> None:
        self.engine = engine
        self.node_id = node_id
        self.host = host
        self.port = port
        self.settings = settings
        self.on_state = on_state  # told when the connection becomes ready or fails
        self.state = State.DISCONNECTED
        self.versions: dict[int, tuple[int, int]] = {}
        self.last_error: KafkaError | None = None
        self._sock: socket.socket | None = None
        self._conn = Connection(settings.client_id, settings.max_response_size)
        self._queue: deque[Queued] = deque()
        self._out: deque[tuple[memoryview, Callable[[], None] | None]] = deque()
        self._failures = 0
        self._timer: Timer | None = None
        self._reconnect_timer: Timer | None = None
        self._connect_deadline = 0.0
        self.stats = BrokerStats()
        self._api_versions_version = API_VERSIONS.max_version

    def __repr__(self) -> str:
        return f"<broker {self.node_id} {self.host}:{self.port} {self.state.value}>"

    @property
    def in_flight(self) -> int:
        return self._conn.in_flight

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
    ) -> None:
        """Queue a request. ``body`` may be a function of the negotiated version.

        ``callback(response, error)`` runs on the IO thread exactly once. With
        ``expect_response=False`` (acks=0 produce) it runs once the bytes are written.
        """
        if self.state is State.CLOSED:
            callback(None, KafkaError(KafkaError._DESTROY))
            return
        deadline = self.engine.now() + (self.settings.request_timeout if timeout is None else timeout)
        self._queue.append(Queued(api, body, callback, deadline, expect_response, max_version))
        if self.state is State.DISCONNECTED and self._reconnect_timer is None:
            self._connect()
        self._pump()
        self._arm_timer()

    def close(self) -> None:
        """Fail everything with ``_DESTROY`` and stop for good."""
        self._teardown(KafkaError(KafkaError._DESTROY, "client closed"))
        self.state = State.CLOSED
        self._fail_queue(KafkaError(KafkaError._DESTROY, "client closed"))

    # --- connecting ------------------------------------------------------------------------

    def _connect(self) -> None:
        self.state = State.CONNECTING
        try:
            infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except OSError as exc:
            self._failed(KafkaError(KafkaError._RESOLVE, f"{self.host}:{self.port}: {exc}"))
            return
        family, type_, proto, _, address = infos[0]
        sock = socket.socket(family, type_, proto)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._connect_deadline = self.engine.now() + self.settings.connect_timeout
        err = sock.connect_ex(address)
        if err not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
            self._failed(KafkaError(KafkaError._TRANSPORT, f"connect to {self.host}:{self.port} failed: {err}"))
            return
        self.engine.register(sock, selectors.EVENT_WRITE, self._on_connect_ready)
        self._arm_timer()

    def _on_connect_ready(self, _mask: int) -> None:
        assert self._sock is not None
        err = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self._failed(
                KafkaError(KafkaError._TRANSPORT, f"connect to {self.host}:{self.port} failed: {os.strerror(err)}")
            )
            return
        self.state = State.NEGOTIATING
        self.engine.modify(self._sock, selectors.EVENT_READ, self._on_event)
        self._send_api_versions(API_VERSIONS.max_version)

    def _send_api_versions(self, version: int) -> None:
        self._api_versions_version = version
        body = {"client_software_name": "kafkawire", "client_software_version": __version__}
        frame, req = self._conn.send_request(
            API_VERSIONS, version, body, now=self.engine.now(), timeout=self.settings.request_timeout
        )
        assert req is not None
        req.context = self._on_api_versions
        self._write(frame, None)

    def _on_api_versions(self, body: Struct | None, error: KafkaError | None) -> None:
        if error is not None or body is None:
            return  # the connection failure path already ran
        if body.error_code == _UNSUPPORTED_VERSION and self._api_versions_version > 0:
            # Retry with the highest version the broker named, or v0 when it named none.
            theirs = ranges_from_response(body).get(API_VERSIONS.key, (0, 0))[1]
            self._send_api_versions(min(theirs, API_VERSIONS.max_version, self._api_versions_version - 1))
            return
        if body.error_code:
            self._failed(KafkaError(body.error_code, f"ApiVersions failed on {self.host}:{self.port}"))
            return
        self.versions = ranges_from_response(body)
        self.state = State.READY
        self._failures = 0
        self.last_error = None
        if self.on_state is not None:
            self.on_state(self)
        self._pump()

    # --- sending and receiving -------------------------------------------------------------

    def _pump(self) -> None:
        """Move queued requests onto the wire while the in-flight limit allows."""
        if self.state is not State.READY:
            return
        # (a write that fails tears the connection down: stop there, the rest waits for the reconnect)
        while self._queue and self.state is State.READY and self._conn.in_flight < self.settings.max_in_flight:
            q = self._queue.popleft()
            try:
                version = choose_version(q.api, self.versions, max_version=q.max_version)
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
                q.callback(None, KafkaError(KafkaError._UNSUPPORTED_FEATURE, str(exc)))
                continue
            except Exception as exc:  # a body that cannot be encoded is the caller's error
                q.callback(None, KafkaError(KafkaError._INVALID_ARG, f"cannot encode {q.api.name}: {exc}"))
                continue
            self.stats.tx += 1
            self._write(frame, None if req is not None else functools.partial(q.callback, None, None))
        self._arm_timer()

    def _write(self, frame: bytes | bytearray, on_written: Callable[[], None] | None) -> None:
        was_idle = not self._out
        self._out.append((memoryview(frame), on_written))
        if was_idle:
            self._flush()

    def _flush(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            while self._out:
                view, on_written = self._out[0]
                sent = sock.send(view)
                if sent < len(view):
                    self._out[0] = (view[sent:], on_written)
                    break
                self._out.popleft()
                if on_written is not None:
                    on_written()
        except BlockingIOError:
            pass
        except OSError as exc:
            self._failed(KafkaError(KafkaError._TRANSPORT, f"send to {self.host}:{self.port} failed: {exc}"))
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self._out else 0)
        self.engine.modify(sock, events, self._on_event)

    def _on_event(self, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            self._flush()
        if mask & selectors.EVENT_READ and self._sock is not None:
            self._read()

    def _read(self) -> None:
        assert self._sock is not None
        try:
            data = self._sock.recv(_READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as exc:
            self._failed(KafkaError(KafkaError._TRANSPORT, f"receive from {self.host}:{self.port} failed: {exc}"))
            return
        if not data:
            self._failed(KafkaError(KafkaError._TRANSPORT, f"{self.host}:{self.port}: connection closed by broker"))
            return
        try:
            responses = self._conn.receive_data(data)
        except ProtocolError as exc:
            self._failed(KafkaError(KafkaError._BAD_MSG, f"{self.host}:{self.port}: {exc}"))
            return
        now = self.engine.now()
        for r in responses:
            self.stats.answered(now - r.request.sent_at)
            callback: Callback = r.request.context
            callback(r.body, None)
        self._pump()

    # --- timers and failure ----------------------------------------------------------------

    def _arm_timer(self) -> None:
        """One timer at the earliest deadline: connect, in-flight or queued."""
        deadlines = [q.deadline for q in self._queue]
        nxt = self._conn.next_deadline()
        if nxt is not None:
            deadlines.append(nxt)
        if self.state in (State.CONNECTING, State.NEGOTIATING):
            deadlines.append(self._connect_deadline)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deadlines:
            when = min(deadlines)
            self._timer = self.engine.call_later(when - self.engine.now(), self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        now = self.engine.now()
        if self.state in (State.CONNECTING, State.NEGOTIATING) and now >= self._connect_deadline:
            self._failed(KafkaError(KafkaError._TRANSPORT, f"connect to {self.host}:{self.port} timed out"))
        elif self._conn.expired(now):
            # Responses come in order, so the connection is unusable once one is overdue.
            self._failed(KafkaError(KafkaError._TIMED_OUT, f"request to {self.host}:{self.port} timed out"))
        self._expire_queue(now)
        self._arm_timer()

    def _expire_queue(self, now: float) -> None:
        # Settle the queue first: a callback may queue a new request here (a retry).
        expired = [q for q in self._queue if q.deadline <= now]
        if not expired:
            return
        self._queue = deque(q for q in self._queue if q.deadline > now)
        err = self.last_error if self.last_error is not None else KafkaError(KafkaError._TIMED_OUT)
        reason = f"request timed out before it could be sent to {self.host}:{self.port}: {err.str()}"
        for q in expired:
            q.callback(None, KafkaError(KafkaError._TIMED_OUT, reason))

    def _failed(self, error: KafkaError) -> None:
        log.debug("%r failed: %s", self, error.str())
        self.last_error = error
        self._teardown(error)
        self._failures += 1
        if self.on_state is not None:
            self.on_state(self)
        if self._queue:
            delay = backoff_delay(
                self._failures - 1, self.settings.backoff_ms, self.settings.backoff_max_ms, random.random()
            )
            self._reconnect_timer = self.engine.call_later(delay, self._reconnect)
        self._arm_timer()

    def _reconnect(self) -> None:
        self._reconnect_timer = None
        if self.state is State.DISCONNECTED and self._queue:
            self._connect()

    def _teardown(self, error: KafkaError) -> None:
        """Close the socket and fail the requests that were in flight on it."""
        if self._sock is not None:
            self.engine.unregister(self._sock)
            self._sock.close()
            self._sock = None
        pending = self._conn.pending()
        self._conn = Connection(self.settings.client_id, self.settings.max_response_size)
        self._out.clear()
        self.state = State.DISCONNECTED
        for req in pending:
            callback: Callback = req.context
            callback(None, KafkaError(error.code(), error.str()))
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._reconnect_timer is not None:
            self._reconnect_timer.cancel()
            self._reconnect_timer = None

    def _fail_queue(self, error: KafkaError) -> None:
        queue, self._queue = self._queue, deque()
        for q in queue:
            q.callback(None, error)

