"""A loopback TCP proxy that breaks the network between a client and a server, for fault tests.

`tests.harness.proxy.KafkaProxy` reads Kafka frames to lose one chosen response; this one is
blind to the protocol (it carries Kafka, inter-broker and ZooKeeper traffic alike) and plays the
faults a network makes, in the manner of toxiproxy's toxics, switched at run time:

* ``blackhole()``: nothing moves either way and no socket is closed: each side's writes pile up
  in its kernel buffers and no answer comes (a cable pulled, a firewall dropping packets). New
  connections are accepted and held, never joined to the server. ``heal()`` lets everything
  held move again, in order, as TCP's retransmissions would;
* ``freeze()``: the connections open now stay dead for good while new ones work (a NAT or
  firewall that dropped its idle flows: only a new connection gets through);
* ``reset()``: every open connection is closed with an RST (SO_LINGER 0) on both sides;
* ``refuse()``: new connections are reset as they arrive (a port nobody listens on), open ones
  carry on;
* ``latency(seconds, jitter)``: every chunk is held that long (plus a seeded uniform jitter)
  before it is passed on, order kept;
* ``bandwidth(bytes_per_second)``: each direction of each connection passes at most that many
  bytes per second.

``heal()`` undoes blackhole and refuse, ``clear()`` undoes every fault (frozen connections stay
dead: the flow they belonged to is gone). One thread per proxy runs a selector over every
socket, so a fault switches at one moment for all the connections.
"""

from __future__ import annotations

import contextlib
import random
import selectors
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["FaultProxy"]

_LOOPBACK = "127.0.0.1"
_CHUNK = 64 << 10
_HELD_MAX = 4 << 20  # bytes queued in one direction before the proxy stops reading its source
_RST = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends an RST


def _reset(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RST)
    except OSError:
        pass
    sock.close()


class _Flow:
    """One direction of a connection: bytes read from ``src``, held until due, written to ``dst``."""

    def __init__(self) -> None:
        self.chunks: deque[tuple[float, bytes]] = deque()  # (due, bytes), in order
        self.held = 0
        self.eof = False
        self.tokens = 0.0  # bandwidth budget, bytes
        self.refilled = time.monotonic()


class _Link:
    def __init__(self, client: socket.socket) -> None:
        self.client = client
        self.upstream: socket.socket | None = None  # joined once the proxy lets the connection through
        self.up = _Flow()  # client -> server
        self.down = _Flow()  # server -> client
        self.frozen = False
        self.closed = False


