"""One broker connection's protocol state, without sockets or clocks (sans-IO, as h11).

The IO layer reads into the buffer this hands out (`receive_buffer`, then `received`), or hands
in bytes it has (`receive_data`), and writes the bytes this returns (`send_request`). This object
frames requests with their size prefix, numbers them, matches each response to its request (Kafka
answers in order on a connection), enforces the response-size bound, and reports requests whose
deadline (``now`` passed in by the caller) has passed.

Anything a broker sends that breaks the protocol raises `ProtocolError`: the caller must close
the connection and fail what was in flight. Invariant: a request stays in flight until its answer
decoded and passed its checks (`RESPONSE_CHECKS`), so a body that cannot be trusted leaves it
to that teardown, which fails it exactly once; answers completed before the bad frame ride on the
error (`ProtocolError.completed`). Nothing a broker sends can make this buffer more than
``max_response_size`` bytes, nor decode a frame into more than `DECODE_FACTOR` times that (estimated
before each array is built, with the count limits of `RESPONSE_LIMITS`).

Deadlines are judged on librdkafka's clock (`judged_at`): its broker thread scans for timed-out
requests about once a second, after serving the socket, so a 10 ms socket.timeout.ms never fails a
request a loopback broker answers in 30 ms.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from ..protocol import codec, headers
from ..protocol import error_codes as ec
from ..protocol.apis import API_VERSIONS, METADATA, SASL_AUTHENTICATE
from ..protocol.codec import Struct
from ..protocol.frame import Frame
from ..protocol.primitives import DecodeBudget, DecodeError
from ..protocol.schema import Api
from .broker_stats import BrokerStats
from .metadata import COUNT_LIMITS, check_response
from .mismatch import first_answer_mismatch

_SIZE_PREFIX = 4
# Answers up to this size are read into one reusable buffer, several per read; a larger one (a
# Fetch answer) is read straight into a buffer of its own size: the socket's copy is its only one.
_SMALL_READS = 1 << 16
# The last large answer's buffer is kept for the next one when no larger than this, and reused
# once nothing holds a view of it (record batches, see decoding.py): a consumer's Fetch answers
# then cost no allocation and no page faults.
_SPARE_MAX = 16 << 20
# A large answer's buffer starts at this (or what came of it already) and doubles as bytes arrive.
_FIRST_LARGE = 1 << 20


class ProtocolError(Exception):
    """The peer broke the protocol; the connection cannot be trusted any more.

    ``completed`` holds the answers that arrived whole before the bad one: deliver them, then fail
    the connection."""

    completed: list[Response]

    def __init__(self, message: str, *, mismatch: bool = False) -> None:
        super().__init__(message)
        self.completed = []
        self.mismatch = mismatch  # the listener speaks another security.protocol (core/mismatch.py)


# librdkafka's request timeout scan: rd_kafka_broker_serve runs rd_kafka_broker_timeout_scan when a
# second has passed since the last one (rdkafka_broker.c), after the socket's answers were read.
SCAN_INTERVAL = 1.0


def judged_at(deadline: float, since: float, origin: float) -> float:
    """The scan tick at which a request sent (or queued) at ``since`` with ``deadline`` is found late,
    if it is still unanswered then: the connection's ticks fall every SCAN_INTERVAL from ``origin``;
    the first at or past the deadline, and not before a whole interval since ``since`` (librdkafka's
    thread sleeps up to a second between wake-ups, and reads an answer before it scans)."""
    due = max(deadline, since + SCAN_INTERVAL)
    return origin + math.ceil((due - origin) / SCAN_INTERVAL - 1e-9) * SCAN_INTERVAL


# Checks a decoded answer must pass before it is handed on (ValueError: not trusted).
RESPONSE_CHECKS: dict[int, Callable[[Struct], None]] = {METADATA.key: check_response}
# The most elements an answer's arrays may hold (dotted field path -> count), checked as each
# array's count is read, before its elements are built.
RESPONSE_LIMITS: dict[int, Mapping[str, int]] = {METADATA.key: COUNT_LIMITS}
# Decoding one answer may allocate at most this many times receive.message.max.bytes.
DECODE_FACTOR = 4


class InFlight:
    """A request sent and awaiting its response. (Plain classes here and below rather than
    dataclasses: each dataclass cost about a millisecond of every client's start-up to create.)"""

    __slots__ = ("api", "context", "correlation_id", "deadline", "judged", "raw", "sent_at", "version")

    def __init__(
        self,
        correlation_id: int,
        api: Api,
        version: int,
        deadline: float,
        context: Any = None,  # the caller's handle (a future, a batch list…); opaque here
        sent_at: float = 0.0,  # the caller's clock when the request was framed (for round-trip times)
        raw: bool = False,  # a SASL token outside Kafka framing (after SaslHandshake v0): so is its answer
    ) -> None:
        self.correlation_id = correlation_id
        self.api = api
        self.version = version
        self.deadline = deadline
        self.context = context
        self.sent_at = sent_at
        self.raw = raw
        self.judged = float("inf")  # the scan tick its deadline is judged at (`judged_at`)

    def __repr__(self) -> str:
        return f"InFlight({self.api.name} v{self.version}, correlation_id={self.correlation_id})"


class Response:
    __slots__ = ("body", "request", "size")

    def __init__(self, request: InFlight, body: Struct, size: int = 0) -> None:
        self.request = request
        self.body = body
        self.size = size  # the answer's bytes (its size prefix left out), for diagnostics


class Connection:
    def __init__(
        self,
        client_id: str | None,
        max_response_size: int = 100_000_000,
        *,
        scan_origin: float = 0.0,  # the timeout scan's first tick (`judged_at`)
        stats: BrokerStats | None = None,  # the broker's counters (they outlive the connection)
    ) -> None:
        self.client_id = client_id
        self.max_response_size = max_response_size
        self.scan_origin = scan_origin
        self.stats = stats
        self._next_correlation_id = 0
        self._in_flight: deque[InFlight] = deque()
        self._small = bytearray(_SMALL_READS)
        self._small_used = 0  # bytes of _small holding data not yet framed
        self._large: bytearray | None = None  # a large answer's own buffer while it is being read
        self._large_size = 0  # the answer's size (the buffer may be a larger spare)
        self._large_used = 0
        self._spare: bytearray | None = None
        self._answers = 0  # answers framed so far on this connection

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def pending(self) -> list[InFlight]:
        return list(self._in_flight)

    def send_request(
        self,
        api: Api,
        version: int,
        body: Mapping[str, Any],
        *,
        now: float,
        timeout: float,
        expect_response: bool = True,
        context: Any = None,
    ) -> tuple[Frame, InFlight | None]:
        """Return the frame to write (its `pieces`); the request is tracked when it expects a response."""
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (correlation_id + 1) & 0x7FFFFFFF
        frame = headers.encode_request_frame(api, version, correlation_id, self.client_id, body)
        if self.stats is not None:
            self.stats.sent(api.key, frame.size, now)
        if not expect_response:
            return frame, None
        req = InFlight(correlation_id, api, version, now + timeout, context, now)
        req.judged = judged_at(req.deadline, now, self.scan_origin)
        self._in_flight.append(req)
        return frame, req

    def send_sasl_token(self, token: bytes, *, now: float, timeout: float, context: Any = None) -> Frame:
        """A SASL token as brokers before KIP-152 take it after SaslHandshake v0: size-prefixed,
        no header. The answer (the server's token, maybe empty) comes back as a SaslAuthenticate
        body with error code 0; a broker refusing the credentials closes the connection instead."""
        req = InFlight(-1, SASL_AUTHENTICATE, 0, now + timeout, context, now, raw=True)
        req.judged = judged_at(req.deadline, now, self.scan_origin)
        self._in_flight.append(req)
        return Frame(len(token).to_bytes(_SIZE_PREFIX, "big") + token)

    def receive_buffer(self) -> memoryview:
        """Where the next bytes from the socket go (then `received` with how many came): the rest
        of a large answer's own buffer, else the free end of the small-reads buffer. Never empty.
        Release the view before calling `received`, which may grow the buffer."""
        if self._large is not None:
            return memoryview(self._large)[self._large_used : min(len(self._large), self._large_size)]
        return memoryview(self._small)[self._small_used :]

    def received(self, count: int) -> list[Response]:
        """``count`` bytes were written at the start of the last `receive_buffer`: every response
        they complete."""
        out: list[Response] = []
        if self.stats is not None:
            self.stats.rxbytes += count
        try:
            if self._large is None:
                self._small_used += count
                self._frames(out)
            else:
                self._large_used += count
                if self._large_used == len(self._large) < self._large_size:
                    self._grow_large()
                elif self._large_used == self._large_size:
                    frame, self._large = self._large, None
                    with memoryview(frame)[: self._large_size] as payload:
                        out.append(self._complete(payload))
                    if len(frame) <= _SPARE_MAX:
                        self._spare = frame
        except ProtocolError as exc:
            exc.completed = out
            raise
        return out

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[Response]:
        """Feed bytes read elsewhere; return every response they complete."""
        out: list[Response] = []
        view = memoryview(data)
        while view:
            with self.receive_buffer() as room:  # released before `received` may grow the buffer
                n = min(len(room), len(view))
                room[:n] = view[:n]
            view = view[n:]
            try:
                out += self.received(n)
            except ProtocolError as exc:
                exc.completed = out + exc.completed
                raise
        return out

    def _frames(self, out: list[Response]) -> None:
        """Frame what the small-reads buffer holds; an answer too large for it moves, with what
        came of it so far, to a buffer of its own size."""
        buf, used, pos = self._small, self._small_used, 0
        view = memoryview(buf)
        try:
            while used - pos >= _SIZE_PREFIX:
                size = int.from_bytes(view[pos : pos + _SIZE_PREFIX], "big", signed=True)
                smallest = 0 if self._in_flight and self._in_flight[0].raw else 4  # (a raw token may be empty)
                if size < smallest or size > self.max_response_size:
                    tls = first_answer_mismatch(view[pos : pos + _SIZE_PREFIX], self._answers)
                    if tls is not None:
                        raise ProtocolError(tls, mismatch=True)
                    raise ProtocolError(
                        f"response size {size} outside {smallest}..{self.max_response_size} (receive.message.max.bytes)"
                    )
                start = pos + _SIZE_PREFIX
                if used - start < size:
                    if _SIZE_PREFIX + size > len(buf):
                        large, self._spare = self._spare, None  # reused when nothing holds a view of it
                        if large is None or sys.getrefcount(large) > 2:
                            large = bytearray(min(size, max(_FIRST_LARGE, used - start)))
                        elif len(large) < used - start:
                            large += bytes(used - start - len(large))
                        self._large, self._large_size, self._large_used = large, size, used - start
                        large[: used - start] = view[start:used]
                        pos = used
                    break
                pos = start + size
                out.append(self._complete(bytes(view[start:pos])))
        finally:
            view.release()
            if pos:  # what is left of a frame moves to the front (same length: no resize)
                buf[: used - pos] = buf[pos:used]
                self._small_used = used - pos

    def _grow_large(self) -> None:
        """Double a large answer's buffer, up to its declared size: memory follows the bytes that
        arrived, so a size prefix alone (garbage, or a hostile peer's) cannot make us allocate."""
        assert self._large is not None
        self._large += bytes(min(len(self._large), self._large_size - len(self._large)))

    def expired(self, now: float) -> list[InFlight]:
        """Requests past their deadline at the scan tick ``now`` (`judged_at`). Responses are ordered, so
        any expiry dooms the connection."""
        late = [r for r in self._in_flight if r.judged <= now]
        if self.stats is not None:
            self.stats.timed_out(len(late))
        return late

    def next_deadline(self) -> float | None:
        """When to look again: the earliest scan tick a deadline is judged at."""
        if not self._in_flight:
            return None  # (asked after each request and answer: a loop, no generator)
        earliest = float("inf")
        for r in self._in_flight:
            if r.judged < earliest:
                earliest = r.judged
        return earliest

    def _complete(self, payload: bytes | memoryview) -> Response:
        if not self._in_flight:
            raise ProtocolError("response received with no request in flight")
        if self._in_flight[0].raw:
            body = codec.default_struct(SASL_AUTHENTICATE.response.fields)
            body.auth_bytes = bytes(payload)
            self._answers += 1
            return Response(self._in_flight.popleft(), body, len(payload))
        correlation_id = headers.peek_correlation_id(payload)
        req = self._in_flight[0]
        if correlation_id != req.correlation_id:
            raise ProtocolError(f"response correlation id {correlation_id}, expected {req.correlation_id}")
        if req.api is API_VERSIONS and req.version > 0 and _api_versions_error(payload) == ec.UNSUPPORTED_VERSION:
            body = _unsupported_api_versions(payload)
        else:
            limit = min(codec.allocation_limit(len(payload)), DECODE_FACTOR * self.max_response_size)
            budget = DecodeBudget(limit, RESPONSE_LIMITS.get(req.api.key))
            try:
                body = headers.decode_response(req.api, req.version, payload, budget)[1]
            except (DecodeError, ValueError) as exc:  # (text that is not UTF-8 is a ValueError)
                raise ProtocolError(f"undecodable {req.api.name} v{req.version} response: {exc}") from None
            check = RESPONSE_CHECKS.get(req.api.key)
            try:
                if check is not None:
                    check(body)
            except ValueError as exc:
                raise ProtocolError(f"untrusted {req.api.name} v{req.version} response: {exc}") from None
        self._in_flight.popleft()  # only now: a failure above leaves it for the teardown to fail
        self._answers += 1
        return Response(req, body, len(payload))


def _api_versions_error(payload: bytes | memoryview) -> int:
    """The error code of an ApiVersions response: its header is always v0 and the code comes first."""
    return int.from_bytes(payload[4:6], "big", signed=True) if len(payload) >= 6 else 0


def _unsupported_api_versions(payload: bytes | memoryview) -> Struct:
    """A broker that does not know the ApiVersions version we asked for says so, with a body in
    v0 form (Kafka) or in a form of its own (librdkafka's mock): read what v0 can, keep the error."""
    try:
        return codec.decode(API_VERSIONS.response, 0, payload, 4)
    except DecodeError:
        body = codec.default_struct(API_VERSIONS.response.fields)
        body.error_code = ec.UNSUPPORTED_VERSION
        return body
