"""The IO layer's mechanics over an in-memory transport on a virtual clock: what a connection does
when its peer's bytes cannot be trusted, when a name does not resolve, when the broker moves, when
the handshake stalls. The peer here plays misbehaviour byte by byte; it judges nothing (the real
brokers in tests/broker do)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.core.kafka_error import KafkaError
from kafkawire.io.broker import BrokerConnection, ConnectionState
from kafkawire.io.connection_settings import ConnectionSettings
from kafkawire.io.io_engine import Timer
from kafkawire.io.resolve import lookup
from kafkawire.io.transport import READ, WRITE, PeerClosed, TransportError
from kafkawire.protocol import headers
from kafkawire.protocol.apis import ALL_APIS, API_BY_KEY, API_VERSIONS, METADATA, PRODUCE
from kafkawire.protocol.codec import Struct
from tests.unit.stand_in import VirtualEngine

GOOD_VERSIONS = [{"api_key": a.key, "min_version": a.min_version, "max_version": a.max_version} for a in ALL_APIS]
Answer = Callable[[int, int, Struct], bytes | None]  # (api key, version, request body) -> response payload


def response(api_key: int, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    return headers.encode_response(API_BY_KEY[api_key], version, correlation_id, body)


def answers(*, api_versions: list[dict[str, int]] | None = None, **by_api: Any) -> Answer:
    """A peer's answers: ApiVersions from ``api_versions`` (default: everything we speak), and for
    other APIs a payload (bytes) or a body (dict) by API name; None never answers."""

    def answer(api_key: int, version: int, body: Struct) -> bytes | None:
        if api_key == API_VERSIONS.key:
            keys = GOOD_VERSIONS if api_versions is None else api_versions
            return response(api_key, version, 0, {"error_code": 0, "api_keys": keys})
        got = by_api.get(API_BY_KEY[api_key].name)
        if got is None or isinstance(got, bytes):
            return got
        return response(api_key, version, 0, got)

    return answer


class Peer:
    """One address's scripted peer: answers each request frame with what `answer` returns (or
    not at all), ``delay`` seconds later (a slow link). Network faults: the first ``refuse``
    connections are refused, ``hang`` connections never complete, and a request of the API named
    ``reset`` on the first connection resets it instead of being answered. Counts the connections."""

    def __init__(
        self, answer: Answer | None = None, *, delay: float = 0.0, refuse: int = 0, hang: bool = False, reset: str = ""
    ) -> None:
        self.answer = answer or answers()
        self.delay = delay
        self.refuse = refuse
        self.hang = hang
        self.reset = reset
        self.connections = 0
        self.requests: list[tuple[int, int]] = []


class MemoryTransport:
    """A Transport whose far end is a `Peer`: frames written are answered into ``inbox``."""

    def __init__(self, peer: Peer, engine: VirtualEngine) -> None:
        self.peer = peer
        self.engine = engine
        self.inbox = bytearray()
        self.sent = bytearray()
        self.closed = False
        self.resetting = False

    def fileno(self) -> int:
        return 0

    def readable(self) -> bool:
        return bool(self.inbox) or self.resetting

    def start(self) -> None:
        self.peer.connections += 1
        if self.peer.connections <= self.peer.refuse:
            raise TransportError("connect to a:9092 failed: [Errno 111] Connection refused")

    def advance(self, mask: int) -> int:
        if self.peer.hang:
            return READ  # (never readable: the TCP handshake never completes)
        return 0 if mask & WRITE else WRITE

    def _deliver(self, data: bytes) -> None:
        if not self.closed:
            self.inbox += data

    def send(self, data: memoryview) -> int:
        if self.closed:
            raise TransportError("closed")
        self.sent += data
        while len(self.sent) >= 4 and len(self.sent) >= 4 + int.from_bytes(self.sent[:4], "big"):
            size = int.from_bytes(self.sent[:4], "big")
            frame = bytes(self.sent[4 : 4 + size])
            del self.sent[: 4 + size]
            header, body = headers.decode_request(frame)
            self.peer.requests.append((header.request_api_key, header.request_api_version))
            if API_BY_KEY[header.request_api_key].name == self.peer.reset and self.peer.connections == 1:
                self.resetting = True
                continue
            payload = self.peer.answer(header.request_api_key, header.request_api_version, body)
            if payload is not None:
                with_id = header.correlation_id.to_bytes(4, "big") + payload[4:]
                framed = len(with_id).to_bytes(4, "big") + with_id
                if self.peer.delay:
                    self.engine.call_later(self.peer.delay, lambda framed=framed: self._deliver(framed))
                else:
                    self.inbox += framed
        return len(data)

    def send_many(self, views: list[memoryview]) -> int:
        return sum(self.send(view) for view in views)

    def recv_into(self, buffer: memoryview) -> int | None:
        if self.resetting:
            raise PeerClosed("receive from a:9092 failed: [Errno 104] Connection reset by peer")
        if not self.inbox:
            return None
        n = min(len(buffer), len(self.inbox))
        buffer[:n] = self.inbox[:n]
        del self.inbox[:n]
        return n

    def pending(self) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


METADATA_BODY = {"brokers": [{"node_id": 1, "host": "127.0.0.1", "port": 9092}], "topics": []}
GARBAGE = b"\x00\x00\x00\x00" + b"\xff" * 9  # a correlation id, then no valid Metadata body


class Resolver:
    """Names resolved by a table; a name absent from it never answers (a hung DNS server)."""

    def __init__(self, engine: VirtualEngine, table: dict[str, str]) -> None:
        self.engine = engine
        self.table = table  # host -> "ok" or the reason it fails

    def resolve(self, host: str, port: int, done: Callable[..., None], **_settings: object) -> None:
        if host not in self.table:
            return
        how = self.table[host]
        addresses = [(2, (host, port))] if how == "ok" else None
        self.engine.call_soon(lambda: done(addresses, None if how == "ok" else how))


class Harness:
    def __init__(
        self, peers: dict[str, Peer], resolve: dict[str, str] | None = None, node_id: int = 1, **settings: Any
    ) -> None:
        self.engine = VirtualEngine()
        self.peers = peers
        self.transports: list[MemoryTransport] = []
        values = dict(
            client_id="t",
            request_timeout=30.0,
            connect_timeout=10.0,
            api_version_timeout=10.0,
            backoff_ms=100,
            backoff_max_ms=1000,
            max_response_size=1 << 20,
            max_in_flight=5,
        )
        values.update(settings)
        self.states: list[tuple[ConnectionState, KafkaError | None]] = []
        self.answered_at: list[float] = []
        self.conn = BrokerConnection(
            self.engine,  # type: ignore[arg-type]
            node_id,
            "a",
            9092,
            ConnectionSettings(**values),
            lambda c: self.states.append((c.state, c.last_error)),
            resolver=Resolver(self.engine, {h: "ok" for h in peers} if resolve is None else resolve),  # type: ignore[arg-type]
            transport=self._transport,
        )

    def _transport(self, family: int, address: Any, host: str, port: int) -> MemoryTransport:
        t = MemoryTransport(self.peers[host], self.engine)
        self.transports.append(t)
        return t

    def request(
        self, api: Any, body: Any, timeout: float | None = None, **options: Any
    ) -> list[tuple[Any, KafkaError | None]]:
        """Queue a request on the IO loop; its outcomes (response, error) arrive in the list, and
        the virtual time of each in ``self.answered_at``."""
        calls: list[tuple[Any, KafkaError | None]] = []

        def done(r: Any, e: KafkaError | None) -> None:
            calls.append((r, e))
            self.answered_at.append(self.engine.clock)

        self.engine.call_soon(lambda: self.conn.request(api, body, done, timeout=timeout, **options))
        return calls


def test_an_undecodable_answer_fails_its_request_once_and_the_next_connection_works() -> None:
    """Issue 13 defect 1: a Metadata answer whose body cannot be decoded fails that request with
    _BAD_MSG exactly once (so a 'request pending' flag clears) and the connection is rebuilt."""
    bodies = iter([GARBAGE, None])

    def answer(api_key: int, version: int, body: Struct) -> bytes | None:
        if api_key == METADATA.key:
            bad = next(bodies)
            return bad if bad is not None else response(api_key, version, 0, METADATA_BODY)
        return answers()(api_key, version, body)

    h = Harness({"a": Peer(answer)})
    first = h.request(METADATA, {"topics": None})
    h.engine.run(until=1)
    assert [e.code() for _, e in first if e is not None] == [KafkaError._BAD_MSG] and len(first) == 1
    second = h.request(METADATA, {"topics": None})
    h.engine.run(until=5)
    assert len(second) == 1 and second[0][1] is None and second[0][0].brokers[0].node_id == 1
    assert h.peers["a"].connections == 2


@pytest.mark.parametrize(
    "mutated",
    [
        [{**k, "max_version": -32768} if k["api_key"] == PRODUCE.key else k for k in GOOD_VERSIONS],
        [k for k in GOOD_VERSIONS if k["api_key"] != PRODUCE.key],
        [k for k in GOOD_VERSIONS if k["api_key"] != METADATA.key],
    ],
    ids=["absurd-range", "produce-missing", "metadata-missing"],
)
def test_a_mutated_api_versions_answer_costs_a_reconnect_not_the_request(mutated: list[dict[str, int]]) -> None:
    """Issue 13 defect 2: the first connection's ApiVersions answer is mutated; the queued request
    waits, the next connection negotiates again, and the request is answered."""
    sequence = iter([mutated, GOOD_VERSIONS, GOOD_VERSIONS])

    def answer(api_key: int, version: int, body: Struct) -> bytes | None:
        if api_key == API_VERSIONS.key:
            return answers(api_versions=next(sequence))(api_key, version, body)
        return answers(Produce={"responses": []})(api_key, version, body)

    h = Harness({"a": Peer(answer)})
    calls = h.request(PRODUCE, {"acks": 1, "timeout_ms": 100, "topic_data": []})
    h.engine.run(until=20)
    assert len(calls) == 1 and calls[0][1] is None, calls
    assert h.peers["a"].connections == 2
    assert any(e is not None and e.code() == KafkaError._BAD_MSG for _, e in h.states)


def test_a_version_gap_two_connections_agree_on_is_unsupported_feature() -> None:
    lacking = [k for k in GOOD_VERSIONS if k["api_key"] != PRODUCE.key]
    h = Harness({"a": Peer(answers(api_versions=lacking))})
    calls = h.request(PRODUCE, {"acks": 1, "timeout_ms": 100, "topic_data": []})
    h.engine.run(until=20)
    assert [e.code() for _, e in calls if e is not None] == [KafkaError._UNSUPPORTED_FEATURE]
    assert "Produce" in calls[0][1].str()  # type: ignore[union-attr]


@pytest.mark.parametrize("host", ["broker1..example.com", "x" * 64 + ".example.com"])
def test_lookup_turns_every_resolver_exception_into_a_reason(host: str) -> None:
    """Issue 13 defect 3: getaddrinfo raises UnicodeError (not OSError) for an empty label or a
    label over 63 characters; the lookup reports it instead of raising."""
    addresses, reason = lookup(host, 9092)
    assert addresses is None and reason


def test_a_bootstrap_name_that_does_not_resolve_fails_the_attempt_and_the_request_times_out() -> None:
    h = Harness({"a": Peer()}, resolve={"a": "UnicodeError: label empty or too long"}, node_id=-1)
    calls = h.request(METADATA, {"topics": None}, timeout=5)
    h.engine.run(until=30)
    assert [e.code() for _, e in calls if e is not None] == [KafkaError._TIMED_OUT]
    assert "Failed to resolve 'a:9092'" in calls[0][1].str()  # type: ignore[union-attr]
    assert h.states and all(e is not None and e.code() == KafkaError._RESOLVE for _, e in h.states)


def test_a_request_that_fails_over_while_a_failure_no_retry_mends_backs_off_hears_that_failure() -> None:
    """As if it had been queued when the attempt failed (QUEUE_RULES): a bootstrap name that does
    not resolve (like a certificate refused, or credentials) fails such a request with that error,
    not with _TRANSPORT, which would send its caller round again until its deadline."""
    h = Harness({"a": Peer()}, resolve={"a": "UnicodeError: label empty or too long"}, node_id=-1)
    h.request(METADATA, {"topics": None}, timeout=5)
    h.engine.run(until=0.01)
    assert h.conn.life.state.name == "BACKING_OFF"
    failed_over = h.request(METADATA, {"topics": None}, fails_over=True)
    h.engine.run(until=0.02)
    assert codes(failed_over) == [KafkaError._RESOLVE]


def test_an_advertised_name_that_does_not_resolve_hands_its_queue_back_at_once() -> None:
    """Issue 13: metadata naming a host that does not resolve (perhaps stale) must not hold the
    requests queued for that broker until their deadline: they fail with _TRANSPORT at once, so
    the caller's policy refreshes metadata and routes again."""
    h = Harness({"a": Peer()}, resolve={"a": "UnicodeError: label empty or too long"}, node_id=1)
    calls = h.request(METADATA, {"topics": None}, timeout=30)
    h.engine.run(until=1)
    assert [e.code() for _, e in calls if e is not None] == [KafkaError._TRANSPORT]
    assert "Failed to resolve 'a:9092'" in calls[0][1].str()  # type: ignore[union-attr]


