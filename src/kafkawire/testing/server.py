"""The mock cluster's IO: one listening socket per broker on 127.0.0.1 and one background thread
with a selector. It moves frames and fires timers; the dispatcher decides every answer.

Answers leave a connection in request order (as Kafka's do): each request takes a slot, the
slot is filled when its answer is ready (at once, after a round-trip delay, or when a parked
request completes), and a filled slot is sent only once the ones before it went.
"""

from __future__ import annotations

import itertools
import selectors
import socket
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from .dispatch import Dispatcher

MAX_FRAME = 100 * 1024 * 1024
TICK_S = 0.05
_SIZE = 4
_PENDING: object = object()


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class _Slot:
    data: object = _PENDING  # bytes to send, None to close the connection
    ready_at: float = 0.0


@dataclass
class _Connection:
    sock: socket.socket
    broker_id: int
    conn_id: int
    inbuf: bytearray = field(default_factory=bytearray)
    outbuf: bytearray = field(default_factory=bytearray)
    slots: deque[_Slot] = field(default_factory=deque)
    closed: bool = False


class Server:
    """Listeners, connections and the loop thread; ``lock`` guards the dispatcher's world."""

    def __init__(self, broker_ids: list[int], dispatcher: Dispatcher, lock: threading.RLock) -> None:
        self.dispatcher = dispatcher
        self.lock = lock
        self.selector = selectors.DefaultSelector()
        self.listeners: dict[int, socket.socket] = {}
        self.connections: dict[int, _Connection] = {}
        self._ids = itertools.count(1)
        self._stopping = False
        self._waker_r, self._waker_w = socket.socketpair()
        self._waker_r.setblocking(False)
        self.selector.register(self._waker_r, selectors.EVENT_READ, None)
        for broker_id in broker_ids:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", 0))
            listener.listen(64)
            listener.setblocking(False)
            self.listeners[broker_id] = listener
            self.selector.register(listener, selectors.EVENT_READ, broker_id)
        self._thread = threading.Thread(target=self._run, name="kafkawire-mock-cluster", daemon=True)

    def port(self, broker_id: int) -> int:
        port: int = self.listeners[broker_id].getsockname()[1]
        return port

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        try:
            self._waker_w.send(b"x")
        except OSError:
            pass

    def stop(self) -> None:
        self._stopping = True
        self.wake()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        for conn in list(self.connections.values()):
            self._close(conn)
        for listener in self.listeners.values():
            self.selector.unregister(listener)
            listener.close()
        self.selector.unregister(self._waker_r)
        self._waker_r.close()
        self._waker_w.close()
        self.selector.close()

    # -- the loop ---------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping:
            events = self.selector.select(self._timeout())
            with self.lock:
                try:
                    self._turn(events)
                except Exception:  # a bug in the mock: reported by close(), the brokers keep serving
                    self.dispatcher.failures.append(traceback.format_exc())

    def _turn(self, events: list[tuple[selectors.SelectorKey, int]]) -> None:
        for key, mask in events:
            if key.fileobj is self._waker_r:
                self._drain_waker()
            elif isinstance(key.data, int):
                self._accept(key.data)
            else:
                self._serve(key.data, mask)
        self._drop_down_brokers()
        self.dispatcher.tick(now_ms())
        for conn in list(self.connections.values()):
            self._flush(conn)

    def _timeout(self) -> float:
        wait = TICK_S
        now = time.monotonic()
        for conn in self.connections.values():
            if conn.slots and conn.slots[0].data is not _PENDING:
                wait = min(wait, max(0.0, conn.slots[0].ready_at - now))
        return wait

    def _drain_waker(self) -> None:
        try:
            while self._waker_r.recv(4096):
                pass
        except BlockingIOError:
            pass

    def _accept(self, broker_id: int) -> None:
        try:
            sock, _ = self.listeners[broker_id].accept()
        except BlockingIOError:
            return
        if broker_id in self.dispatcher.world.faults.down:
            sock.close()
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Connection(sock, broker_id, next(self._ids))
        self.connections[conn.conn_id] = conn
        self.selector.register(sock, selectors.EVENT_READ, conn)

    def _drop_down_brokers(self) -> None:
        down = self.dispatcher.world.faults.down
        for conn in [c for c in self.connections.values() if c.broker_id in down]:
            self._close(conn)

    def _serve(self, conn: _Connection, mask: int) -> None:
        if mask & selectors.EVENT_READ and not conn.closed:
            try:
                data = conn.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                data = b""
            if data == b"":
                self._close(conn)
                return
            if data:
                conn.inbuf += data
                self._frames(conn)
        if mask & selectors.EVENT_WRITE and not conn.closed:
            self._write(conn)

    def _frames(self, conn: _Connection) -> None:
        while len(conn.inbuf) >= _SIZE and not conn.closed:
            size = int.from_bytes(conn.inbuf[:_SIZE], "big", signed=True)
            if size < 0 or size > MAX_FRAME:
                self._close(conn)
                return
            if len(conn.inbuf) < _SIZE + size:
                return
            frame = bytes(conn.inbuf[_SIZE : _SIZE + size])
            del conn.inbuf[: _SIZE + size]
            slot = _Slot()
            conn.slots.append(slot)
            self.dispatcher.handle(conn.broker_id, conn.conn_id, frame, now_ms(), _filler(slot))

    def _flush(self, conn: _Connection) -> None:
        now = time.monotonic()
        while conn.slots and not conn.closed:
            slot = conn.slots[0]
            if slot.data is _PENDING or slot.ready_at > now:
                break
            conn.slots.popleft()
            if slot.data is None:
                self._write(conn)
                self._close(conn)
                return
            assert isinstance(slot.data, bytes)
            conn.outbuf += slot.data
        self._write(conn)

    def _write(self, conn: _Connection) -> None:
        if conn.closed:
            return
        if conn.outbuf:
            try:
                sent = conn.sock.send(conn.outbuf)
                del conn.outbuf[:sent]
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                self._close(conn)
                return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.outbuf else 0)
        self.selector.modify(conn.sock, events, conn)

    def _close(self, conn: _Connection) -> None:
        if conn.closed:
            return
        conn.closed = True
        self.connections.pop(conn.conn_id, None)
        self.dispatcher.forget_connection(conn.conn_id)
        try:
            self.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()


def _filler(slot: _Slot) -> Callable[[bytes | None, int], None]:
    def fill(data: bytes | None, delay_ms: int) -> None:
        slot.data = data
        slot.ready_at = time.monotonic() + delay_ms / 1000.0

    return fill
