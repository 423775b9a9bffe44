"""A request's frame with its record batches referenced in place, and the outbox that writes it.

The bytes on the wire must be exactly those of the request encoded into one buffer; only where
they come from changes (the batch's own buffer, not a copy in the request)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kafkawire.io.outbox import Outbox
from kafkawire.protocol import codec, headers
from kafkawire.protocol.apis import METADATA, PRODUCE
from kafkawire.protocol.frame import SPLICE_MIN, Frame
from kafkawire.records.batch import BatchBuilder


def batch(records: int, value_size: int) -> bytearray:
    builder = BatchBuilder()
    for i in range(records):
        builder.append(1_700_000_000_000 + i, None, bytes([i % 251]) * value_size)
    return builder.build(hand_over=True)  # type: ignore[return-value]  # (hand_over: the builder's bytearray)


def produce_body(*payloads: bytes | bytearray) -> dict[str, object]:
    return {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 30_000,
        "topic_data": [
            {"name": "t", "partition_data": [{"index": i, "records": p} for i, p in enumerate(payloads)]},
        ],
    }


def one_buffer(api: object, version: int, correlation_id: int, body: dict[str, object]) -> bytes:
    """The request encoded the plain way: header and body copied into one bytearray."""
    out = bytearray()
    codec.encode_into(
        out,
        headers.REQUEST_HEADER,
        headers.request_header_version(api, version),
        {  # type: ignore[arg-type]
            "request_api_key": api.key,
            "request_api_version": version,  # type: ignore[attr-defined]
            "correlation_id": correlation_id,
            "client_id": "cid",
        },
    )
    codec.encode_into(out, api.request, version, body)  # type: ignore[attr-defined]
    return len(out).to_bytes(4, "big") + bytes(out)


@pytest.mark.parametrize("version", [3, 7, 9, 11])  # classic and flexible (compact lengths) encodings
def test_large_batches_are_referenced_and_the_bytes_are_those_of_one_buffer(version: int) -> None:
    large, small, other = batch(20, 1000), batch(2, 10), batch(10, 500)
    assert len(large) >= SPLICE_MIN > len(small) and len(other) >= SPLICE_MIN
    body = produce_body(large, small, other)
    frame = headers.encode_request_frame(PRODUCE, version, 7, "cid", body)
    assert frame.joined() == one_buffer(PRODUCE, version, 7, body)
    assert frame.size == len(frame.joined())
    pieces = frame.pieces()
    referenced = [p.obj for p in pieces if p.obj is not frame]
    assert referenced[0] is large and referenced[1] is other and len(referenced) == 2  # the small one is copied
    assert all(len(p) for p in pieces)
    header, decoded = headers.decode_request(frame.joined()[4:])
    assert header.correlation_id == 7
    got = [bytes(p.records) for p in decoded.topic_data[0].partition_data]
    assert got == [bytes(large), bytes(small), bytes(other)]


def test_a_frame_without_references_is_one_piece_of_its_own_bytes() -> None:
    frame = headers.encode_request_frame(METADATA, 12, 1, "cid", {"topics": None})
    assert [bytes(p) for p in frame.pieces()] == [bytes(frame)]
    assert frame.size == len(frame) and int.from_bytes(frame[:4], "big") == len(frame) - 4


def test_records_outside_a_frame_are_copied_as_before() -> None:
    large = batch(20, 1000)
    out = bytearray()
    codec.encode_into(out, PRODUCE.request, 9, produce_body(large))
    assert bytes(large) in bytes(out)


class Trickle:
    """A transport that takes at most ``step`` bytes per write, and nothing every third write."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.calls = 0
        self.stream = bytearray()

    def send_many(self, views: Sequence[memoryview]) -> int:
        self.calls += 1
        if self.calls % 3 == 0:
            return 0
        room = self.step
        for view in views:
            n = min(room, len(view))
            self.stream += view[:n]
            room -= n
            if not room:
                break
        return self.step - room


@pytest.mark.parametrize(
    ("step", "count", "value_size"),
    [(1, 3, 700), (7, 3, 700), (4096, 3, 700), (1 << 20, 3, 700), (1 << 24, 40, 700), (1 << 24, 12, 20_000)],
    ids=["1", "7", "4096", "1MiB", "more-views-than-one-write", "more-bytes-than-one-write"],
)
def test_partial_writes_resume_where_they_stopped_and_callbacks_follow_each_frame(
    step: int, count: int, value_size: int
) -> None:
    frames = [
        headers.encode_request_frame(PRODUCE, 9, i, "cid", produce_body(batch(10 + i, value_size), batch(1, 5)))
        for i in range(count)
    ] + [headers.encode_request_frame(METADATA, 12, count, "cid", {"topics": None})]
    expected = b"".join(f.joined() for f in frames)
    ends = [sum(f.size for f in frames[: i + 1]) for i in range(len(frames))]
    outbox, transport = Outbox(), Trickle(step)
    written: list[int] = []
    for i, f in enumerate(frames):
        outbox.add(f, lambda i=i: written.append(i))  # type: ignore[misc]
    while outbox:
        for callback in outbox.write(transport):  # type: ignore[arg-type]
            callback()
        # exactly the frames whose last byte is on the wire have been reported, in order
        assert written == [i for i, end in enumerate(ends) if end <= len(transport.stream)]
    assert bytes(transport.stream) == expected
    assert written == list(range(count + 1))


@pytest.mark.parametrize("step", [1, 700, 4096, 1 << 24])
def test_frames_not_wholly_written_are_counted_with_or_without_a_callback(step: int) -> None:
    """The count the producer's backpressure reads (queue.buffering.backpressure.threshold): a
    frame leaves it with its last byte, whether or not it has a callback."""
    frames = [
        headers.encode_request_frame(PRODUCE, 9, i, "cid", produce_body(batch(10 + i, 700), batch(1, 5)))
        for i in range(4)
    ]
    ends = [sum(f.size for f in frames[: i + 1]) for i in range(len(frames))]
    outbox, transport = Outbox(), Trickle(step)
    called: list[int] = []
    for i, f in enumerate(frames):
        outbox.add(f, (lambda i=i: called.append(i)) if i % 2 else None)  # type: ignore[misc]
    assert outbox.frames == 4
    while outbox:
        for callback in outbox.write(transport):  # type: ignore[arg-type]
            callback()
        assert outbox.frames == sum(end > len(transport.stream) for end in ends)
    assert called == [1, 3]
    outbox.add(frames[0], None)
    outbox.clear()
    assert outbox.frames == 0 and not outbox


def test_a_sasl_token_frame_is_its_bytes() -> None:
    frame = Frame(b"\x00\x00\x00\x02hi")
    assert frame.size == 6 and frame.joined() == b"\x00\x00\x00\x02hi"
