"""Runs one broker connection's handshake on the IO thread: ApiVersions, the SASL steps, and the
KIP-368 re-authentication before a SASL session ends.

What to send and what an answer means are `core/handshake.py`'s; this module only frames its steps
on the connection, waits for a bearer token being fetched on another thread, and fires the
re-authentication timer. During a re-authentication the connection stays READY: requests already
in flight are answered as usual, new ones wait (`reauthenticating`) until the SASL steps are done.
`BrokerConnection` (io/broker.py) owns one driver and hears back through the callbacks it gives.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

from ..core.connection import Connection
from ..core.handshake import Handshake, HandshakeError, HandshakeStep, reauthenticate_at
from ..core.kafka_error import KafkaError
from ..core.sasl import SaslError
from ..protocol.apis import API_VERSIONS
from ..protocol.codec import Struct
from ..protocol.frame import Frame
from . import wire_log
from .connection_settings import ConnectionSettings
from .io_engine import Engine, Timer

Versions = dict[int, tuple[int, int]]


class HandshakeDriver:
    """The handshake of each new connection, and its re-authentications, until `stop()`.

    ``write(frame)`` puts a step on the wire; ``ready(versions)`` ends a new connection's handshake,
    ``resumed()`` a re-authentication; ``failed(code, why)`` fails the connection (never the client).
    """

    def __init__(
        self,
        engine: Engine,
        settings: ConnectionSettings,
        *,
        write: Callable[[Frame], None],
        ready: Callable[[Versions], None],
        resumed: Callable[[], None],
        failed: Callable[[int, str], None],
    ) -> None:
        self._engine = engine
        self._settings = settings
        self._debug = settings.debug
        self._write = write
        self._ready = ready
        self._resumed = resumed
        self._failed = failed
        self._conn: Connection | None = None  # the connection being handshaken (None: stopped)
        self._name = ""
        self._host = ""  # the broker's host name as given (Kerberos names the service by it)
        self._versions: Versions | None = None  # the broker's, once the connection is ready
        self._run = 0  # numbers connections: a token or timer of a stopped one is dropped
        self._steps: Handshake | None = None  # None between handshakes, and while a token is fetched
        self._reauth_timer: Timer | None = None
        self._step_sent_at = 0.0  # when the last step left (a SASL session starts after it)
        self.reauthenticating = False  # the SASL steps again on a READY connection: nothing else is sent

    def start(self, conn: Connection, name: str, host: str = "") -> None:
        """A new connection's transport is up: its handshake begins."""
        self.stop()
        self._conn, self._name, self._host = conn, name, host
        self._begin(None)

    def stop(self) -> None:
        """The connection is gone: forget it, its timer and any token still on its way."""
        self._run += 1
        self._conn = None
        self._versions = None
        self._steps = None
        self.reauthenticating = False
        if self._reauth_timer is not None:
            self._reauth_timer.cancel()
            self._reauth_timer = None

    def _begin(self, versions: Versions | None) -> None:
        """The handshake of a new connection, or (``versions`` known) a re-authentication."""
        security = self._settings.security
        sasl = None
        if security is not None and security.uses_sasl:
            # An OIDC token still being fetched, or a Kerberos first token being made: its worker thread
            # calls back, the handshake resumes then.
            ready = functools.partial(self._token_ready, self._run, versions)
            try:  # (the wall clock, not the engine's: a bearer token's expiry is a date)
                sasl = security.sasl_client(time.time(), functools.partial(self._engine.call_soon, ready), self._host)
            except SaslError as exc:  # Kerberos could not make the first token: say why
                self._failed(KafkaError._AUTHENTICATION, f"SASL {security.mechanism}: {exc}")
                return
            except Exception as exc:  # oauth_cb or the token endpoint failed: fail this connection, say why
                self._failed(KafkaError._AUTHENTICATION, f"token source failed: {exc}")
                return
            if sasl is None:
                return
            if self._debug.security:
                wire_log.sasl_started(self._debug, self._name, security.mechanism, versions is not None)
        self._steps = Handshake(self._settings.software_name, self._settings.software_version, sasl, versions)
        self._next()

    def _token_ready(self, run: int, versions: Versions | None) -> None:
        waiting = self._versions is None or self.reauthenticating  # (not once the connection is ready)
        if run == self._run and self._conn is not None and waiting and self._steps is None:
            self._begin(versions)

    def _next(self) -> None:
        steps = self._steps
        assert steps is not None
        try:
            step = steps.next_request()
        except HandshakeError as exc:
            self._failed(exc.code, str(exc))
            return
        if step is not None:
            self._send(step)
            return
        due = reauthenticate_at(self._step_sent_at, steps.session_lifetime_ms)
        if self._debug.security and self._settings.security is not None and self._settings.security.uses_sasl:
            wire_log.sasl_done(self._debug, self._name, steps.session_lifetime_ms)
        self._steps = None
        run = self._run
        if self.reauthenticating:
            self.reauthenticating = False
            self._resumed()
        else:
            self._versions = steps.versions
            if self._debug.feature:
                wire_log.features(self._debug, self._name, steps.versions)
            self._ready(steps.versions)
        if due is not None and run == self._run and self._reauth_timer is None:  # (still connected)
            self._reauth_timer = self._engine.call_later(max(0.0, due - self._engine.now()), self._reauthenticate)

    def _reauthenticate(self) -> None:
        """KIP-368: the session is about to end; authenticate again on this connection."""
        self._reauth_timer = None
        if self._conn is not None and not self.reauthenticating:
            self.reauthenticating = True
            self._begin(self._versions)

    def _send(self, step: HandshakeStep) -> None:
        conn = self._conn
        assert conn is not None
        self._step_sent_at = now = self._engine.now()
        s = self._settings
        timeout = s.api_version_timeout if step.api is API_VERSIONS else s.request_timeout
        if step.raw:  # a bare SASL token (SaslHandshake v0)
            frame = conn.send_sasl_token(step.body["auth_bytes"], now=now, timeout=timeout, context=self._answer)
        else:
            frame, _ = conn.send_request(
                step.api, step.version, step.body, now=now, timeout=timeout, context=self._answer
            )
        if self._debug.protocol:
            wire_log.sent(self._debug, self._name, step.api, step.version, frame, step.raw)
        if self._debug.security:
            wire_log.sasl_step(self._debug, self._name, step.api, step.version, step.body)
        self._write(frame)

    def _answer(self, body: Struct | None, error: KafkaError | None) -> None:
        if error is not None or body is None or self._steps is None:
            return  # the connection failure path already ran
        try:
            self._steps.receive(body)
        except HandshakeError as exc:
            self._failed(exc.code, str(exc))
            return
        self._next()