def test_a_resolver_that_never_answers_is_bounded_by_the_setup_timeout() -> None:
    h = Harness({"a": Peer()}, resolve={}, connect_timeout=2.0)
    calls = h.request(METADATA, {"topics": None}, timeout=60)
    h.engine.run(until=3)
    assert (
        h.states[0][0] is ConnectionState.DISCONNECTED and h.conn.state is ConnectionState.CONNECTING
    )  # (the next attempt)
    assert h.states[0][1] is not None and "socket.connection.setup.timeout.ms" in h.states[0][1].str()
    assert calls == []  # still queued: it waits for the next attempt until its own deadline


def test_a_broker_that_moves_takes_its_queued_requests_along() -> None:
    """Issue 13 defect 4: the broker's advertised address changes while requests wait for it (the
    old address never completes the handshake); they go to the new address, not _DESTROY."""
    h = Harness({"a": Peer(lambda *_: None), "b": Peer(answers(Metadata=METADATA_BODY))})
    calls = [h.request(METADATA, {"topics": None}) for _ in range(3)]
    h.engine.run(until=1)
    assert all(c == [] for c in calls)
    h.engine.call_soon(lambda: h.conn.move_to("b", 9092))
    h.engine.run(until=2)
    assert [len(c) for c in calls] == [1, 1, 1] and all(c[0][1] is None for c in calls)
    assert h.transports[0].closed and h.conn.host == "b"


