"""A hostile peer for tests: a loopback proxy in front of a real broker (Tansu) that rewrites the
broker's answers on purpose, per API, to see the client survive what a broken or malicious broker
may send. It is a test double for the *peer's misbehaviour*; Kafka's semantics are still judged
by the real broker behind it.

Every request is forwarded to the broker unchanged. Each answer is handed, with the request it
answers, to the fault ruling its API (``on(api, fault, times)``); the fault returns the `Reply`
to write instead: other bytes, nothing at all (a silent peer), the bytes one at a time (a
trickling peer), then possibly a closed connection. Without a rule the answer is forwarded as is.
``clear()`` turns the peer good again. Faults are plain functions of an `Exchange`; the ones
below cover lying size prefixes, truncated frames, wrong correlation ids, garbage and seeded
mutations of valid bodies, rewritten bodies (advertised hosts, a metadata bomb, record-batch
bombs) and an ApiVersions answer whose ranges are nonsense.

Like `tests.harness.proxy.KafkaProxy`, it binds its port first; the broker must advertise it
(``TansuBroker(advertised_port=proxy.port)``) so that every connection goes through the proxy.
``add_listener()`` opens a second port to the same broker, for a broker whose address changes.
"""

from __future__ import annotations

import itertools
import random
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kafkawire.protocol import headers
from kafkawire.protocol.apis import API_BY_KEY
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api
from kafkawire.records.batch import ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER, LOG_OVERHEAD, MAGIC
from kafkawire.records.compression import ZSTD, compress
from kafkawire.records.crc import crc32c
from tests.harness.proxy import _read_frame

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "Exchange",
    "Fault",
    "HostileProxy",
    "Reply",
    "advertise",
    "api_versions_ranges",
    "cut_body",
    "duplicated",
    "forward",
    "frame",
    "garbage",
    "metadata_bomb",
    "mutate_bytes",
    "mutated",
    "record_bomb",
    "record_bomb_batch",
    "rewrite",
    "silent",
    "size_prefix",
    "trickle",
    "truncated",
    "wrong_correlation_id",
]

_LOOPBACK = "127.0.0.1"
_REQUEST_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id


@dataclass(frozen=True)
class Exchange:
    """One request and the broker's true answer to it (payloads without their size prefix)."""

    api_key: int
    api_version: int
    correlation_id: int
    request: bytes
    response: bytes
    seq: int  # how many answers this fault's rule rewrote before this one (from 0)

    @property
    def api(self) -> Api:
        return API_BY_KEY[self.api_key]

    def body(self) -> Struct:
        """The true answer, decoded."""
        return headers.decode_response(self.api, self.api_version, self.response)[1]

    def encode(self, body: Any) -> bytes:
        """A whole frame (size prefix included) answering this request with ``body``."""
        return frame(headers.encode_response(self.api, self.api_version, self.correlation_id, body))


@dataclass(frozen=True)
class Reply:
    """What the peer writes instead of the true answer."""

    data: bytes = b""
    close: bool = False  # close the connection after writing
    byte_delay: float = 0.0  # > 0: write one byte, wait this long, write the next (a trickling peer)


Fault = Callable[[Exchange], Reply]


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


# --- faults ------------------------------------------------------------------------------------


def forward(ex: Exchange) -> Reply:
    return Reply(frame(ex.response))


def silent(ex: Exchange) -> Reply:
    """Say nothing and keep the connection open (the request is never answered)."""
    return Reply()


def size_prefix(value: int) -> Fault:
    """Send the answer behind a size prefix that lies (2**31 - 1, negative...)."""

    def fault(ex: Exchange) -> Reply:
        return Reply(struct.pack(">i", value) + ex.response)

    return fault


def truncated(keep: float = 0.5, close: bool = True) -> Fault:
    """Send the first ``keep`` fraction of the frame, then close (or, with ``close=False``, stall)."""

    def fault(ex: Exchange) -> Reply:
        whole = frame(ex.response)
        return Reply(whole[: max(1, int(len(whole) * keep))], close=close)

    return fault


def wrong_correlation_id(delta: int = 1) -> Fault:
    def fault(ex: Exchange) -> Reply:
        cid = (ex.correlation_id + delta) & 0xFFFFFFFF
        return Reply(frame(struct.pack(">I", cid) + ex.response[4:]))

    return fault


