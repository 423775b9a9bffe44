"""TLS for broker connections: the SSLContext built from librdkafka's ``ssl.*`` options, and a TLS
session over memory buffers, and `TlsTransport`, the transport that runs that session over TCP.

The session never touches a socket (``ssl.MemoryBIO``), so the handshake runs on the IO thread
without blocking it: ciphertext read from the socket goes into `TlsSession.feed` (plaintext comes
out of `read_into`), and whatever
`TlsSession.outgoing` returns is written. Certificate problems become `TlsError` with the reason
OpenSSL gives (expired, unknown CA, host name mismatch), never with a key or a password.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from ..config import TLS_VERSIONS
from ..kafka_error import KafkaError
from .transport import READ, SYSTEM_DEFAULTS, WRITE, SocketOptions, TcpTransport, Transport, TransportError
from .truststore import trusted_certificates

_CIPHER_READS = 1 << 18
_NOTHING = memoryview(b"")
# A view this large (a record batch) is sealed from where it is, into TLS records of its own;
# smaller ones are joined and sealed together.
SEAL_APART = 1 << 14


class TlsError(Exception):
    """The TLS handshake or record layer failed; the message says which check."""


class TlsClosed(TlsError):
    """The broker ended the TLS session (close_notify): a close, not a failure of TLS."""


def tls_context(conf: Mapping[str, Any]) -> ssl.SSLContext:
    """An SSLContext from the parsed ``ssl.*`` options; ValueError names the option that is wrong."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _versions(ctx, conf)
    verify = conf.get("enable.ssl.certificate.verification", True)
    ctx.check_hostname = verify and conf.get("ssl.endpoint.identification.algorithm", "https") == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
    _trust(ctx, conf)
    _identity(ctx, conf)
    if conf.get("ssl.cipher.suites"):
        try:
            ctx.set_ciphers(conf["ssl.cipher.suites"])
        except ssl.SSLError:
            raise ValueError("ssl.cipher.suites: no cipher matches the list") from None
    if conf.get("ssl.crl.location"):
        _load(ctx.load_verify_locations, "ssl.crl.location", cafile=conf["ssl.crl.location"])
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    return ctx


def _versions(ctx: ssl.SSLContext, conf: Mapping[str, Any]) -> None:
    """TLS 1.2 and up, or the Java client's ``ssl.enabled.protocols`` (the oldest to the newest
    listed) capped by its ``ssl.protocol`` (no version newer than it; "TLS": no cap)."""
    enabled, cap = conf.get("ssl.enabled.protocols") or [], conf.get("ssl.protocol")
    if not enabled and cap in (None, "TLS"):
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        return
    rank = {name: i for i, name in enumerate(TLS_VERSIONS)}
    allowed = sorted({rank[v] for v in enabled or ("TLSv1.2", "TLSv1.3")})
    if cap not in (None, "TLS"):
        allowed = [i for i in allowed if i <= rank[cap]] or ([rank[cap]] if not enabled else [])
    if not allowed:
        raise ValueError(f"ssl.enabled.protocols: none of {', '.join(enabled)} is allowed by ssl.protocol {cap}")
    ctx.minimum_version = _PYTHON_TLS[allowed[0]]
    ctx.maximum_version = _PYTHON_TLS[allowed[-1]]


_PYTHON_TLS = (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)


def _trust(ctx: ssl.SSLContext, conf: Mapping[str, Any]) -> None:
    location, pem = conf.get("ssl.ca.location"), conf.get("ssl.ca.pem")
    if location:
        if os.path.isdir(location):
            _load(ctx.load_verify_locations, "ssl.ca.location", capath=location)
        else:
            _load(ctx.load_verify_locations, "ssl.ca.location", cafile=location)
    if pem:
        _load(ctx.load_verify_locations, "ssl.ca.pem", cadata=pem)
    store = conf.get("ssl.truststore.location")
    if store:  # Java's options, as Spark's connector users write them
        certs = trusted_certificates(
            store, conf.get("ssl.truststore.password"), conf.get("ssl.truststore.type") or "JKS"
        )
        if not certs:
            raise ValueError("ssl.truststore.location: the store trusts no certificate")
        for der in certs:
            _load(ctx.load_verify_locations, "ssl.truststore.location", cadata=der)
    if not location and not pem and not store:
        ctx.load_default_certs()