def test_a_silent_api_versions_is_bounded_by_api_version_request_timeout() -> None:
    """Issue 13 defect 7 (the connection half): a broker that never answers ApiVersions is given
    up on after api.version.request.timeout.ms, not after the whole connection setup timeout."""
    h = Harness({"a": Peer(lambda *_: None)}, api_version_timeout=1.0, connect_timeout=60.0)
    h.request(METADATA, {"topics": None}, timeout=100)
    h.engine.run(until=20)
    assert h.peers["a"].connections >= 3
    assert h.states[0][1] is not None and "api.version.request.timeout.ms" in h.states[0][1].str()


def test_answers_read_with_a_bad_frame_are_delivered_before_the_connection_fails() -> None:
    replies = iter([METADATA_BODY, GARBAGE])

    def answer(api_key: int, version: int, body: Struct) -> bytes | None:
        if api_key != METADATA.key:
            return answers()(api_key, version, body)
        reply = next(replies)
        return reply if isinstance(reply, bytes) else response(api_key, version, 0, reply)

    h = Harness({"a": Peer(answer)})
    # Both requests leave together, both answers arrive in one read.
    first, second = h.request(METADATA, {"topics": None}), h.request(METADATA, {"topics": None})
    h.engine.run(until=1)
    assert first[0][1] is None
    assert [e.code() for _, e in second if e is not None] == [KafkaError._BAD_MSG]


