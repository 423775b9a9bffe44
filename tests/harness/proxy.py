"""A loopback TCP proxy in front of a real broker, for fault tests: it loses responses and cuts
connections, and otherwise forwards every byte unchanged.

It is a test harness, not a broker: requests and responses are read as Kafka frames (a 4-byte
size, then the payload) only to know which request each response answers; the frames are
forwarded exactly as received unless a fault says otherwise. The faults:

* ``drop_response(api_key, nth)``: the ``nth`` request of ``api_key`` (counted from that call)
  is forwarded, so the broker acts on it, but its response is swallowed and the client's
  connection closed, which is what a lost response looks like to a client;
* ``cut_randomly(seed, max_cuts, duration, mean_interval)``: a seeded RNG closes random live
  connections at random moments, at most ``max_cuts`` times, only within ``duration`` seconds;
* ``alter_response(api_key, change)``: the next response of ``api_key`` is replaced by
  ``change(body)`` (the bytes after the correlation id; the size prefix is recomputed), as a
  broker with a bug (or a hostile one) would answer.

Clients must be told to connect to the proxy, not the broker: the broker has to advertise the
proxy's address in its Metadata (``TansuBroker(advertised_port=proxy.port)``). So the proxy binds
its listening port first (``port`` is known at construction) and learns the broker's address
with ``start(upstream_host, upstream_port)``.
"""

from __future__ import annotations

import itertools
import random
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["DroppedResponse", "KafkaProxy"]

_LOOPBACK = "127.0.0.1"
_REQUEST_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id
_MAX_FRAME = 256 << 20


@dataclass(frozen=True)
class DroppedResponse:
    api_key: int
    api_version: int
    correlation_id: int


def _recv_exact(sock: socket.socket, count: int) -> bytes | None:
    """``count`` bytes, or None when the peer closed (or the socket was shut down) first."""
    chunks = bytearray()
    while len(chunks) < count:
        try:
            chunk = sock.recv(min(count - len(chunks), 1 << 20))
        except OSError:
            return None
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _read_frame(sock: socket.socket) -> bytes | None:
    """One whole Kafka frame, size prefix included, exactly as it came off the wire."""
    prefix = _recv_exact(sock, 4)
    if prefix is None:
        return None
    (size,) = struct.unpack(">i", prefix)
    if not 0 <= size <= _MAX_FRAME:
        return None
    payload = _recv_exact(sock, size)
    return None if payload is None else prefix + payload