def _identity(ctx: ssl.SSLContext, conf: Mapping[str, Any]) -> None:
    """The client certificate for mutual TLS: PEM files or strings, or a PKCS#12 keystore."""
    password = conf.get("ssl.key.password")
    if conf.get("ssl.keystore.location"):
        chain, private_key = _read_keystore(conf["ssl.keystore.location"], conf.get("ssl.keystore.password"))
        with _pem_file(chain) as cert_file, _pem_file(private_key) as key_file:
            _load(ctx.load_cert_chain, "ssl.keystore.location", cert_file, key_file, _key_password(None))
        return
    cert = conf.get("ssl.certificate.location")
    key = conf.get("ssl.key.location")
    cert_pem, key_pem = conf.get("ssl.certificate.pem"), conf.get("ssl.key.pem")
    if not (cert or cert_pem) and not (key or key_pem):
        return
    if not (cert or cert_pem) or not (key or key_pem):
        raise ValueError("ssl.certificate.location/.pem and ssl.key.location/.pem must be set together")
    with contextlib.ExitStack() as stack:
        cert_file = cert or stack.enter_context(_pem_file((cert_pem or "").encode()))
        key_file = key or stack.enter_context(_pem_file((key_pem or "").encode()))
        option = "ssl.key.location" if key else "ssl.key.pem"
        _load(ctx.load_cert_chain, option, cert_file, key_file, _key_password(password))


def _key_password(password: str | None) -> Any:
    """Always a callable: without one, OpenSSL would prompt on the terminal for an encrypted key."""

    def give() -> str:
        if password is None:
            raise _NeedsPassword
        return password

    return give


class _NeedsPassword(Exception):
    pass


def _load(fn: Any, option: str, *args: Any, **kwargs: Any) -> None:
    try:
        fn(*args, **kwargs)
    except _NeedsPassword:
        raise ValueError(f"{option}: the key is encrypted and ssl.key.password is not set") from None
    except FileNotFoundError:
        raise ValueError(f"{option}: no such file") from None
    except PermissionError:
        raise ValueError(f"{option}: cannot read the file (permission denied)") from None
    except ssl.SSLError as exc:
        if option in ("ssl.key.location", "ssl.key.pem") and _encrypted(args[1]):
            raise ValueError(f"{option}: cannot decrypt the key (wrong ssl.key.password?)") from None
        raise ValueError(f"{option}: not a usable certificate or key ({exc.reason or 'invalid PEM'})") from None
    except (OSError, ValueError):
        raise ValueError(f"{option}: not a usable certificate or key") from None


def _encrypted(key_file: str) -> bool:
    try:
        with open(key_file, "rb") as f:
            return b"ENCRYPTED" in f.read(4096)
    except OSError:
        return False


def _read_keystore(path: str, password: str | None) -> tuple[bytes, bytes]:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:
        raise ValueError("ssl.keystore.location: reading PKCS#12 needs the 'cryptography' package") from None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        raise ValueError("ssl.keystore.location: cannot read the file") from None
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError:
        raise ValueError("ssl.keystore.location: cannot open the keystore (wrong ssl.keystore.password?)") from None
    if key is None or cert is None:
        raise ValueError("ssl.keystore.location: the keystore holds no private key with its certificate")
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *extra])
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return chain, key_pem


@contextlib.contextmanager
def _pem_file(data: bytes) -> Iterator[str]:
    """``ssl`` loads certificates and keys only from files: a private one, removed at once."""
    fd, path = tempfile.mkstemp(prefix="kafkawire-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield path
    finally:
        os.unlink(path)


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
