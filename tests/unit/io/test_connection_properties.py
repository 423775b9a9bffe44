"""librdkafka's socket and address properties as kafkawire applies them: the socket options a
connection's socket gets, the address family and the address cache of resolution."""

from __future__ import annotations

import queue
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kafkawire.base.config import CONNECTION_OPTIONS, parse_config
from kafkawire.io.connection_settings import ConnectionSettings
from kafkawire.io.resolve import Resolver
from kafkawire.io.transport import TcpTransport


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server
    server.close()


def _socket_of(conf: dict[str, Any], listener: socket.socket) -> socket.socket:
    settings = ConnectionSettings.from_config(parse_config(conf, CONNECTION_OPTIONS))
    transport = settings.transport()(socket.AF_INET, listener.getsockname(), "127.0.0.1", 0)
    transport.start()
    assert isinstance(transport, TcpTransport)
    sock = transport._sock  # the socket the connection uses
    assert sock is not None
    return sock


def test_socket_options_are_set_on_the_connections_socket(listener: socket.socket) -> None:
    sock = _socket_of(
        {
            "socket.send.buffer.bytes": 65_536,
            "socket.receive.buffer.bytes": 131_072,
            "socket.keepalive.enable": True,
            "socket.nagle.disable": False,
        },
        listener,
    )
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) >= 65_536  # (Linux doubles it)
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) >= 131_072
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
    finally:
        sock.close()


def test_default_socket_options_are_librdkafkas(listener: socket.socket) -> None:
    sock = _socket_of({}, listener)  # (buffer sizes left to the system, which tunes them itself)
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        sock.close()


def _resolve(resolver: Resolver, posted: queue.SimpleQueue[Callable[[], None]], host: str, **kw: Any) -> Any:
    answers: list[Any] = []
    resolver.resolve(host, 9092, lambda a, r: answers.append((a, r)), **kw)
    posted.get(timeout=10)()
    return answers[0]


@pytest.fixture
def resolver() -> Iterator[tuple[Resolver, queue.SimpleQueue[Callable[[], None]]]]:
    posted: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
    r = Resolver(posted.put)
    yield r, posted
    r.close()


def test_broker_address_family_limits_the_addresses(resolver: Any) -> None:
    settings = {
        family: ConnectionSettings.from_config(parse_config({"broker.address.family": family}, CONNECTION_OPTIONS))
        for family in ("any", "v4", "v6")
    }
    assert settings["v4"].address_family == socket.AF_INET and settings["v6"].address_family == socket.AF_INET6
    addresses, _ = _resolve(*resolver, "127.0.0.1", family=settings["v4"].address_family)
    assert addresses and all(family == socket.AF_INET for family, _ in addresses)
    addresses, reason = _resolve(*resolver, "127.0.0.1", family=settings["v6"].address_family)
    assert addresses is None and reason
    addresses, _ = _resolve(*resolver, "127.0.0.1", family=settings["any"].address_family)
    assert addresses


def test_broker_address_ttl_keeps_a_names_addresses(resolver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = socket.getaddrinfo

    def counting(host: str, *args: Any, **kw: Any) -> Any:
        calls.append(host)
        return real("127.0.0.1", *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", counting)
    for _ in range(3):
        addresses, _ = _resolve(*resolver, "broker.example", ttl=60.0)
        assert addresses
    assert calls == ["broker.example"]  # kept for the ttl
    for _ in range(2):
        _resolve(*resolver, "other.example", ttl=0.0)
    assert calls.count("other.example") == 2  # broker.address.ttl=0: asked each time