def test_unsent_counts_requests_until_written_whole_and_when_room_runs_once_after() -> None:
    """What the producer's backpressure reads: requests queued or written in part count as unsent,
    and a callback asked for with `when_room` runs once when one is written whole, or when the
    connection goes and takes them with it. (The engine is not run while the socket takes nothing:
    its write interest would spin the virtual loop.)"""
    h = Harness({"a": Peer(answers(metadata=METADATA_BODY))})
    h.request(METADATA, {"topics": None})
    h.engine.run(until=1.0)
    assert h.conn.state is ConnectionState.READY and h.conn.unsent == 0
    transport = h.transports[-1]
    stalled = True
    real_send_many = transport.send_many
    transport.send_many = lambda views: 0 if stalled else real_send_many(views)  # type: ignore[method-assign]
    woken: list[int] = []

    def wake() -> None:
        woken.append(h.conn.unsent)

    for _ in range(2):
        h.conn.request(METADATA, {"topics": None}, lambda r, e: None)
    assert h.conn.unsent == 2
    h.conn.when_room(wake)
    h.conn.when_room(wake)  # asked twice before it ran: still once
    assert woken == []
    stalled = False
    h.engine.run(until=2.0)
    assert woken == [0] and h.conn.unsent == 0

    stalled = True
    h.conn.request(METADATA, {"topics": None}, lambda r, e: None)
    h.conn.when_room(wake)
    h.conn.close()
    assert woken == [0, 0] and h.conn.unsent == 0


