"""RecordBatch v2 (magic 2) encoding: the producer's batch builder, control batches, and the
producer-state rewrite of a built batch. The layout is in types.py, decoding in decoder.py.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from kafkawire.native import native
from kafkawire.protocol.primitives import DecodeError, encode_varint, encode_varlong
from kafkawire.records.compression import NONE, compress, resolve_level
from kafkawire.records.crc import crc32c
from kafkawire.records.types import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_MASK,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CONTROL_KEY,
    CONTROL_MASK,
    CONTROL_VALUE,
    CRC,
    CRC_OFFSET,
    HEADER,
    HEADER_SIZE,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_OFFSET,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    PRODUCER_OFFSET,
    TRANSACTIONAL_MASK,
    Buffer,
    CorruptRecordError,
    Headers,
)

_PRODUCER = struct.Struct(">qhi")  # producerId, producerEpoch, baseSequence

# Encodings of -1 .. _SMALL_LIMIT-1, computed once: lengths, deltas and counts on the
# producer's hot path are nearly always small, and a tuple lookup beats a function call. Written
# out from the zigzag form (-1 is 1, n >= 0 is 2n; one byte below 128, else low 7 bits | 0x80 and
# the rest) rather than by 4,097 calls of encode_varint: a third of the time, at every start-up.
_SMALL_LIMIT = 4096
_SMALL = (
    b"\x01",
    *[bytes((z,)) for z in range(0, 128, 2)],
    *[bytes((low | 0x80, high)) for high in range(1, 2 * _SMALL_LIMIT >> 7) for low in range(0, 128, 2)],
)
_NULL = _SMALL[0]
_ZERO = _SMALL[1]
# One record for `BatchBuilder.append_records`: timestamp (ms), key, value, headers (or None).
RecordFields = tuple[int, bytes | None, bytes | None, Headers | None]


def record_size_upper_bound(key: bytes | None, value: bytes | None, headers: Headers = ()) -> int:
    """Most bytes ``BatchBuilder.append`` can add for this record: every length as it will be
    written, the offset and timestamp deltas at their widest (unknown until the batch is built).

    The producer compares ``builder.size + record_size_upper_bound(...)`` with ``batch.size``
    before appending, so a batch is closed before it overflows. A bound of every varint at its
    widest (36 bytes for a record without headers) closed 1 KB-value batches at 943 records of
    the ~967 that fit, and 100 B ones at 7,352 of ~8,200.
    """
    body = 1 + 10 + 5 + _varint_size(len(headers))  # attributes, timestamp and offset deltas, count
    body += 1 if key is None else _varint_size(len(key)) + len(key)
    body += 1 if value is None else _varint_size(len(value)) + len(value)
    for header_key, header_value in headers:
        name = len(header_key.encode())
        body += (
            _varint_size(name)
            + name
            + (1 if header_value is None else _varint_size(len(header_value)) + len(header_value))
        )
    return _varint_size(body) + body


def record_size_widest(key: bytes | None, value: bytes | None, headers: Headers = ()) -> int:
    """`record_size_upper_bound` with every varint at its widest (36 bytes and 10 a header besides
    the data): what librdkafka holds against ``message.max.bytes``, so that a record is refused as
    too large at the size confluent-kafka refuses it. At most ``WIDEST_GAP`` above the tight bound,
    and ``HEADER_GAP`` more a header."""
    size = _WIDEST_OVERHEAD + (0 if key is None else len(key)) + (0 if value is None else len(value))
    for header_key, header_value in headers:
        size += _WIDEST_HEADER + len(header_key.encode()) + (0 if header_value is None else len(header_value))
    return size


_WIDEST_OVERHEAD = 36  # a record's varints at their widest, besides the data (librdkafka's measure)
_WIDEST_HEADER = 10  # and a header's
WIDEST_GAP = _WIDEST_OVERHEAD - 20  # the tight bound takes at least 20 bytes besides the data
HEADER_GAP = _WIDEST_HEADER - 2  # and at least 2 a header


def _varint_size(n: int) -> int:
    """Bytes of a non-negative int as a zigzag varint."""
    return max(1, ((n << 1).bit_length() + 6) // 7)


class BatchBuilder:
    """Accumulates records for one v2 batch, encoding each as it is appended.

    Records are written straight into a bytearray behind a 61-byte header placeholder;
    ``build`` fills the header, compresses if asked and computes the CRC once. ``spare``: a
    finished batch's buffer to write over (`BatchBuffers`): its pages are already the process's,
    where a fresh 1 MB bytearray costs a page fault and a zeroed page per 4 KiB written.
    """

    __slots__ = ("_base_timestamp", "_buf", "_count", "_max_timestamp", "_size")

    def __init__(self, spare: bytearray | None = None) -> None:
        self._buf = bytearray(HEADER_SIZE) if spare is None else spare
        self._size = HEADER_SIZE  # the batch's bytes in ``_buf``; a spare one may be longer
        self._count = 0
        self._base_timestamp = 0
        self._max_timestamp = 0

    @property
    def size(self) -> int:
        """Bytes of the batch so far, header included, before compression."""
        return self._size

    @property
    def record_count(self) -> int:
        return self._count

    @property
    def base_timestamp(self) -> int:
        return self._base_timestamp

    @property
    def max_timestamp(self) -> int:
        return self._max_timestamp

    def __len__(self) -> int:
        return self._count

    def append(
        self,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: Headers = (),
    ) -> int:
        """Encode one record at the end of the batch and return its offset delta."""
        offset_delta = self._count
        self.append_records(((timestamp_ms, key, value, headers),))
        return offset_delta

    def append_records(self, records: Sequence[Any]) -> None:
        """Encode many records at the end of the batch: ``(timestamp_ms, key, value, headers)``
        each (``headers`` may be None), or objects with those attributes. The producer calls this
        once per batch, when it closes, with its pending records.

        Done by ``kafkawire._native.encode_records`` when built, else by `encode_records`, its
        byte-identical twin. A key or value of the wrong type fails before the batch is touched.
        """
        encode = encode_records if native is None else native.encode_records
        self._count, self._base_timestamp, self._max_timestamp, self._size = encode(
            self._buf, records, self._count, self._base_timestamp, self._max_timestamp, self._size
        )

    def records_buffer(self) -> bytearray:
        """The buffer the records are written in: after a compressed `build`, nothing the batch
        needs (for `BatchBuffers.give`)."""
        return self._buf

    def build(
        self,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        base_sequence: int = NO_SEQUENCE,
        transactional: bool = False,
        compression: int = NONE,
        compression_level: int | None = None,
        base_offset: int = 0,
        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
        hand_over: bool = False,
    ) -> bytes | bytearray:
        """Return the finished batch. Keep these bytes for retries: a retry must be identical.
        ``hand_over``: the batch is this builder's own buffer, not a copy of it (a producer's 1 MB
        batch is not copied once more); the builder must not be used again."""
        if transactional and producer_id < 0:
            raise ValueError("a transactional batch needs a producer id")
        attributes = compression | (TRANSACTIONAL_MASK if transactional else 0)
        return self._finish(
            attributes,
            compression_level,
            producer_id,
            producer_epoch,
            base_sequence,
            base_offset,
            partition_leader_epoch,
            hand_over,
        )

    def _finish(
        self,
        attributes: int,
        compression_level: int | None,
        producer_id: int,
        producer_epoch: int,
        base_sequence: int,
        base_offset: int,
        partition_leader_epoch: int,
        hand_over: bool,
    ) -> bytes | bytearray:
        if self._count == 0:
            raise ValueError("a record batch needs at least one record")
        compression = attributes & COMPRESSION_MASK
        level = resolve_level(compression, compression_level)
        if compression == NONE:
            out = self._buf
            if len(out) > self._size:
                del out[self._size :]  # a spare buffer's tail (no new allocation unless it halves)
        else:
            body = compress(compression, memoryview(self._buf)[HEADER_SIZE : self._size], level)
            out = bytearray(HEADER_SIZE + len(body))
            out[HEADER_SIZE:] = body
        HEADER.pack_into(
            out,
            0,
            base_offset,
            len(out) - LOG_OVERHEAD,
            partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            self._count - 1,
            self._base_timestamp,
            self._max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            self._count,
        )
        CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
        return out if hand_over else bytes(out)


def encode_records(
    buf: bytearray, records: Sequence[Any], count: int, base: int, top: int, end: int = -1
) -> tuple[int, int, int, int]:
    """Write v2 records into ``buf`` at ``end`` (-1: its length), after ``count`` others whose first
    and largest timestamps are ``base`` and ``top``; return the new count, base, top and end. A
    record is a `RecordFields` tuple or anything else with those four attributes (the producer's
    pending records). ``buf`` grows only when they do not fit (a spare buffer is written over);
    bytes past the new end are left as they were.

    One loop and one ``join`` for all of them: per record only the small-int varint lookups and
    the field concatenation, no call, no resize of a buffer.
    """
    small = _SMALL
    limit = _SMALL_LIMIT
    null = _NULL
    zero = _ZERO
    parts: list[bytes] = []
    add = parts.extend
    for record in records:
        if record.__class__ is tuple:
            timestamp_ms, key, value, headers = record
        else:  # a producer's pending record
            timestamp_ms, key, value, headers = record.timestamp, record.key, record.value, record.headers
        if count:
            delta = timestamp_ms - base
            timestamp_delta = small[delta + 1] if -1 <= delta < limit else encode_varlong(delta)
            if timestamp_ms > top:
                top = timestamp_ms
        else:
            base = top = timestamp_ms
            timestamp_delta = zero
        offset = small[count + 1] if count < limit else encode_varint(count)
        if key is None:
            key, key_length = b"", null
        else:
            n = len(key)
            key_length = small[n + 1] if n < limit else encode_varint(n)
        if value is None:
            value, value_length = b"", null
        else:
            n = len(value)
            value_length = small[n + 1] if n < limit else encode_varint(n)
        encoded_headers = _encode_headers(headers) if headers else zero
        size = (
            1
            + len(timestamp_delta)
            + len(offset)
            + len(key_length)
            + len(key)
            + len(value_length)
            + len(value)
            + len(encoded_headers)
        )
        add(
            (
                small[size + 1] if size < limit else encode_varint(size),
                zero,  # record attributes
                timestamp_delta,
                offset,
                key_length,
                key,
                value_length,
                value,
                encoded_headers,
            )
        )
        count += 1
    data = b"".join(parts)
    if end < 0 or end > len(buf):
        end = len(buf)
    buf[end : end + len(data)] = data
    return count, base, top, end + len(data)


def _encode_headers(headers: Headers) -> bytes:
    small = _SMALL
    limit = _SMALL_LIMIT
    n = len(headers)
    parts = [small[n + 1] if n < limit else encode_varint(n)]
    for header_key, header_value in headers:
        raw_key = header_key.encode()
        n = len(raw_key)
        parts.append(small[n + 1] if n < limit else encode_varint(n))
        parts.append(raw_key)
        if header_value is None:
            parts.append(_NULL)
        else:
            n = len(header_value)
            parts.append(small[n + 1] if n < limit else encode_varint(n))
            parts.append(header_value)
    return b"".join(parts)


def build_control_batch(
    commit: bool,
    coordinator_epoch: int,
    producer_id: int,
    producer_epoch: int,
    timestamp_ms: int,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """Encode a transaction marker batch, as a transaction coordinator has brokers write it."""
    builder = BatchBuilder()
    key = CONTROL_KEY.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT)
    builder.append(timestamp_ms, key, CONTROL_VALUE.pack(0, coordinator_epoch))
    return bytes(  # already bytes: not copied again
        builder._finish(
            TRANSACTIONAL_MASK | CONTROL_MASK,
            None,
            producer_id,
            producer_epoch,
            NO_SEQUENCE,
            base_offset,
            partition_leader_epoch,
            False,
        )
    )


def with_producer_state(batch: Buffer, producer_id: int, producer_epoch: int, base_sequence: int) -> bytes:
    """Return ``batch`` with new producer id/epoch/base sequence and a fresh CRC.

    For the idempotent producer's rare sequence reset (e.g. after an epoch bump): only the
    header changes, the records stay byte-for-byte what was built, nothing is re-encoded or
    re-compressed. Ordinary retries resend the original bytes unchanged.
    """
    out = bytearray(batch)
    if len(out) < HEADER_SIZE:
        raise DecodeError(f"a v2 batch is at least {HEADER_SIZE} bytes, got {len(out)}")
    (length,) = struct.unpack_from(">i", out, LENGTH_OFFSET)
    if out[MAGIC_OFFSET] != MAGIC or length != len(out) - LOG_OVERHEAD:
        raise DecodeError("not exactly one v2 record batch")
    (crc,) = CRC.unpack_from(out, CRC_OFFSET)
    if crc != crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]):
        raise CorruptRecordError("batch CRC mismatch before rewriting producer state")
    _PRODUCER.pack_into(out, PRODUCER_OFFSET, producer_id, producer_epoch, base_sequence)
    CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)
