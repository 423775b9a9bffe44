"""The network fault proxy (tests/harness/fault_proxy.py) itself, in front of the session's Tansu:
each fault does what it says, and only that. The checks are on what arrives and what does not;
the only time bounds are lower bounds (a proxy that holds bytes cannot pass them early however
loaded the machine is)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from kafkawire.local_broker import TansuBroker
from kafkawire.protocol import headers
from kafkawire.protocol.apis import API_VERSIONS
from tests.broker.harness.test_proxy import exchange, read_exactly
from tests.harness.fault_proxy import FaultProxy

pytestmark = pytest.mark.broker

WAIT = 30.0
QUIET = 1.0  # how long "nothing arrives" is watched for


@pytest.fixture
def proxy(tansu: TansuBroker) -> Iterator[FaultProxy]:
    with FaultProxy("test", seed=1).start(tansu.port) as p:
        yield p


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=WAIT)


def send_request(sock: socket.socket, correlation_id: int) -> None:
    """The ApiVersions request `exchange` sends, without waiting for its answer."""
    request = headers.encode_request(API_VERSIONS, 0, correlation_id, "proxy-test", {})
    sock.sendall(len(request).to_bytes(4, "big") + request)


def silent(sock: socket.socket, seconds: float = QUIET) -> bool:
    """Nothing arrives for ``seconds`` and the connection is neither closed nor reset."""
    sock.settimeout(seconds)
    try:
        data = sock.recv(1)
    except TimeoutError:
        return True
    except ConnectionResetError:
        return False
    finally:
        sock.settimeout(WAIT)
    del data  # an answer, or the connection closed
    return False


def reset_by_peer(port: int) -> bool:
    """A connection, a request and an answer awaited meet an RST (on the connect or the send,
    when it came that early)."""
    try:
        with connect(port) as sock:
            send_request(sock, 1)
            sock.recv(1)
    except (ConnectionResetError, BrokenPipeError):
        return True
    return False


def answer(sock: socket.socket, size: int) -> bytes | None:
    return read_exactly(sock, size)


@pytest.fixture
def reference(tansu: TansuBroker) -> bytes:
    """The broker's ApiVersions answer to correlation id 1, asked directly."""
    with connect(tansu.port) as direct:
        frame = exchange(direct, 1)
    assert frame is not None
    return frame


def test_bytes_are_forwarded_unchanged(proxy: FaultProxy, reference: bytes) -> None:
    with connect(proxy.port) as sock:
        assert exchange(sock, 1) == reference
    assert proxy.connections == 1


def test_blackhole_holds_both_ways_keeps_sockets_open_and_heal_delivers(proxy: FaultProxy, reference: bytes) -> None:
    with connect(proxy.port) as before:
        assert exchange(before, 1) == reference
        proxy.blackhole()
        send_request(before, 1)
        with connect(proxy.port) as during:  # accepted, never joined to the broker
            send_request(during, 1)
            assert silent(before) and silent(during)
            assert proxy.connections == 1, "a connection made during the blackhole reached the broker"
            proxy.heal()
            assert answer(before, len(reference)) == reference, "the held request was lost"
            assert answer(during, len(reference)) == reference
    assert proxy.connections == 2


def test_freeze_kills_open_connections_for_good_and_lets_new_ones_through(proxy: FaultProxy, reference: bytes) -> None:
    with connect(proxy.port) as old:
        assert exchange(old, 1) == reference
        proxy.freeze()
        send_request(old, 1)
        with connect(proxy.port) as new:
            assert exchange(new, 1) == reference
        proxy.clear()
        assert silent(old), "a frozen connection came back"


def test_reset_sends_an_rst_to_the_client(proxy: FaultProxy, reference: bytes) -> None:
    with connect(proxy.port) as a, connect(proxy.port) as b:
        assert exchange(a, 1) == reference and exchange(b, 1) == reference
        assert proxy.reset() == 2
        for sock in (a, b):
            with pytest.raises(ConnectionResetError):
                sock.recv(1)
    with connect(proxy.port) as again:
        assert exchange(again, 1) == reference, "reset is one moment, not a state"


def test_refuse_resets_new_connections_and_leaves_open_ones(proxy: FaultProxy, reference: bytes) -> None:
    with connect(proxy.port) as old:
        assert exchange(old, 1) == reference
        proxy.refuse()
        assert reset_by_peer(proxy.port)
        assert proxy.refused == 1
        assert exchange(old, 1) == reference
        proxy.heal()
        with connect(proxy.port) as after:
            assert exchange(after, 1) == reference


def test_latency_holds_every_chunk(proxy: FaultProxy, reference: bytes) -> None:
    proxy.latency(3 * QUIET)
    with connect(proxy.port) as sock:
        send_request(sock, 1)
        assert silent(sock), "the answer came before the latency was up"
        assert answer(sock, len(reference)) == reference


def test_bandwidth_trickles_the_answer(proxy: FaultProxy, reference: bytes) -> None:
    rate = len(reference) // 4  # the answer takes about 4 s each way
    proxy.bandwidth(rate)
    with connect(proxy.port) as sock:
        send_request(sock, 1)
        got = b""
        until = time.monotonic() + QUIET
        while len(got) < len(reference) and time.monotonic() < until:
            sock.settimeout(max(0.01, until - time.monotonic()))
            try:
                got += sock.recv(65536)
            except TimeoutError:
                break
        sock.settimeout(WAIT)
        assert len(got) < len(reference), "the whole answer passed within a second"
        rest = answer(sock, len(reference) - len(got))
        assert rest is not None and got + rest == reference
    proxy.clear()
    with connect(proxy.port) as fast:
        assert exchange(fast, 1) == reference


def test_a_server_that_is_gone_resets_the_client(proxy: FaultProxy, reference: bytes) -> None:
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        gone = spare.getsockname()[1]  # nothing listens on it
    proxy.retarget(gone)
    assert reset_by_peer(proxy.port)


class _SlowWake:
    """The proxy's wake-up socket with a send that is late by more than one round of the loop
    (it takes commands every 0.5 s with or without a wake-up)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def send(self, data: bytes) -> int:
        time.sleep(1.2)
        return self._sock.send(data)

    def close(self) -> None:
        self._sock.close()


def test_a_command_is_not_taken_before_its_wake_up_is_sent(tansu: TansuBroker) -> None:
    """close() on a loop that is awake: the shutdown must not run, and close the wake-up pair,
    before close() has sent its wake-up."""
    proxy = FaultProxy("slow-wake").start(tansu.port)
    proxy._wake_w = _SlowWake(proxy._wake_w)  # type: ignore[assignment]
    proxy.close()
    assert proxy.live_connections() == 0