def test_when_room_runs_once_a_request_in_flight_is_answered() -> None:
    """What the producer's sender waits for when a connection is at its max.in.flight with a
    request not its own (the handshake's, a metadata request): that request's answer, though
    nothing is written after it."""
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY), delay=0.5)})
    h.request(METADATA, {"topics": None})
    h.engine.run(until=5.0)
    assert h.conn.state is ConnectionState.READY and h.conn.load == 0
    second = h.request(METADATA, {"topics": None})
    h.engine.run(until=5.2)  # written whole, its answer 0.5 s away
    assert h.conn.in_flight == 1 and h.conn.unsent == 0 and second == []
    loads: list[int] = []
    h.conn.when_room(lambda: loads.append(h.conn.load))
    h.engine.run(until=10.0)
    assert loads == [0] and codes(second) == [None]


# --- network faults: the connection's life (core/connection_life.py) as a peer misbehaves ------------


def codes(calls: list[tuple[Any, KafkaError | None]]) -> list[int | None]:
    return [None if e is None else e.code() for _, e in calls]


def test_a_peer_that_stops_answering_fails_the_request_at_a_scan_tick_and_the_connection_rests() -> None:
    """The request's deadline (10 ms) is judged at the next scan a second on (librdkafka's clock):
    it fails with _TIMED_OUT, once; the connection is torn down and, nothing wanting it, rests."""
    h = Harness({"a": Peer(answers())})  # no Metadata answer
    calls = h.request(METADATA, {"topics": None}, timeout=0.01)
    h.engine.run(until=10)
    assert codes(calls) == [KafkaError._TIMED_OUT] and "the request timeout" in calls[0][1].str()  # type: ignore[union-attr]
    assert h.answered_at[0] >= 1.0
    assert h.conn.state is ConnectionState.DISCONNECTED and h.conn.life.state.name == "DISCONNECTED"
    assert [s for s, _ in h.states] == [ConnectionState.READY, ConnectionState.DISCONNECTED]
    assert h.conn.stats.req_timeouts == 1 and h.peers["a"].connections == 1


def test_a_request_timed_out_behind_a_silent_one_takes_the_connection_down_with_both() -> None:
    """Issue 53, as librdkafka's timeout scan (socket.max.fails 1): a request that waited out its
    deadline unsent, behind one the peer holds, fails the connection at that scan tick, and the
    held one with it (long before its own deadline); the next request goes over a new connection."""
    h = Harness({"a": Peer(answers())}, max_in_flight=1)  # no Metadata answer
    held = h.request(METADATA, {"topics": None}, timeout=30.0)
    behind = h.request(METADATA, {"topics": None}, timeout=3.0)
    h.engine.run(until=5)
    assert codes(behind) == [KafkaError._TIMED_OUT] and "before it could be sent" in behind[0][1].str()  # type: ignore[union-attr]
    assert codes(held) == [KafkaError._TIMED_OUT] and "disconnect" in held[0][1].str()  # type: ignore[union-attr]
    assert 3.0 <= h.answered_at[0] == h.answered_at[1] < 5.0
    assert h.conn.state is ConnectionState.DISCONNECTED and h.conn.stats.req_timeouts == 1
    later = h.request(METADATA, {"topics": None}, timeout=3.0)
    h.engine.run(until=10)
    assert codes(later) == [KafkaError._TIMED_OUT] and h.peers["a"].connections == 2


