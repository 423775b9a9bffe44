"""The sans-IO connection: framing, correlation, size bounds, deadlines, scripted bytes only."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kafkawire.core import metadata
from kafkawire.core.connection import Connection, ProtocolError
from kafkawire.protocol import headers
from kafkawire.protocol.apis import API_VERSIONS, FETCH, METADATA


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def api_versions_response(correlation_id: int, version: int = 3, error_code: int = 0) -> bytes:
    body = {"error_code": error_code, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}]}
    return frame(headers.encode_response(API_VERSIONS, version, correlation_id, body))


def test_request_is_framed_with_size_prefix_and_header() -> None:
    conn = Connection("cid")
    data, req = conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    assert req is not None and req.correlation_id == 0
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    header, _body = headers.decode_request(data[4:])
    assert (header.request_api_key, header.request_api_version, header.client_id) == (18, 3, "cid")


def test_responses_split_across_reads_are_reassembled_in_order() -> None:
    conn = Connection("cid")
    conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    stream = api_versions_response(0) + api_versions_response(1)
    got = []
    for i in range(len(stream)):  # one byte at a time
        got += conn.receive_data(stream[i : i + 1])
    assert [r.request.correlation_id for r in got] == [0, 1]
    assert got[0].body.api_keys[0].max_version == 3
    assert conn.in_flight == 0


def _read(conn: Connection, stream: bytes, piece: int = 50_000) -> tuple[list[Any], list[tuple[int, int]]]:
    """Feed ``stream`` through receive_buffer/received, ``piece`` bytes at most per read: the
    responses, and (id, size) of each buffer read into (ids of buffers alive while compared)."""
    view, got, buffers = memoryview(stream), [], []
    while view:
        room = conn.receive_buffer()
        buffers.append((id(room.obj), len(room.obj)))
        n = min(len(room), len(view), piece)
        room[:n] = view[:n]
        view = view[n:]
        del room
        got += conn.received(n)
    return got, buffers


def _metadata(correlation_id: int, topics: int) -> bytes:
    body = {
        "brokers": [{"node_id": 1, "host": "h" * 200, "port": 9092, "rack": None}],
        "controller_id": 1,
        "topics": [
            {"error_code": 0, "name": f"t-{correlation_id}-{i}", "is_internal": False, "partitions": []}
            for i in range(topics)
        ],
    }
    return frame(headers.encode_response(METADATA, 1, correlation_id, body))


def test_a_large_answer_is_read_into_a_buffer_of_its_own_size() -> None:
    """An answer larger than the small-reads buffer gets one of its own (the last one's, when
    large enough and nothing holds it), filled by the reads themselves; small answers around it
    are framed from the shared buffer, several per read."""
    conn = Connection("cid")
    for _ in range(4):
        conn.send_request(METADATA, 1, {"topics": None}, now=0.0, timeout=1.0)
    large, smaller = _metadata(1, 20_000), _metadata(3, 12_000)  # the second read into the first's buffer
    assert len(smaller) > 3 * len(conn.receive_buffer())
    got, buffers = _read(conn, _metadata(0, 1) + large + _metadata(2, 1) + smaller)
    assert [r.request.correlation_id for r in got] == [0, 1, 2, 3]
    assert [t.name for t in got[1].body.topics] == [f"t-1-{i}" for i in range(20_000)]
    assert [t.name for t in got[3].body.topics] == [f"t-3-{i}" for i in range(12_000)]
    assert len({key for key in buffers if key[1] > 1 << 16}) == 1  # one large buffer, then reused
    assert len(conn.receive_buffer()) == 1 << 16  # back to the shared buffer, empty


def test_record_batches_are_views_and_a_held_one_keeps_its_buffer() -> None:
    """A Fetch answer's records are a view into its buffer (no copy); while one is held, the next
    large answer gets a new buffer and the held records stay as they were."""
    conn = Connection("cid")
    conn.send_request(FETCH, 4, {}, now=0.0, timeout=1.0)
    conn.send_request(FETCH, 4, {}, now=0.0, timeout=1.0)

    def fetch(correlation_id: int, records: bytes) -> bytes:
        partition = {
            "partition_index": 0,
            "error_code": 0,
            "high_watermark": 1,
            "last_stable_offset": 1,
            "aborted_transactions": [],
            "records": records,
        }
        body = {"throttle_time_ms": 0, "responses": [{"topic": "t", "partitions": [partition]}]}
        return frame(headers.encode_response(FETCH, 4, correlation_id, body))

    first, second = bytes(range(256)) * 1000, b"\x07" * 200_000
    got, buffers = _read(conn, fetch(0, first))
    held = got[0].body.responses[0].partitions[0].records
    assert type(held) is memoryview and held == first
    got, more = _read(conn, fetch(1, second))
    assert got[0].body.responses[0].partitions[0].records == second
    assert held == first  # not overwritten: a buffer of its own
    assert {key for key in buffers if key[1] > 1 << 16}.isdisjoint(key for key in more if key[1] > 1 << 16)


def test_memory_follows_the_bytes_that_arrive_not_the_size_prefix() -> None:
    """A size prefix alone allocates nothing near it: the answer's buffer doubles as its bytes
    come (garbage or a hostile prefix costs what was sent), and a large answer still reads whole."""
    conn = Connection("cid", max_response_size=100_000_000)
    conn.send_request(FETCH, 4, {}, now=0.0, timeout=1.0)
    conn.receive_data((90_000_000).to_bytes(4, "big") + b"\x00" * 70_000)
    assert len(conn.receive_buffer().obj) <= 2 << 20  # type: ignore[arg-type]
    conn = Connection("cid")
    conn.send_request(FETCH, 4, {}, now=0.0, timeout=1.0)
    partition = {
        "partition_index": 0,
        "error_code": 0,
        "high_watermark": 1,
        "last_stable_offset": 1,
        "aborted_transactions": [],
        "records": b"\x05" * 5_000_000,
    }
    body = {"throttle_time_ms": 0, "responses": [{"topic": "t", "partitions": [partition]}]}
    answer = frame(headers.encode_response(FETCH, 4, 0, body))
    got, buffers = _read(conn, answer[:3_000_000])
    assert got == [] and max(size for _, size in buffers) <= 2 * 3_000_000
    more, _ = _read(conn, answer[3_000_000:])
    assert more[0].body.responses[0].partitions[0].records == b"\x05" * 5_000_000


def test_unexpected_correlation_id_fails_the_connection() -> None:
    conn = Connection("cid")
    conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    with pytest.raises(ProtocolError, match="correlation id 5"):
        conn.receive_data(api_versions_response(5))


def test_unsolicited_response_fails_the_connection() -> None:
    with pytest.raises(ProtocolError, match="no request in flight"):
        Connection("cid").receive_data(api_versions_response(0))


@pytest.mark.parametrize("size", [-1, 0, 3, 100_001, 2**31 - 1])
def test_hostile_size_prefix_fails_before_buffering(size: int) -> None:
    conn = Connection("cid", max_response_size=100_000)
    conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    with pytest.raises(ProtocolError, match=r"receive\.message\.max\.bytes"):
        conn.receive_data(size.to_bytes(4, "big", signed=True))


def test_garbage_body_is_a_protocol_error() -> None:
    conn = Connection("cid")
    conn.send_request(METADATA, 12, {"topics": None}, now=0.0, timeout=1.0)
    with pytest.raises(ProtocolError, match="undecodable Metadata v12"):
        conn.receive_data(frame(b"\x00\x00\x00\x00" + b"\xff" * 9))


def test_api_versions_answered_in_v0_after_unsupported_version() -> None:
    """A broker that does not know ApiVersions v3 answers UNSUPPORTED_VERSION encoded as v0."""
    conn = Connection("cid")
    conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    [resp] = conn.receive_data(api_versions_response(0, version=0, error_code=35))
    assert resp.body.error_code == 35 and resp.body.api_keys[0].api_key == 18


def test_acks_zero_style_request_is_not_tracked() -> None:
    conn = Connection("cid")
    _, req = conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0, expect_response=False)
    assert req is None and conn.in_flight == 0


def test_deadlines_are_reported_by_the_callers_clock() -> None:
    conn = Connection("cid")
    conn.send_request(API_VERSIONS, 3, {}, now=10.0, timeout=2.0)
    assert conn.next_deadline() == 12.0
    assert conn.expired(11.9) == []
    assert [r.correlation_id for r in conn.expired(12.0)] == [0]


def test_correlation_ids_wrap_at_int32() -> None:
    conn = Connection("cid")
    conn._next_correlation_id = 2**31 - 1
    _, a = conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    _, b = conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    assert a is not None and b is not None and (a.correlation_id, b.correlation_id) == (2**31 - 1, 0)


def metadata_response(correlation_id: int, brokers: int = 1, topics: int = 0, partitions: int = 0) -> bytes:
    body = {
        "brokers": [{"node_id": i, "host": "127.0.0.1", "port": 9092} for i in range(brokers)],
        "topics": [
            {"name": f"t{t}", "partitions": [{"partition_index": p, "leader_id": 0} for p in range(partitions)]}
            for t in range(topics)
        ],
    }
    return frame(headers.encode_response(METADATA, 12, correlation_id, body))


def test_an_undecodable_body_leaves_its_request_in_flight_for_the_teardown() -> None:
    """Issue 13 defect 1: the request stays in flight until its body decoded, so the teardown
    that follows the error fails it (its callback runs once) instead of losing it."""
    conn = Connection("cid")
    conn.send_request(METADATA, 12, {"topics": None}, now=0.0, timeout=1.0, context="md")
    with pytest.raises(ProtocolError):
        conn.receive_data(frame(b"\x00\x00\x00\x00" + b"\xff" * 9))
    assert [r.context for r in conn.pending()] == ["md"]


def test_answers_complete_before_a_bad_frame_ride_on_the_error() -> None:
    conn = Connection("cid")
    conn.send_request(METADATA, 12, {"topics": None}, now=0.0, timeout=1.0, context="first")
    conn.send_request(METADATA, 12, {"topics": None}, now=0.0, timeout=1.0, context="second")
    with pytest.raises(ProtocolError) as exc:
        conn.receive_data(metadata_response(0) + frame(b"\x00\x00\x00\x01" + b"\xff" * 9))
    assert [r.request.context for r in exc.value.completed] == ["first"]
    assert [r.context for r in conn.pending()] == ["second"]


def test_a_metadata_answer_past_the_limits_is_not_trusted() -> None:
    """Issue 13 defect 6: a Metadata answer naming more brokers than any real cluster fails the
    connection (and its request stays for the teardown)."""
    conn = Connection("cid", max_response_size=1 << 30)
    conn.send_request(METADATA, 12, {"topics": None}, now=0.0, timeout=1.0)
    with pytest.raises(ProtocolError, match=r"undecodable Metadata v12 response: .*brokers \(at most"):
        conn.receive_data(metadata_response(0, brokers=metadata.MAX_BROKERS + 1))
    assert conn.in_flight == 1


@pytest.mark.parametrize(
    "brokers,topics,partitions,what",
    [
        (metadata.MAX_BROKERS + 1, 0, 0, "elements in brokers"),
        (1, metadata.MAX_TOPICS + 1, 0, "elements in topics "),
        (1, 1, metadata.MAX_PARTITIONS + 1, "elements in topics.partitions"),
    ],
)
def test_metadata_counts_are_refused_as_they_are_read(brokers: int, topics: int, partitions: int, what: str) -> None:
    """Counts past the limits fail before their arrays are built (the elements here are never
    encoded: the count alone is past the limit, the bytes after it are only filler)."""
    conn = Connection("cid", max_response_size=1 << 30)
    conn.send_request(METADATA, 1, {"topics": None}, now=0.0, timeout=1.0)
    count = (brokers if brokers > 1 else topics if topics > 1 else partitions).to_bytes(4, "big")
    one_broker = (1).to_bytes(4, "big") + bytes(4) + b"\x00\x01a" + bytes(4) + b"\xff\xff"
    one_topic = bytes(2) + b"\x00\x01t" + b"\x00"  # error, name, is_internal; then partitions
    body = bytes(4)  # correlation id 0 (Metadata v1: brokers, controller_id, topics)
    if brokers > 1:
        body += count + bytes(brokers * 12)
    elif topics > 1:
        body += one_broker + bytes(4) + count + bytes(topics * 9)
    else:
        body += one_broker + bytes(4) + (1).to_bytes(4, "big") + one_topic + count + bytes(partitions * 22)
    with pytest.raises(ProtocolError, match=what):
        conn.receive_data(frame(body))
    assert conn.in_flight == 1


def test_metadata_partitions_of_all_topics_together_are_limited() -> None:
    body = SimpleNamespace(topics=[SimpleNamespace(partitions=range(metadata.MAX_PARTITIONS // 10))] * 11)
    with pytest.raises(metadata.MetadataError, match="partitions"):
        metadata.check_response(body)  # type: ignore[arg-type]


def test_an_answer_past_the_decoding_budget_is_not_trusted() -> None:
    """Decoding may allocate DECODE_FACTOR x receive.message.max.bytes (estimated before each array):
    5,000 partitions in a 100 KB frame need about 3 MB of objects, over a 4 x 200 KB budget."""
    conn = Connection("cid", max_response_size=200_000)
    conn.send_request(METADATA, 12, {"topics": None}, now=0.0, timeout=1.0)
    with pytest.raises(ProtocolError, match=r"5000 elements in topics\.partitions would exceed"):
        conn.receive_data(metadata_response(0, topics=1, partitions=5_000))
    assert conn.in_flight == 1


def test_a_metadata_answer_at_the_limits_is_accepted() -> None:
    conn = Connection("cid", max_response_size=1 << 30)
    conn.send_request(METADATA, 12, {"topics": None}, now=0.0, timeout=1.0)
    [resp] = conn.receive_data(metadata_response(0, brokers=100, topics=3, partitions=5))
    assert len(resp.body.brokers) == 100 and len(resp.body.topics) == 3


def test_bare_sasl_tokens_after_handshake_v0_and_their_empty_answer() -> None:
    """SaslHandshake v0: the token goes out with only its size, the answer (possibly empty) comes
    back as a SaslAuthenticate body; a size under 4 stays refused for framed answers."""
    conn = Connection("cid")
    assert conn.send_sasl_token(b"\0alice\0pw", now=0.0, timeout=1.0, context="tok") == frame(b"\0alice\0pw")
    [answer] = conn.receive_data(frame(b""))
    assert answer.request.context == "tok" and answer.body.auth_bytes == b"" and answer.body.error_code == 0
    conn.send_sasl_token(b"n,,n=u,r=abc", now=0.0, timeout=1.0)
    [answer] = conn.receive_data(frame(b"r=abcdef,s=c2FsdA==,i=4096"))
    assert answer.body.auth_bytes == b"r=abcdef,s=c2FsdA==,i=4096" and conn.in_flight == 0
    conn.send_request(API_VERSIONS, 3, {}, now=0.0, timeout=1.0)
    with pytest.raises(ProtocolError, match="outside 4"):
        conn.receive_data(frame(b""))
