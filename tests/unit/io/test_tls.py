"""TLS sessions over memory buffers, handshaking with an in-process TLS server (Python's ssl, the
OpenSSL server side): verification outcomes, mutual TLS, and the SSLContext built from options."""

from __future__ import annotations

import contextlib
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kafkawire.io.tls import SEAL_APART, TlsError, TlsSession, TlsTransport
from kafkawire.io.transport import TransportError
from kafkawire.security.tls_context import tls_context
from tests.harness.certs import KEY_PASSWORD, STORE_PASSWORD, Authority, Leaf, make_ca, make_leaf


@dataclass
class Pki:
    dir: Path
    ca: Authority
    other_ca: Authority
    leaves: dict[str, Leaf] = field(default_factory=dict)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    d = tmp_path_factory.mktemp("pki")
    ca = make_ca(d)
    p = Pki(d, ca, make_ca(d, "other-ca"))
    p.leaves = {
        "server": make_leaf(d, "server", ca),
        "expired": make_leaf(d, "expired", ca, expired=True),
        "other_host": make_leaf(d, "other", ca, hosts=("broker.example.com",)),
        "self_signed": make_leaf(d, "self", None),
        "client": make_leaf(d, "client", ca, hosts=(), client=True),
    }
    return p


class Server:
    """The server side of one TLS connection, in memory."""

    def __init__(self, leaf: Leaf, client_ca: Authority | None = None) -> None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(leaf.cert, leaf.key)
        if client_ca is not None:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(client_ca.cert)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_side=True)
        self.done = False

    def step(self) -> None:
        if not self.done:
            try:
                self.tls.do_handshake()
                self.done = True
            except ssl.SSLWantReadError:
                pass


def receive(client: TlsSession, data: bytes) -> bytes:
    """Ciphertext fed to the session; the plaintext it completes (b"" if none yet)."""
    client.feed(data)
    buffer, got = memoryview(bytearray(1 << 16)), b""
    while n := client.read_into(buffer):
        got += buffer[:n]
    return got


def handshake(client: TlsSession, server: Server) -> None:
    for _ in range(10):
        done = client.handshake()
        server.incoming.write(client.outgoing())
        server.step()
        receive(client, server.outgoing.read())
        if done and server.done:
            return
    raise AssertionError("the handshake did not finish")


def connect(conf: dict[str, Any], server: Server, host: str = "127.0.0.1") -> TlsSession:
    client = TlsSession(tls_context(conf), host)
    handshake(client, server)
    return client


def test_handshake_then_records_both_ways(pki: Pki) -> None:
    server = Server(pki.leaves["server"])
    client = connect({"ssl.ca.location": str(pki.ca.cert)}, server)
    client.send(b"x" * 100_000)
    server.incoming.write(client.outgoing())
    got = b""
    while len(got) < 100_000:
        got += server.tls.read(1 << 16)
    assert got == b"x" * 100_000
    server.tls.write(b"answer")
    assert receive(client, server.outgoing.read()) == b"answer"
    assert receive(client, b"") == b""


def test_plaintext_is_opened_into_the_callers_buffer(pki: Pki) -> None:
    server = Server(pki.leaves["server"])
    client = connect({"ssl.ca.location": str(pki.ca.cert)}, server)
    buffer = memoryview(bytearray(70_000))
    assert client.read_into(buffer) == 0  # nothing yet: more ciphertext needed
    sent = bytes(range(256)) * 1000
    server.tls.write(sent)
    client.feed(server.outgoing.read())
    got = b""
    while n := client.read_into(buffer):
        got += buffer[:n]
    assert got == sent


def test_host_name_checked_by_default_for_names_and_addresses(pki: Pki) -> None:
    conf = {"ssl.ca.location": str(pki.ca.cert)}
    connect(conf, Server(pki.leaves["server"]), "localhost")
    with pytest.raises(TlsError, match="mismatch, certificate is not valid"):
        connect(conf, Server(pki.leaves["other_host"]), "127.0.0.1")
    # ssl.endpoint.identification.algorithm=none turns the name check off, not the chain check
    connect({**conf, "ssl.endpoint.identification.algorithm": "none"}, Server(pki.leaves["other_host"]))


