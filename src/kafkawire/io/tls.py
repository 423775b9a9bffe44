"""TLS for broker connections (the context: security/tls_context.py): a TLS
session over memory buffers, and `TlsTransport`, the transport that runs that session over TCP.

The session never touches a socket (``ssl.MemoryBIO``), so the handshake runs on the IO thread
without blocking it: ciphertext read from the socket goes into `TlsSession.feed` (plaintext comes
out of `read_into`), and whatever
`TlsSession.outgoing` returns is written. Certificate problems become `TlsError` with the reason
OpenSSL gives (expired, unknown CA, host name mismatch), never with a key or a password.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Sequence
from typing import Any, cast

from ..core.kafka_error import KafkaError
from .transport import READ, SYSTEM_DEFAULTS, WRITE, SocketOptions, TcpTransport, Transport, TransportError

_CIPHER_READS = 1 << 18
_NOTHING = memoryview(b"")
# A view this large (a record batch) is sealed from where it is, into TLS records of its own;
# smaller ones are joined and sealed together.
SEAL_APART = 1 << 14


class TlsError(Exception):
    """The TLS handshake or record layer failed; the message says which check."""


class TlsClosed(TlsError):
    """The broker ended the TLS session (close_notify): a close, not a failure of TLS."""


class TlsSession:
    """One client TLS connection's state over memory buffers (no socket)."""

    def __init__(self, ctx: ssl.SSLContext, server_hostname: str) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = ctx.wrap_bio(self._incoming, self._outgoing, server_hostname=server_hostname)
        self.established = False

    def handshake(self) -> bool:
        """Advance the handshake; True once it is complete (then `outgoing` may still hold bytes)."""
        if not self.established:
            try:
                self._tls.do_handshake()
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return False
            except ssl.SSLCertVerificationError as exc:
                raise TlsError(f"certificate verification failed: {exc.verify_message}") from None
            except ssl.SSLError as exc:
                raise TlsError(f"TLS handshake failed: {exc.reason or exc}") from None
            self.established = True
        return True

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Ciphertext read from the socket, opened later by `read_into`."""
        self._incoming.write(data)

    def read_into(self, buffer: memoryview) -> int:
        """Plaintext opened so far written into ``buffer``: how many bytes (0: more ciphertext needed)."""
        if not self.handshake():
            return 0
        try:
            return cast(int, self._tls.read(len(buffer), buffer))  # (typeshed: bytes; with a buffer, a count)
        except ssl.SSLWantReadError:
            return 0
        except ssl.SSLZeroReturnError:
            raise TlsClosed("connection closed by broker (TLS close_notify)") from None
        except ssl.SSLError as exc:
            raise TlsError(f"TLS record error: {exc.reason or exc}") from None

    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Encrypt plaintext; the ciphertext waits in `outgoing`."""
        try:
            self._tls.write(data)
        except ssl.SSLError as exc:
            raise TlsError(f"TLS record error: {exc.reason or exc}") from None

    def outgoing(self) -> bytes:
        """Ciphertext to write to the socket (handshake messages included)."""
        return self._outgoing.read()