class FaultProxy:
    """A loopback proxy of its own port to ``upstream_port``; see the module docstring."""

    def __init__(self, name: str = "proxy", seed: int = 0) -> None:
        self.name = name
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((_LOOPBACK, 0))
        self._listener.listen(128)
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self.upstream_port = 0
        self._rng = random.Random(seed)
        self._links: list[_Link] = []
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)  # it is sent to under the lock: it must never wait
        self._commands: deque[tuple[Callable[[], None], threading.Event]] = deque()
        self._lock = threading.Lock()
        self._stopping = False
        self._thread: threading.Thread | None = None
        # the faults in force
        self.blackholed = False
        self.refusing = False
        self._latency = (0.0, 0.0)
        self._rate = 0.0  # bytes per second per direction, 0: unlimited
        # what happened
        self.connections = 0  # accepted and let through (at once or at a heal)
        self.refused = 0
        self.resets = 0  # connections reset by reset()

    # --- life -----------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"{_LOOPBACK}:{self.port}"

    def start(self, upstream_port: int) -> FaultProxy:
        self.upstream_port = upstream_port
        self._selector.register(self._listener, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(target=self._loop, name=f"fault-proxy-{self.name}", daemon=True)
        self._thread.start()
        return self

    def retarget(self, upstream_port: int) -> None:
        """New connections go to ``upstream_port`` from now on (the server moved)."""
        self._do(lambda: setattr(self, "upstream_port", upstream_port))

    def close(self) -> None:
        if self._thread is None:
            self._listener.close()
            return
        self._do(self._shut_everything)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- faults ---------------------------------------------------------------------------------

    def blackhole(self) -> None:
        self._do(lambda: setattr(self, "blackholed", True))

    def freeze(self) -> None:
        def run() -> None:
            for link in self._links:
                link.frozen = True

        self._do(run)

    def reset(self) -> int:
        """RST every open connection now; how many there were."""
        count = [0]

        def run() -> None:
            for link in list(self._links):
                self._drop(link, rst=True)
                count[0] += 1
            self.resets += count[0]

        self._do(run)
        return count[0]

    def refuse(self) -> None:
        self._do(lambda: setattr(self, "refusing", True))

    def latency(self, seconds: float, jitter: float = 0.0) -> None:
        self._do(lambda: setattr(self, "_latency", (seconds, jitter)))

    def bandwidth(self, bytes_per_second: float) -> None:
        if bytes_per_second <= 0:
            raise ValueError("bandwidth is a positive number of bytes per second")
        self._do(lambda: setattr(self, "_rate", float(bytes_per_second)))

    def heal(self) -> None:
        """End blackhole and refuse: what was held moves on, held connections are joined."""

        def run() -> None:
            self.blackholed = self.refusing = False

        self._do(run)

    def clear(self) -> None:
        """End every fault (frozen connections stay dead)."""

        def run() -> None:
            self.blackholed = self.refusing = False
            self._latency, self._rate = (0.0, 0.0), 0.0

        self._do(run)

    def live_connections(self) -> int:
        with self._lock:
            return sum(1 for link in self._links if not link.closed)

    # --- the loop -------------------------------------------------------------------------------

    def _do(self, command: Callable[[], None]) -> None:
        """Run ``command`` on the proxy's thread, between two rounds of forwarding, and wait for it."""
        if self._thread is None:
            command()
            return
        done = threading.Event()
        # The wake-up is sent under the lock the loop takes its commands under: a loop that is awake
        # already would otherwise run a close's shutdown, and close the wake-up pair, before the
        # send (EBADF in CI, the loop woken by a held chunk's timer).
        with self._lock:
            self._commands.append((command, done))
            with contextlib.suppress(BlockingIOError):  # full: wake-ups the loop has yet to read
                self._wake_w.send(b"x")
        if not done.wait(10):
            raise RuntimeError(f"fault proxy {self.name} did not take a command")

    def _loop(self) -> None:
        while not self._stopping:
            self._arm()
            for key, mask in self._selector.select(self._next_wake()):
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    try:
                        self._wake_r.recv(4096)
                    except BlockingIOError:
                        pass
                else:
                    link, sock = key.data
                    if mask & selectors.EVENT_READ and not link.closed:
                        self._read(link, sock)
                    if mask & selectors.EVENT_WRITE and not link.closed:
                        self._write(link, sock)
            with self._lock:
                commands = list(self._commands)
                self._commands.clear()
            for command, done in commands:
                command()
                done.set()
            for link in list(self._links):  # due bytes whose socket can take them at once
                for sock in (link.client, link.upstream):
                    if sock is not None and not link.closed:
                        self._write(link, sock)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def _shut_everything(self) -> None:
        self._stopping = True
        for link in list(self._links):
            self._drop(link, rst=False)
        self._listener.close()

    def _moving(self, link: _Link) -> bool:
        return not (self.blackholed or link.frozen) and link.upstream is not None

    def _flows(self, link: _Link, sock: socket.socket) -> tuple[_Flow, _Flow]:
        """(the flow ``sock`` feeds, the flow that writes to ``sock``)."""
        return (link.up, link.down) if sock is link.client else (link.down, link.up)

    def _arm(self) -> None:
        """Join held connections once allowed; set each socket's interest (read while its flow is
        moving and not too full, write while due bytes wait for it)."""
        now = time.monotonic()
        for link in list(self._links):
            if link.upstream is None and not self.blackholed and not link.frozen:
                self._join(link)
            for sock in (link.client, link.upstream):
                if sock is None or link.closed:
                    continue
                feeds, drains = self._flows(link, sock)
                events = 0
                if self._moving(link):
                    if not feeds.eof and feeds.held < _HELD_MAX:
                        events |= selectors.EVENT_READ
                    if drains.chunks and drains.chunks[0][0] <= now and (not self._rate or drains.tokens >= 1):
                        events |= selectors.EVENT_WRITE
                try:
                    current = self._selector.get_key(sock).events
                except KeyError:
                    current = 0
                if events == current:
                    continue
                if not events:
                    self._selector.unregister(sock)
                elif current:
                    self._selector.modify(sock, events, (link, sock))
                else:
                    self._selector.register(sock, events, (link, sock))

    def _next_wake(self) -> float:
        """Seconds until held bytes fall due or a bandwidth budget refills (at most 0.5)."""
        wake = 0.5
        now = time.monotonic()
        for link in self._links:
            if not self._moving(link):
                continue
            for flow in (link.up, link.down):
                if flow.chunks:
                    wake = min(wake, max(0.0, flow.chunks[0][0] - now))
                    if self._rate:
                        self._refill(flow, now)
                        wake = min(wake, max(0.0, (1 - flow.tokens) / self._rate))
        return max(wake, 0.001)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except (BlockingIOError, OSError):
                return
            if self.refusing:
                self.refused += 1
                _reset(client)
                continue
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(client)
            with self._lock:
                self._links.append(link)
            if not self.blackholed:
                self._join(link)

    def _join(self, link: _Link) -> None:
        """Connect the held client to the server; a server that is not there resets the client."""
        try:
            upstream = socket.create_connection((_LOOPBACK, self.upstream_port), timeout=2)
        except OSError:
            self._drop(link, rst=True)
            return
        upstream.setblocking(False)
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        link.upstream = upstream
        self.connections += 1

    def _read(self, link: _Link, sock: socket.socket) -> None:
        flow, _ = self._flows(link, sock)
        try:
            data = sock.recv(_CHUNK)
        except BlockingIOError:
            return
        except OSError:  # reset by that side: reset the other side too
            self._drop(link, rst=True)
            return
        if not data:
            flow.eof = True
            if not flow.chunks:
                self._drop(link, rst=False)
            return
        delay, jitter = self._latency
        due = time.monotonic() + delay + (self._rng.uniform(0, jitter) if jitter else 0.0)
        if flow.chunks:
            due = max(due, flow.chunks[-1][0])
        flow.chunks.append((due, data))
        flow.held += len(data)

    def _write(self, link: _Link, sock: socket.socket) -> None:
        _, flow = self._flows(link, sock)
        if not self._moving(link):
            return
        now = time.monotonic()
        while flow.chunks and flow.chunks[0][0] <= now:
            due, data = flow.chunks[0]
            size = len(data)
            if self._rate:
                self._refill(flow, now)
                size = min(size, int(flow.tokens))
                if size < 1:
                    return
            try:
                sent = sock.send(data[:size])
            except BlockingIOError:
                return
            except OSError:
                self._drop(link, rst=True)
                return
            if self._rate:
                flow.tokens -= sent
            flow.held -= sent
            if sent < len(data):
                flow.chunks[0] = (due, data[sent:])
                if sent < size:
                    return  # the socket is full
            else:
                flow.chunks.popleft()
        if flow.eof and not flow.chunks:
            self._drop(link, rst=False)

    def _refill(self, flow: _Flow, now: float) -> None:
        burst = max(1.0, self._rate / 20)  # at most 50 ms worth at once
        flow.tokens = min(burst, flow.tokens + (now - flow.refilled) * self._rate)
        flow.refilled = now

    def _drop(self, link: _Link, rst: bool) -> None:
        if link.closed:
            return
        link.closed = True
        for sock in (link.client, link.upstream):
            if sock is None:
                continue
            try:
                self._selector.unregister(sock)
            except (KeyError, ValueError):
                pass
            if rst:
                _reset(sock)
            else:
                sock.close()
        with self._lock:
            self._links.remove(link)
