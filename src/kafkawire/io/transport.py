"""The byte pipe under a broker connection: a non-blocking stream the IO thread drives.

`io/broker.py` talks only to `Transport`, so TLS wraps the TCP transport without the connection
logic knowing, and unit tests drive the layers above with a transport of their own. Nothing here
knows Kafka. Every failure is a `TransportError` whose text says what failed (never a secret).
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
from collections.abc import Sequence
from typing import Any, Protocol

READ = selectors.EVENT_READ
WRITE = selectors.EVENT_WRITE


class TransportError(Exception):
    """The pipe failed or the peer closed it; ``code`` is the KafkaError code to fail with."""

    def __init__(self, message: str, code: int | None = None, *, handshaking: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.handshaking = handshaking  # the pipe failed during a TLS handshake (TCP was up)


class PeerClosed(TransportError):
    """The broker closed the connection (log.connection.close says whether that is logged)."""


class Transport(Protocol):
    def fileno(self) -> int:
        """The descriptor the engine's selector waits on."""

    def start(self) -> None:
        """Begin connecting without blocking."""

    def advance(self, mask: int) -> int:
        """Drive connecting and any handshake of the transport itself (TLS) after the selector
        reported ``mask`` (0 on the first call): 0 once established, else the events to wait for."""

    def send(self, data: memoryview) -> int:
        """Bytes of ``data`` taken (0: try again when writable); an empty ``data`` pushes out what
        the transport itself holds (see `pending`)."""

    def send_many(self, views: Sequence[memoryview]) -> int:
        """Bytes taken from the start of ``views``, written as one stream (0: try again when
        writable). The views must stay unchanged until taken."""

    def recv_into(self, buffer: memoryview) -> int | None:
        """Bytes read into the start of ``buffer`` (never empty): how many, or None when none are
        there yet; the peer closing raises. A full ``buffer`` may mean more is waiting."""

    def pending(self) -> int:
        """Bytes taken by `send` still waiting inside the transport for the socket (TLS records)."""

    def close(self) -> None: ...


class SocketOptions:
    """What a new socket is set to (librdkafka's socket.* properties); a buffer size of 0 leaves
    the system's, as librdkafka does. (A plain class: a dataclass cost about a millisecond of
    every client's start-up to create.)"""

    __slots__ = ("keepalive", "nodelay", "receive_buffer", "send_buffer")

    def __init__(
        self,
        send_buffer: int = 0,  # SO_SNDBUF
        receive_buffer: int = 0,  # SO_RCVBUF
        keepalive: bool = False,  # SO_KEEPALIVE
        nodelay: bool = True,  # TCP_NODELAY: Nagle off
    ) -> None:
        self.send_buffer = send_buffer
        self.receive_buffer = receive_buffer
        self.keepalive = keepalive
        self.nodelay = nodelay

    def apply(self, sock: socket.socket) -> None:
        if self.send_buffer > 0:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
        if self.receive_buffer > 0:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.receive_buffer)
        if self.keepalive:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if self.nodelay:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


SYSTEM_DEFAULTS = SocketOptions()


class TcpTransport:
    """A plain TCP stream to one resolved address."""

    def __init__(self, family: int, address: Any, name: str, options: SocketOptions = SYSTEM_DEFAULTS) -> None:
        self._family = family
        self._address = address
        self._options = options
        self.name = name  # host:port, for messages
        self._sock: socket.socket | None = None
        self._connected = False

    def fileno(self) -> int:
        return -1 if self._sock is None else self._sock.fileno()

    def start(self) -> None:
        sock = socket.socket(self._family, socket.SOCK_STREAM)
        self._sock = sock
        try:
            sock.setblocking(False)
            self._options.apply(sock)
            err = sock.connect_ex(self._address)
        except OSError as exc:
            raise TransportError(f"connect to {self.name} failed: {exc}") from None
        if err not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
            raise TransportError(f"connect to {self.name} failed: {os.strerror(err)}")

    def advance(self, mask: int) -> int:
        if self._connected:
            return 0
        if not mask & WRITE:
            return WRITE
        assert self._sock is not None
        err = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise TransportError(f"connect to {self.name} failed: {os.strerror(err)}")
        self._connected = True
        return 0

    def send(self, data: memoryview) -> int:
        return self.send_many((data,))

    def send_many(self, views: Sequence[memoryview]) -> int:
        assert self._sock is not None
        try:
            return self._sock.sendmsg(views)  # one gathering write: the views are not joined first
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as exc:
            raise TransportError(f"send to {self.name} failed: {exc}") from None

    def recv_into(self, buffer: memoryview) -> int | None:
        assert self._sock is not None
        try:
            got = self._sock.recv_into(buffer)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as exc:
            raise TransportError(f"receive from {self.name} failed: {exc}") from None
        if not got:
            raise PeerClosed(f"{self.name}: connection closed by broker")
        return got

    def pending(self) -> int:
        return 0

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