def test_a_slow_link_answers_after_a_tiny_timeout_and_before_the_scan() -> None:
    """Answers 30 ms late on a 10 ms socket.timeout.ms: answered, never timed out, one connection
    (librdkafka reads the answer before its once-a-second scan)."""
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY), delay=0.03)})
    for _ in range(20):
        calls = h.request(METADATA, {"topics": None}, timeout=0.01)
        h.engine.run(until=h.engine.clock + 0.5)
        assert codes(calls) == [None]
    assert h.peers["a"].connections == 1 and h.conn.state is ConnectionState.READY
    assert h.conn.stats.req_timeouts == 0


def test_a_slow_link_answering_before_a_long_deadline_is_waited_for() -> None:
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY), delay=3.0)})  # (ApiVersions too: 6 s in all)
    calls = h.request(METADATA, {"topics": None}, timeout=10.0)
    h.engine.run(until=20)
    assert codes(calls) == [None] and h.peers["a"].connections == 1


def test_a_reset_fails_what_was_in_flight_and_the_queued_request_rides_the_reconnect() -> None:
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY), reset="Metadata")}, max_in_flight=1)
    first, second = h.request(METADATA, {"topics": None}), h.request(METADATA, {"topics": None})
    h.engine.run(until=10)
    assert codes(first) == [KafkaError._TRANSPORT] and "reset by peer" in first[0][1].str()  # type: ignore[union-attr]
    assert codes(second) == [None]  # it waited in the queue, then went over the next connection
    assert h.peers["a"].connections == 2 and h.conn.state is ConnectionState.READY
    assert h.conn.stats.disconnects == 1


def test_a_refused_connect_backs_off_and_retries_while_a_request_waits() -> None:
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY), refuse=2)})
    calls = h.request(METADATA, {"topics": None}, timeout=30)
    h.engine.run(until=0.001)
    assert h.conn.life.state.name == "BACKING_OFF" and h.conn.trying and calls == []
    failed_over = h.request(METADATA, {"topics": None}, fails_over=True)  # its caller asks elsewhere
    h.engine.run(until=0.002)
    assert codes(failed_over) == [KafkaError._TRANSPORT] and "is down" in failed_over[0][1].str()  # type: ignore[union-attr]
    h.engine.run(until=30)
    assert codes(calls) == [None] and h.peers["a"].connections == 3
    refused = [e for s, e in h.states if s is ConnectionState.DISCONNECTED]
    assert len(refused) == 2 and all(e is not None and "refused" in e.str() for e in refused)
    assert h.conn.life.failures == 0  # forgotten once ready


def test_a_connect_that_never_completes_is_bounded_by_the_setup_timeout_then_the_request_deadline() -> None:
    h = Harness({"a": Peer(hang=True)}, connect_timeout=2.0)
    calls = h.request(METADATA, {"topics": None}, timeout=7.0)
    h.engine.run(until=2.5)
    assert calls == [] and h.states[0][0] is ConnectionState.DISCONNECTED
    assert "connect to a:9092 timed out (socket.connection.setup.timeout.ms)" in h.states[0][1].str()  # type: ignore[union-attr]
    h.engine.run(until=20)
    assert codes(calls) == [KafkaError._TIMED_OUT] and "before it could be sent" in calls[0][1].str()  # type: ignore[union-attr]
    assert 7.0 <= h.answered_at[0] < 8.0  # at the scan tick on or after its deadline
    assert h.peers["a"].connections >= 3


def test_an_idle_kept_connection_is_made_again_and_an_unkept_one_rests() -> None:
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY))}, idle_timeout=5.0)
    h.engine.call_soon(lambda: h.conn.keep(True))
    h.engine.run(until=6.0)
    assert h.peers["a"].connections == 2 and h.conn.state is ConnectionState.READY  # closed idle, made again
    h.engine.call_soon(lambda: h.conn.keep(False))
    h.engine.run(until=20.0)
    assert h.peers["a"].connections == 2 and h.conn.state is ConnectionState.DISCONNECTED


def test_a_retired_bootstrap_connection_closes_once_idle_and_its_failure_is_not_reported() -> None:
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY))}, node_id=-1)
    calls = h.request(METADATA, {"topics": None})
    h.engine.run(until=1.0)
    h.engine.call_soon(lambda: h.conn.retire(True))
    h.engine.run(until=2.0)
    assert codes(calls) == [None] and h.conn.state is ConnectionState.DISCONNECTED
    assert h.conn.retired and not h.conn.life.reported()