class _Link:
    """One client connection and its own connection to the broker."""

    def __init__(self, link_id: int, client: socket.socket, upstream: socket.socket) -> None:
        self.id = link_id
        self.client = client
        self.upstream = upstream
        self.pending: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)
        self.drop: set[int] = set()  # correlation ids whose response is to be lost
        self.lock = threading.Lock()
        self.closed = False
        self._pumps_left = 2

    def shut(self) -> bool:
        """Shut both sockets down (the pumps notice and exit); True if this call closed the link."""
        with self.lock:
            if self.closed:
                return False
            self.closed = True
        for sock in (self.client, self.upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return True

    def pump_done(self) -> None:
        """Each pump calls this once on exit; the last one releases the sockets."""
        self.shut()
        with self.lock:
            self._pumps_left -= 1
            last = self._pumps_left == 0
        if last:
            self.client.close()
            self.upstream.close()


class KafkaProxy:
    """A loopback proxy for Kafka connections; see the module docstring."""

    def __init__(self) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((_LOOPBACK, 0))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._upstream: tuple[str, int] | None = None
        self._lock = threading.Lock()
        self._links: dict[int, _Link] = {}
        self._ids = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._requests: Counter[int] = Counter()
        self._drop_rules: dict[int, int] = {}  # api key -> requests of that key still to let pass
        self._alter_rules: dict[int, Callable[[bytes], bytes]] = {}  # api key -> change of its next answer
        self.altered: list[int] = []  # api keys of the responses altered so far
        self.dropped: list[DroppedResponse] = []
        self.response_dropped = threading.Event()
        self.cuts = 0  # connections closed by cut_randomly
        self.cuts_done = threading.Event()  # cut_randomly finished (its count or its time is up)
        self.cuts_done.set()
        self._cutting = threading.Event()
        self.connections = 0  # client connections accepted
        # Requests (by api key) whose connection went away before their response was forwarded:
        # the broker may have acted on them, the client never heard.
        self.unanswered: Counter[int] = Counter()

    # --- life -----------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"{_LOOPBACK}:{self.port}"

    def start(self, upstream_host: str, upstream_port: int) -> KafkaProxy:
        if upstream_host != _LOOPBACK:
            raise ValueError(f"the proxy forwards to loopback only, not {upstream_host!r}")
        self._upstream = (upstream_host, upstream_port)
        self._spawn(self._accept_loop, "proxy-accept")
        return self

    def close(self) -> None:
        self._stopping.set()
        self._cutting.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            links = list(self._links.values())
        for link in links:
            link.shut()
        for thread in self._threads:
            thread.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- faults and observations ----------------------------------------------------------------

    def drop_response(self, api_key: int, nth: int = 1) -> None:
        """Lose the response to the ``nth`` request of ``api_key`` seen from now on (1: the next)."""
        if nth < 1:
            raise ValueError("nth counts from 1")
        with self._lock:
            self._drop_rules[api_key] = nth - 1

    def alter_response(self, api_key: int, change: Callable[[bytes], bytes]) -> None:
        """Replace the body of the next response to ``api_key`` by ``change(body)``."""
        with self._lock:
            self._alter_rules[api_key] = change

    def requests_seen(self, api_key: int) -> int:
        """Requests of ``api_key`` forwarded to the broker so far."""
        with self._lock:
            return self._requests[api_key]

    def live_connections(self) -> int:
        with self._lock:
            return sum(1 for link in self._links.values() if not link.closed)

    def cut_randomly(self, seed: int, max_cuts: int, duration: float, mean_interval: float) -> None:
        """Close a random live connection at random moments (exponential gaps of ``mean_interval``
        seconds on average), at most ``max_cuts`` times and only within ``duration`` seconds.
        ``cuts`` counts the connections really closed; ``cuts_done`` is set at the end."""
        rng = random.Random(seed)
        self.cuts_done.clear()
        self._cutting = stop = threading.Event()

        def run() -> None:
            stop_at = time.monotonic() + duration
            try:
                while self.cuts < max_cuts:
                    wait = rng.expovariate(1.0 / mean_interval)
                    if time.monotonic() + wait >= stop_at or stop.wait(wait) or self._stopping.is_set():
                        return
                    with self._lock:
                        live = sorted(i for i, link in self._links.items() if not link.closed)
                        victim = self._links.get(rng.choice(live)) if live else None
                    if victim is not None and victim.shut():
                        self.cuts += 1
            finally:
                self.cuts_done.set()

        self._spawn(run, "proxy-cutter")

    def stop_cutting(self) -> None:
        """End ``cut_randomly`` now (it returns at once if it has already ended)."""
        self._cutting.set()
        self.cuts_done.wait(5)

    # --- forwarding -----------------------------------------------------------------------------

    def _spawn(self, target: object, name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        assert self._upstream is not None
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._upstream, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(next(self._ids), client, upstream)
            with self._lock:
                self._links[link.id] = link
                self.connections += 1
            self._spawn(lambda link=link: self._requests_pump(link), f"proxy-req-{link.id}")
            self._spawn(lambda link=link: self._responses_pump(link), f"proxy-resp-{link.id}")

    def _requests_pump(self, link: _Link) -> None:
        """Client -> broker: note each request's api key and correlation id, forward it as is."""
        try:
            while True:
                frame = _read_frame(link.client)
                if frame is None or len(frame) < 4 + _REQUEST_HEADER.size:
                    return
                api_key, api_version, correlation_id = _REQUEST_HEADER.unpack_from(frame, 4)
                with self._lock:
                    self._requests[api_key] += 1
                    left = self._drop_rules.get(api_key)
                    if left is not None:
                        if left == 0:
                            del self._drop_rules[api_key]
                            link.drop.add(correlation_id)
                        else:
                            self._drop_rules[api_key] = left - 1
                    link.pending[correlation_id] = (api_key, api_version)
                try:
                    link.upstream.sendall(frame)
                except OSError:
                    return
        finally:
            link.pump_done()
            self._forget(link)

    def _responses_pump(self, link: _Link) -> None:
        """Broker -> client: forward each response as is, unless it is one to lose."""
        try:
            while True:
                frame = _read_frame(link.upstream)
                if frame is None or len(frame) < 8:
                    return
                (correlation_id,) = struct.unpack_from(">i", frame, 4)
                with self._lock:
                    api_key, api_version = link.pending.pop(correlation_id, (-1, -1))
                    lose = correlation_id in link.drop
                    change = self._alter_rules.pop(api_key, None)
                if change is not None:
                    payload = frame[4:8] + change(frame[8:])
                    frame = struct.pack(">i", len(payload)) + payload
                    self.altered.append(api_key)
                if lose:
                    self.dropped.append(DroppedResponse(api_key, api_version, correlation_id))
                    with self._lock:
                        self.unanswered[api_key] += 1
                    self.response_dropped.set()  # before the client can notice the close
                    link.shut()  # as a lost response looks to a client: the connection goes away
                    return
                try:
                    link.client.sendall(frame)
                except OSError:
                    return
        finally:
            with self._lock:
                self.unanswered.update(api_key for api_key, _ in link.pending.values())
                link.pending.clear()
            link.pump_done()
            self._forget(link)

    def _forget(self, link: _Link) -> None:
        with self._lock:
            if link.closed and self._links.get(link.id) is link:
                del self._links[link.id]