@pytest.mark.parametrize(
    ("leaf", "reason"),
    [("expired", "certificate has expired"), ("self_signed", "self-signed certificate")],
)
def test_verification_failures_say_which_check(pki: Pki, leaf: str, reason: str) -> None:
    with pytest.raises(TlsError, match=reason):
        connect({"ssl.ca.location": str(pki.ca.cert)}, Server(pki.leaves[leaf]))


def test_unknown_ca(pki: Pki) -> None:
    with pytest.raises(TlsError, match="unable to get local issuer certificate"):
        connect({"ssl.ca.location": str(pki.other_ca.cert)}, Server(pki.leaves["server"]))
    # without verification anything goes (enable.ssl.certificate.verification=false)
    connect({"enable.ssl.certificate.verification": False}, Server(pki.leaves["self_signed"]))


def test_ca_as_pem_string(pki: Pki) -> None:
    connect({"ssl.ca.pem": pki.ca.cert.read_text()}, Server(pki.leaves["server"]))


@pytest.mark.parametrize(
    "identity",
    [
        lambda c: {"ssl.certificate.location": str(c.cert), "ssl.key.location": str(c.key)},
        lambda c: {"ssl.certificate.pem": c.cert.read_text(), "ssl.key.pem": c.key.read_text()},
        lambda c: {
            "ssl.certificate.location": str(c.cert),
            "ssl.key.location": str(c.encrypted_key),
            "ssl.key.password": KEY_PASSWORD,
        },
        lambda c: {"ssl.keystore.location": str(c.pkcs12), "ssl.keystore.password": STORE_PASSWORD},
    ],
    ids=["pem-files", "pem-strings", "encrypted-key", "pkcs12"],
)
def test_mutual_tls(pki: Pki, identity: Any) -> None:
    conf = {"ssl.ca.location": str(pki.ca.cert), **identity(pki.leaves["client"])}
    server = Server(pki.leaves["server"], client_ca=pki.ca)
    connect(conf, server)
    assert server.tls.getpeercert() is not None


def test_mutual_tls_without_a_client_certificate_fails(pki: Pki) -> None:
    server = Server(pki.leaves["server"], client_ca=pki.ca)
    client = TlsSession(tls_context({"ssl.ca.location": str(pki.ca.cert)}), "127.0.0.1")
    with pytest.raises((TlsError, ssl.SSLError)):
        handshake(client, server)
        client.send(b"hello")  # TLS 1.3: the refusal arrives after the client finished
        server.incoming.write(client.outgoing())
        server.tls.read(10)


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        ({"ssl.ca.location": "/nonexistent/ca.pem"}, "ssl.ca.location: no such file"),
        ({"ssl.certificate.location": "{cert}"}, "must be set together"),
        (
            {"ssl.certificate.location": "{cert}", "ssl.key.location": "{enc}", "ssl.key.password": "wrong-pass"},
            "ssl.key.location: cannot decrypt",
        ),
        ({"ssl.certificate.location": "{cert}", "ssl.key.location": "{enc}"}, "ssl.key.password is not set"),
        ({"ssl.keystore.location": "{p12}", "ssl.keystore.password": "wrong-pass"}, "wrong ssl.keystore.password"),
        ({"ssl.ca.pem": "not a certificate"}, "ssl.ca.pem"),
        ({"ssl.cipher.suites": "NO-SUCH-CIPHER"}, "ssl.cipher.suites"),
    ],
)
def test_option_errors_name_the_option_and_hide_secrets(pki: Pki, conf: dict[str, str], message: str) -> None:
    c = pki.leaves["client"]
    paths = {"cert": str(c.cert), "enc": str(c.encrypted_key), "p12": str(c.pkcs12)}
    conf = {k: v.format(**paths) for k, v in conf.items()}
    with pytest.raises(ValueError, match=message) as info:
        tls_context(conf)
    assert "wrong-pass" not in str(info.value)