def cut_body(keep: float = 0.5) -> Fault:
    """A whole frame (its size prefix matches) whose body stops early: the right correlation id,
    then only the first ``keep`` fraction of the body, so it cannot be decoded."""

    def fault(ex: Exchange) -> Reply:
        body = ex.response[4:]
        return Reply(frame(ex.response[:4] + body[: int(len(body) * keep)]))

    return fault


def duplicated(ex: Exchange) -> Reply:
    """The answer twice: the second answers no request."""
    return Reply(frame(ex.response) * 2)


def garbage(seed: int) -> Fault:
    """The right correlation id, then random bytes (seeded by ``seed`` and the answer's position)."""

    def fault(ex: Exchange) -> Reply:
        rng = random.Random(f"garbage-{seed}-{ex.api_key}-{ex.seq}")
        body = rng.randbytes(rng.choice((0, 1, 3, 8, rng.randrange(16, 4096))))
        return Reply(frame(ex.response[:4] + body))

    return fault


def trickle(byte_delay: float = 1.0) -> Fault:
    """The true answer, one byte per ``byte_delay`` seconds."""

    def fault(ex: Exchange) -> Reply:
        return Reply(frame(ex.response), byte_delay=byte_delay)

    return fault


_INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF)
_INTERESTING_INTS = (-1, 0, 1, 0x7F, 0x7FFF, 0x7FFFFFFF, -0x80000000, -0x8000, 1 << 16, 1 << 24)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to four seeded edits: bit flips, interesting bytes and integers, cuts, inserts, deletes."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not out:
            out += rng.randbytes(rng.randint(1, 8))
            continue
        at = rng.randrange(len(out))
        op = rng.randrange(7)
        if op == 0:
            out[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            out[at] = rng.choice(_INTERESTING_BYTES)
        elif op == 2:
            width = rng.choice((2, 4))
            value = rng.choice(_INTERESTING_INTS)
            out[at : at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "big")
        elif op == 3:
            del out[at:]
        elif op == 4:
            out[at:at] = rng.randbytes(rng.randint(1, 8))
        elif op == 5:
            del out[at : at + rng.randint(1, 16)]
        else:
            out[at] = (out[at] + rng.choice((-1, 1))) & 0xFF
    return bytes(out)


def mutated(seed: int, tally: Counter[str] | None = None) -> Fault:
    """The true answer with seeded edits after its correlation id (so the body's decoding is what
    meets them). The same seed and position give the same edits (the bytes they hit vary with the
    true answer: ports, topic ids). ``tally`` counts
    the mutated answers our decoder refuses ("undecodable") and those it reads ("decodable")."""

    def fault(ex: Exchange) -> Reply:
        rng = random.Random(f"mutated-{seed}-{ex.api_key}-{ex.seq}")
        body = ex.response[4:]
        for _ in range(10):  # an edit can leave the bytes as they were (a byte set to its value)
            changed = mutate_bytes(body, rng)
            if changed != body:
                break
        payload = ex.response[:4] + changed
        if tally is not None:
            try:
                headers.decode_response(ex.api, ex.api_version, payload)
                tally["decodable"] += 1
            except Exception:
                tally["undecodable"] += 1
        return Reply(frame(payload))

    return fault


def rewrite(change: Callable[[Struct, Exchange], Any]) -> Fault:
    """Decode the true answer, let ``change`` edit it (or return a new body), encode it again."""

    def fault(ex: Exchange) -> Reply:
        body = ex.body()
        new = change(body, ex)
        return Reply(ex.encode(body if new is None else new))

    return fault


def advertise(host: str, port: int) -> Fault:
    """Metadata naming every broker at ``host:port`` (an address that moved or cannot resolve)."""

    def change(body: Struct, ex: Exchange) -> None:
        for broker in body.brokers:
            broker.host, broker.port = host, port

    return rewrite(change)


def metadata_bomb(brokers: int = 200_000) -> Fault:
    """Metadata listing ``brokers`` brokers (about 2.3 MB for 200,000), all at the true address."""

    def change(body: Struct, ex: Exchange) -> None:
        real = body.brokers[0]
        extra = [
            Struct(node_id=real.node_id + 1 + i, host=real.host, port=real.port, rack=None)
            for i in range(brokers - len(body.brokers))
        ]
        body.brokers = [*body.brokers, *extra]

    return rewrite(change)


def api_versions_ranges(changes: dict[int, tuple[int, int]]) -> Fault:
    """ApiVersions naming other (min, max) ranges for some APIs (empty or absurd ones included)."""

    def change(body: Struct, ex: Exchange) -> None:
        for entry in body.api_keys:
            if entry.api_key in changes:
                entry.min_version, entry.max_version = changes[entry.api_key]

    return rewrite(change)


def record_bomb_batch(count: int, base_offset: int = 0, codec: int = ZSTD) -> bytes:
    """A valid-looking compressed v2 batch of ``count`` minimal records (7 bytes each before
    compression: 19 million fit under the 128 MiB decompression cap in about 11 KB)."""
    one = b"\x0c\x00\x00\x00\x01\x01\x00"  # length 6, attributes, ts delta 0, offset delta 0, null key/value, 0 headers
    body = compress(codec, one * count)
    out = bytearray(HEADER.size + len(body))
    out[HEADER.size :] = body
    HEADER.pack_into(
        out, 0, base_offset, len(out) - LOG_OVERHEAD, -1, MAGIC, 0, codec, count - 1, 0, 0, -1, -1, -1, count
    )
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def record_bomb(count: int, codec: int = ZSTD) -> Fault:
    """Fetch answers whose every partition holds one record-batch bomb at the offset asked."""
    cache: dict[int, bytes] = {}

    def change(body: Struct, ex: Exchange) -> None:
        request = headers.decode_request(ex.request)[1]
        asked = {
            (t.get("topic") or t.get("topic_id"), p.partition): p.fetch_offset
            for t in request.topics
            for p in t.partitions
        }
        for topic in body.responses:
            for part in topic.partitions:
                offset = asked.get((topic.get("topic") or topic.get("topic_id"), part.partition_index), 0)
                if offset not in cache:
                    cache[offset] = record_bomb_batch(count, offset, codec)
                part.records = cache[offset]
                part.error_code = 0
                part.high_watermark = max(part.high_watermark, offset + count)
                part.last_stable_offset = part.high_watermark

    return rewrite(change)


# --- the proxy ---------------------------------------------------------------------------------


@dataclass
class _Rule:
    fault: Fault
    left: int | None  # answers still to rewrite; None: until cleared
    applied: int = 0  # answers rewritten so far (the next Exchange.seq)


class _Link:
    """One client connection and its own connection to the broker."""

    def __init__(self, link_id: int, client: socket.socket, upstream: socket.socket) -> None:
        self.id = link_id
        self.client = client
        self.upstream = upstream
        self.pending: dict[int, tuple[int, int, bytes]] = {}  # correlation id -> (key, version, request)
        self.lock = threading.Lock()
        self.closed = False
        self._pumps_left = 2

    def shut(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for sock in (self.client, self.upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def pump_done(self) -> None:
        self.shut()
        with self.lock:
            self._pumps_left -= 1
            last = self._pumps_left == 0
        if last:
            self.client.close()
            self.upstream.close()


class HostileProxy:
    """See the module docstring."""

    def __init__(self) -> None:
        self._listeners: list[socket.socket] = []
        self.port = self.add_listener()
        self._upstream: tuple[str, int] | None = None
        self._lock = threading.Lock()
        self._links: dict[int, _Link] = {}
        self._ids = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._rules: dict[int | None, _Rule] = {}
        self.requests: Counter[int] = Counter()  # requests forwarded, per api key
        self.faults: Counter[int] = Counter()  # answers rewritten, per api key
        self.connections = 0  # client connections accepted, on every listener
        self.fault_applied = threading.Event()  # set whenever a rule rewrote an answer
        self.fault_errors: list[BaseException] = []  # a fault that raised (a broken test, not a peer)

    # --- life -----------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"{_LOOPBACK}:{self.port}"

    def add_listener(self) -> int:
        """Open one more loopback port to the same broker; returns it."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((_LOOPBACK, 0))
        listener.listen(64)
        self._listeners.append(listener)
        if getattr(self, "_upstream", None) is not None:
            self._spawn(lambda: self._accept_loop(listener), "hostile-accept")
        port: int = listener.getsockname()[1]
        return port

    def start(self, upstream_host: str, upstream_port: int) -> HostileProxy:
        if upstream_host != _LOOPBACK:
            raise ValueError(f"the proxy forwards to loopback only, not {upstream_host!r}")
        self._upstream = (upstream_host, upstream_port)
        for listener in self._listeners:
            self._spawn(lambda listener=listener: self._accept_loop(listener), "hostile-accept")
        return self

    def close(self) -> None:
        self._stopping.set()
        for listener in self._listeners:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        self.cut_all()
        for thread in self._threads:
            thread.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- faults ---------------------------------------------------------------------------------

    def on(self, api: Api | int | None, fault: Fault, times: int | None = None) -> None:
        """Rewrite the next ``times`` answers of ``api`` (every one until `clear` when None) with
        ``fault``. ``api=None`` rules every API that has no rule of its own."""
        key = api.key if isinstance(api, Api) else api
        with self._lock:
            self._rules[key] = _Rule(fault, times)
            self.fault_applied.clear()

    def clear(self) -> None:
        """The peer turns good: every answer is forwarded as is from now on."""
        with self._lock:
            self._rules.clear()

    def cut_all(self) -> None:
        """Close every live connection (a client then reconnects)."""
        with self._lock:
            links = list(self._links.values())
        for link in links:
            link.shut()

    def live_connections(self) -> int:
        with self._lock:
            return sum(1 for link in self._links.values() if not link.closed)

    def _fault_for(self, key: int) -> tuple[Fault, int] | None:
        with self._lock:
            rule = self._rules.get(key) or self._rules.get(None)
            if rule is None:
                return None
            if rule.left is not None:
                rule.left -= 1
                if rule.left <= 0:
                    self._rules = {k: r for k, r in self._rules.items() if r is not rule}
            self.faults[key] += 1
            rule.applied += 1
            return rule.fault, rule.applied - 1

    # --- forwarding -----------------------------------------------------------------------------

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept_loop(self, listener: socket.socket) -> None:
        assert self._upstream is not None
        while not self._stopping.is_set():
            try:
                client, _ = listener.accept()
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
            self._spawn(lambda link=link: self._requests_pump(link), f"hostile-req-{link.id}")
            self._spawn(lambda link=link: self._responses_pump(link), f"hostile-resp-{link.id}")

    def _requests_pump(self, link: _Link) -> None:
        """Client -> broker: note each request, forward it as is."""
        try:
            while True:
                whole = _read_frame(link.client)
                if whole is None or len(whole) < 4 + _REQUEST_HEADER.size:
                    return
                api_key, api_version, correlation_id = _REQUEST_HEADER.unpack_from(whole, 4)
                with self._lock:
                    self.requests[api_key] += 1
                    link.pending[correlation_id] = (api_key, api_version, whole[4:])
                try:
                    link.upstream.sendall(whole)
                except OSError:
                    return
        finally:
            link.pump_done()
            self._forget(link)

    def _responses_pump(self, link: _Link) -> None:
        """Broker -> client: each answer as its API's fault says (as is without one)."""
        try:
            while True:
                whole = _read_frame(link.upstream)
                if whole is None or len(whole) < 8:
                    return
                (correlation_id,) = struct.unpack_from(">i", whole, 4)
                with self._lock:
                    api_key, api_version, request = link.pending.pop(correlation_id, (-1, -1, b""))
                ruled = self._fault_for(api_key)
                if ruled is None:
                    reply = Reply(whole)
                else:
                    fault, seq = ruled
                    ex = Exchange(api_key, api_version, correlation_id, request, whole[4:], seq)
                    try:
                        reply = fault(ex)
                    except Exception as exc:  # a broken fault is the test's bug: say so, cut the link
                        self.fault_errors.append(exc)
                        return
                    self.fault_applied.set()
                if not self._write(link, reply):
                    return
                if reply.close:
                    return
        finally:
            link.pump_done()
            self._forget(link)

    def _write(self, link: _Link, reply: Reply) -> bool:
        try:
            if reply.byte_delay <= 0:
                link.client.sendall(reply.data)
                return True
            for i in range(len(reply.data)):
                link.client.sendall(reply.data[i : i + 1])
                if self._stopping.wait(reply.byte_delay) or link.closed:
                    return False
        except OSError:
            return False
        return True

    def _forget(self, link: _Link) -> None:
        with self._lock:
            if link.closed and self._links.get(link.id) is link:
                del self._links[link.id]
