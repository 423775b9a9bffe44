"""The fault-injecting proxy (tests/harness/proxy.py) itself, in front of the session's Tansu:
it forwards bytes unchanged, loses exactly the response it was told to, and cuts at most as
many connections as it was allowed."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from kafkawire.local_broker import TansuBroker
from kafkawire.protocol import headers
from kafkawire.protocol.apis import API_VERSIONS, METADATA
from tests.harness.proxy import KafkaProxy

pytestmark = pytest.mark.broker

WAIT = 30.0


@pytest.fixture
def proxy(tansu: TansuBroker) -> Iterator[KafkaProxy]:
    with KafkaProxy() as p:
        p.start(tansu.host, tansu.port)
        yield p


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    return sock


def exchange(sock: socket.socket, correlation_id: int) -> bytes | None:
    """Send an ApiVersions v0 request; the whole response frame, or None if the connection closed."""
    request = headers.encode_request(API_VERSIONS, 0, correlation_id, "proxy-test", {})
    sock.sendall(len(request).to_bytes(4, "big") + request)
    prefix = read_exactly(sock, 4)
    if prefix is None:
        return None
    body = read_exactly(sock, int.from_bytes(prefix, "big"))
    return None if body is None else prefix + body


def read_exactly(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        try:
            chunk = sock.recv(n - len(data))
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def test_bytes_are_forwarded_unchanged(tansu: TansuBroker, proxy: KafkaProxy) -> None:
    with connect(tansu.port) as direct, connect(proxy.port) as proxied:
        expected = exchange(direct, 7)
        got = exchange(proxied, 7)
    assert expected is not None and got == expected
    assert proxy.requests_seen(API_VERSIONS.key) == 1
    assert proxy.requests_seen(METADATA.key) == 0


def test_drop_response_loses_only_the_nth_and_closes_that_connection(proxy: KafkaProxy) -> None:
    proxy.drop_response(API_VERSIONS.key, 2)
    with connect(proxy.port) as first:
        assert exchange(first, 1) is not None
        assert exchange(first, 2) is None, "the second response must be lost and the connection closed"
    assert proxy.response_dropped.is_set()
    assert [(d.api_key, d.correlation_id) for d in proxy.dropped] == [(API_VERSIONS.key, 2)]
    assert proxy.requests_seen(API_VERSIONS.key) == 2, "the request itself reached the broker"
    with connect(proxy.port) as again:
        assert exchange(again, 3) is not None, "only one response is lost"
    assert proxy.unanswered[API_VERSIONS.key] == 1


def test_cut_randomly_cuts_no_more_than_allowed(proxy: KafkaProxy) -> None:
    with connect(proxy.port) as a, connect(proxy.port) as b:
        assert exchange(a, 1) is not None and exchange(b, 1) is not None  # both links are up
        proxy.cut_randomly(seed=1, max_cuts=1, duration=WAIT, mean_interval=0.01)
        assert proxy.cuts_done.wait(WAIT)
        assert proxy.cuts == 1
        outcomes = [exchange(a, 2), exchange(b, 2)]
    assert sum(o is None for o in outcomes) == 1, "exactly one of the two connections was cut"


def test_cut_randomly_stops_when_its_time_is_up(proxy: KafkaProxy) -> None:
    with connect(proxy.port) as a:
        assert exchange(a, 1) is not None
        # Cuts a minute apart on average, within 50 ms: none can happen.
        proxy.cut_randomly(seed=2, max_cuts=10, duration=0.05, mean_interval=60.0)
        assert proxy.cuts_done.wait(WAIT)
        assert proxy.cuts == 0
        assert exchange(a, 2) is not None