def test_tls_1_2_is_the_minimum() -> None:
    assert tls_context({}).minimum_version is ssl.TLSVersion.TLSv1_2


class Pipe:
    """The TCP side of a TlsTransport in memory: hands over what the server wrote, then the close."""

    name = "127.0.0.1:9093"

    def __init__(self) -> None:
        self.incoming = bytearray()  # ciphertext from the server, not read yet
        self.sent = bytearray()  # ciphertext from the client
        self.closed = False  # the server closed TCP once ``incoming`` is read

    def recv_into(self, buffer: memoryview) -> int | None:
        if not self.incoming:
            if self.closed:
                raise TransportError(f"{self.name}: connection closed by broker")
            return None
        n = min(len(buffer), len(self.incoming))
        buffer[:n] = self.incoming[:n]
        del self.incoming[:n]
        return n

    def send(self, data: memoryview) -> int:
        self.sent += data
        return len(data)


@pytest.mark.parametrize("close_notify", [True, False], ids=["close_notify", "tcp_close_only"])
def test_an_answer_that_arrives_with_the_close_is_handed_over_before_the_close(pki: Pki, close_notify: bool) -> None:
    server = Server(pki.leaves["server"])
    session = connect({"ssl.ca.location": str(pki.ca.cert)}, server)
    pipe = Pipe()
    transport = TlsTransport(pipe, session)  # type: ignore[arg-type]
    transport._tcp_up = True
    server.tls.write(b"the last answer")
    if close_notify:
        with contextlib.suppress(ssl.SSLWantReadError):
            server.tls.unwrap()
    pipe.incoming += server.outgoing.read()
    pipe.closed = True
    buffer = memoryview(bytearray(4096))
    n = transport.recv_into(buffer)
    assert n is not None and bytes(buffer[:n]) == b"the last answer"
    with pytest.raises(TransportError) as closed:
        transport.recv_into(buffer)
    assert closed.value.code is None and "closed by broker" in str(closed.value)  # a close, not a TLS failure


class SlowPipe(Pipe):
    """A socket that takes at most ``room`` bytes per write."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def send(self, data: memoryview) -> int:
        n = min(self.room, len(data))
        self.sent += data[:n]
        return n


@pytest.mark.parametrize("room", [1 << 30, 10_000], ids=["socket-takes-all", "socket-takes-some"])
def test_views_sealed_apart_or_joined_reach_the_server_in_order(pki: Pki, room: int) -> None:
    """A frame's pieces: large ones sealed from their own buffers, runs of small ones joined; the
    server opens exactly their concatenation, whatever the socket takes per write."""
    server = Server(pki.leaves["server"])
    session = connect({"ssl.ca.location": str(pki.ca.cert)}, server)
    pipe = SlowPipe(room)
    transport = TlsTransport(pipe, session)  # type: ignore[arg-type]
    transport._tcp_up = True
    sizes = [80, 12, 40_000, 12, 7, 3, 70_000, 5, SEAL_APART, SEAL_APART - 1]
    views = [memoryview(bytes([i]) * n) for i, n in enumerate(sizes)]
    frames = [views, [memoryview(b"second frame")]]
    for frame in frames:
        while not transport.send_many(frame):  # taken whole once the ciphertext before it is out
            transport.send(memoryview(b""))
    while transport.pending():
        transport.send(memoryview(b""))
    server.incoming.write(bytes(pipe.sent))
    opened = bytearray()
    with contextlib.suppress(ssl.SSLWantReadError):
        while chunk := server.tls.read(1 << 20):
            opened += chunk
    assert bytes(opened) == b"".join(bytes(v) for frame in frames for v in frame)