def test_close_fails_queued_and_in_flight_requests_with_destroy_once() -> None:
    h = Harness({"a": Peer(answers())}, max_in_flight=1)
    first, second = h.request(METADATA, {"topics": None}), h.request(METADATA, {"topics": None})
    h.engine.run(until=0.5)
    h.conn.close()
    late = h.request(METADATA, {"topics": None})
    h.engine.run(until=100)
    assert codes(first) == [KafkaError._DESTROY] and codes(second) == [KafkaError._DESTROY]
    assert codes(late) == [KafkaError._DESTROY] and h.conn.state is ConnectionState.CLOSED


def timers_set_by_rounds(h: Harness, rounds: int) -> list[float]:
    """Run ``rounds`` Metadata requests, one answered before the next, 10 ms apart from 0.5 s; the
    deadlines of the timers the connection set after the second (the first also connects, at 0:
    timers of its own)."""
    set_at: list[float] = []
    call_at = h.engine.call_at

    def counted(when: float, fn: Callable[[], None]) -> Timer:
        set_at.append(when)
        return call_at(when, fn)

    h.engine.call_at = counted  # type: ignore[method-assign]
    before = 0
    for i in range(rounds):
        calls = h.request(METADATA, {"topics": None}, timeout=30.0)
        h.engine.run(until=0.5 + i * 0.01)
        assert codes(calls) == [None]
        if i == 1:
            before = len(set_at)
    return set_at[before:]


def test_requests_judged_at_one_scan_tick_share_one_timer_which_ends_harmlessly() -> None:
    """Deadlines fall on the connection's scan ticks, so one request after another within a second
    is judged at the same tick: the timer set for the first is kept for the rest (each new one is
    heap work on the IO thread, twice a request), and one that outlived its answered requests
    finds nothing late when it fires."""
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY))})
    assert timers_set_by_rounds(h, 12) == []
    h.engine.run(until=40.0)  # past the tick: the kept timer fires with nothing in flight
    assert h.conn.state is ConnectionState.READY and h.conn.stats.req_timeouts == 0
    assert h.peers["a"].connections == 1


def test_an_idle_deadline_moving_with_each_answer_moves_no_timer_and_still_closes_on_time() -> None:
    """With connections.max.idle.ms, each answer pushes the idle deadline later: the connection's
    timer, set earlier, stays (it fires, finds the connection busy or not idle yet, and sets the
    next), so a round costs no heap push; the close still comes ``idle_timeout`` after the last."""
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY))}, idle_timeout=5.0)
    assert timers_set_by_rounds(h, 12) == []
    h.engine.run(until=0.61 + 4.9)  # the last answer at 0.61: not idle yet
    assert h.conn.state is ConnectionState.READY
    h.engine.run(until=0.61 + 5.1)
    assert h.conn.state is ConnectionState.DISCONNECTED and h.peers["a"].connections == 1


def test_writes_that_leave_the_watched_events_as_they_were_ask_nothing_of_the_selector() -> None:
    """A request written whole leaves the transport watched for reading only, as it was: the
    selector is asked again only when a write is left over (WRITE too) or once it drained; and a
    new connection after a reset is watched afresh."""
    h = Harness({"a": Peer(answers(Metadata=METADATA_BODY), reset="Produce")})
    modified: list[int] = []
    modify = h.engine.modify

    def counted(transport: Any, events: int, handler: Callable[[int], None]) -> None:
        modified.append(events)
        modify(transport, events, handler)

    h.engine.modify = counted  # type: ignore[method-assign]
    first = h.request(METADATA, {"topics": None})
    h.engine.run(until=0.5)
    assert codes(first) == [None]
    before = len(modified)
    for i in range(5):
        calls = h.request(METADATA, {"topics": None})
        h.engine.run(until=0.6 + i * 0.01)
        assert codes(calls) == [None]
    assert len(modified) == before, modified[before:]
    reset = h.request(PRODUCE, {"acks": 1, "timeout_ms": 1000, "topic_data": []})
    h.engine.run(until=1.0)
    assert codes(reset) == [KafkaError._TRANSPORT]
    again = h.request(METADATA, {"topics": None})
    h.engine.run(until=3.0)
    assert codes(again) == [None] and h.peers["a"].connections == 2
    assert READ in modified[before:]  # the new connection's handshake watched again