class TlsTransport:
    """A `Transport` speaking TLS over another transport (TCP): the handshake runs in `advance()`,
    records are sealed in `send()` and opened in `recv()`. Ciphertext the socket did not take waits
    here (`pending()`), and `send()` takes nothing more until it is out: the caller's queue, not
    this buffer, holds the backlog."""

    def __init__(self, inner: Transport, session: TlsSession) -> None:
        self._inner = inner
        self._session = session
        self._out = bytearray()
        self._held = _NOTHING  # the rest of send_many's ciphertext, a view of the session's bytes (sent first)
        self._cipher = memoryview(bytearray(_CIPHER_READS))  # ciphertext read from the socket
        self._tcp_up = False
        self._ended: TransportError | None = None  # the close met while answer bytes were still to hand over
        self.name = getattr(inner, "name", "broker")

    def fileno(self) -> int:
        return self._inner.fileno()

    def start(self) -> None:
        self._inner.start()

    def advance(self, mask: int) -> int:
        if not self._tcp_up:
            wanted = self._inner.advance(mask)
            if wanted:
                return wanted
            self._tcp_up = True
        try:
            established = self._session.handshake()
            self._out += self._session.outgoing()
            if not self._push() and self._out:
                return READ | WRITE
            if established:
                return 0 if not self._out else WRITE
            try:
                got = self._inner.recv_into(self._cipher)
            except TransportError as exc:
                raise TransportError(str(exc), exc.code, handshaking=True) from None
            if got is not None:
                self._session.feed(self._cipher[:got])
                self._session.handshake()
                self._out += self._session.outgoing()
                self._push()
                if self._session.established and not self._out:
                    return 0
        except TlsError as exc:
            raise TransportError(f"{self.name}: {exc}", KafkaError._SSL) from None
        return READ | (WRITE if self._out else 0)

    def _push(self) -> bool:
        """Write held ciphertext; True when all of it went out."""
        while self._held:
            sent = self._inner.send(self._held)
            if not sent:
                return False
            self._held = self._held[sent:]
        while self._out:
            sent = self._inner.send(memoryview(self._out))
            if not sent:
                return False
            del self._out[:sent]
        return True

    def send(self, data: memoryview) -> int:
        return self.send_many((data,))

    def send_many(self, views: Sequence[memoryview]) -> int:
        """Seal the views, all taken once the ciphertext held before is out: a large one (a record
        batch) from where it is, runs of small ones joined first (a TLS record per small piece costs
        more than the copy). The ciphertext goes to the socket from the session's bytes; a rest the
        socket leaves is held as a view of them, not copied."""
        taken = sum(map(len, views))
        if not self._push() or not taken:
            return 0
        run: list[memoryview] = []  # small views waiting to be sealed together
        try:
            for view in views:
                if len(view) < SEAL_APART:
                    run.append(view)
                    continue
                if run:
                    self._session.send(b"".join(run))
                    run.clear()
                self._session.send(view)
            if run and (small := b"".join(run)):
                self._session.send(small)
        except TlsError as exc:
            raise TransportError(f"{self.name}: {exc}", KafkaError._SSL) from None
        cipher = memoryview(self._session.outgoing())
        self._held = cipher[self._inner.send(cipher) :]
        return taken

    def recv_into(self, buffer: memoryview) -> int | None:
        """Plaintext into ``buffer`` until it is full or the socket has nothing more: none left
        opened inside the session unless ``buffer`` is full (the caller then reads again).

        A close (the broker's close_notify, or TCP closing without one) that comes with the last
        answer is raised on the next read, once that answer's bytes were handed over: a broker
        that answers then hangs up (a refused SASL login) must be heard before the close is."""
        total = 0
        try:
            while total < len(buffer):
                n = self._session.read_into(buffer[total:])
                if n:
                    total += n
                    continue
                if self._ended is not None:
                    break
                got = self._inner.recv_into(self._cipher)
                if got is None:
                    break
                self._session.feed(self._cipher[:got])
                self._out += self._session.outgoing()  # TLS 1.3 may answer (key updates)
                self._push()
        except TransportError as exc:
            self._ended = exc.with_traceback(None)  # its frames would hold views of the read buffer
        except TlsClosed as exc:
            self._ended = TransportError(f"{self.name}: {exc}")
        except TlsError as exc:
            self._ended = TransportError(f"{self.name}: {exc}", KafkaError._SSL)
        if not total and self._ended is not None:
            raise self._ended
        return total or None

    def pending(self) -> int:
        return len(self._held) + len(self._out)

    def close(self) -> None:
        self._inner.close()


def tls_transport(
    ctx: ssl.SSLContext, options: SocketOptions = SYSTEM_DEFAULTS
) -> Callable[[int, Any, str, int], Transport]:
    """A transport factory for `BrokerConnection`: TLS to ``host`` (the name checked against the
    broker's certificate) over TCP to the resolved address."""

    def make(family: int, address: Any, host: str, port: int) -> Transport:
        return TlsTransport(TcpTransport(family, address, f"{host}:{port}", options), TlsSession(ctx, host))

    return make
