"""RecordBatch v2 (magic 2): the producer's batch builder and a hostile-input-safe decoder.

Batch grammar (all integers big-endian; offsets in bytes from the start of the batch)::

    RecordBatch =>
      baseOffset           int64   0   offset of the first record; the broker assigns it
      batchLength          int32   8   bytes after this field (so the batch is 12 + batchLength)
      partitionLeaderEpoch int32  12   set by the broker; producers send -1
      magic                int8   16   2 (0 and 1 are the legacy MessageSet, see legacy.py)
      crc                  uint32 17   CRC-32C over attributes .. end of the batch
      attributes           int16  21   bits 0-2 compression codec (0 none, 1 gzip, 2 snappy,
                                       3 lz4, 4 zstd), bit 3 timestampType (1 = LogAppendTime),
                                       bit 4 isTransactional, bit 5 isControlBatch,
                                       bit 6 hasDeleteHorizonMs (baseTimestamp is then the
                                       delete horizon of a compacted batch)
      lastOffsetDelta      int32  23   offset delta of the last record
      baseTimestamp        int64  27   timestamp of the first record
      maxTimestamp         int64  35   largest record timestamp
      producerId           int64  43   -1 unless idempotent / transactional
      producerEpoch        int16  51   -1 unless idempotent / transactional
      baseSequence         int32  53   sequence of the first record, -1 if none
      recordsCount         int32  57   number of records
      records              ...    61   the records, compressed as one blob if codec != 0

Record grammar (varint = zigzag signed varint, varlong = zigzag signed 64-bit varint)::

    Record =>
      length          varint   bytes after this field
      attributes      int8     unused, 0
      timestampDelta  varlong  timestamp - baseTimestamp
      offsetDelta     varint   offset - baseOffset
      keyLength       varint   -1 = null key
      key             bytes
      valueLength     varint   -1 = null value
      value           bytes
      headersCount    varint
      headers         [Header]

    Header =>
      headerKeyLength   varint
      headerKey         bytes (UTF-8)
      headerValueLength varint  -1 = null value
      headerValue       bytes

Control batches (transaction markers) hold one record whose key is int16 version (0) +
int16 type (0 abort, 1 commit) and whose value is int16 version (0) + int32 coordinatorEpoch.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkawire.native import native
from kafkawire.protocol.primitives import (
    DecodeError,
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
)
from kafkawire.records.compression import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    NONE,
    compress,
    decompress,
    resolve_level,
)
from kafkawire.records.crc import crc32c

MAGIC = 2

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

CREATE_TIME = 0
LOG_APPEND_TIME = 1

CONTROL_ABORT = 0
CONTROL_COMMIT = 1

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LENGTH_OFFSET = 8
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
PRODUCER_OFFSET = 43
LOG_OVERHEAD = 12  # baseOffset + batchLength: the part not counted by batchLength
_PRODUCER = struct.Struct(">qhi")  # producerId, producerEpoch, baseSequence
_CRC = struct.Struct(">I")
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_CONTROL_KEY = struct.Struct(">hh")
_CONTROL_VALUE = struct.Struct(">hi")

# Smallest encodings, for rejecting counts that cannot fit in the bytes left before looping.
_MIN_RECORD_SIZE = 7  # length, attributes, timestampDelta, offsetDelta, keyLength, valueLength, headersCount
_MIN_HEADER_SIZE = 2  # headerKeyLength, headerValueLength

# Encodings of -1 .. _SMALL_LIMIT-1, computed once: lengths, deltas and counts on the
# producer's hot path are nearly always small, and a tuple lookup beats a function call.
_SMALL_LIMIT = 4096
_SMALL = tuple(encode_varint(i) for i in range(-1, _SMALL_LIMIT))
_NULL = _SMALL[0]
_ZERO = _SMALL[1]
# Values of the 128 one-byte varints, for the decoder's fast path.
_ONE_BYTE_VARINT = tuple(decode_varint(bytes((b,)), 0)[0] for b in range(0x80))

Buffer = bytes | bytearray | memoryview
Headers = Sequence[tuple[str, bytes | None]]
# One record for `BatchBuilder.append_records`: timestamp (ms), key, value, headers (or None).
RecordFields = tuple[int, bytes | None, bytes | None, Headers | None]


class CorruptRecordError(DecodeError):
    """A batch or message failed its CRC check: the bytes were damaged in transit or on disk."""


@dataclass(slots=True)
class Record:
    """One decoded record, with its absolute offset and effective timestamp."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


@dataclass(slots=True)
class RecordBatch:
    """One decoded batch: the v2 header fields as sent plus its records.

    Legacy (magic 0/1) messages decode to this too, one per top-level message, with
    producer fields -1, so a consumer handles a single shape.
    """

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: list[Record]

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        """CREATE_TIME (0) or LOG_APPEND_TIME (1)."""
        return (self.attributes & TIMESTAMP_TYPE_MASK) >> 3

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """Where to fetch from next; correct even when compaction emptied the batch."""
        return self.base_offset + self.last_offset_delta + 1


@dataclass(frozen=True, slots=True)
class TransactionMarker:
    """The content of a transaction control record: did the transaction commit or abort."""

    commit: bool
    coordinator_epoch: int


def record_size_upper_bound(key: bytes | None, value: bytes | None, headers: Headers = ()) -> int:
    """Most bytes ``BatchBuilder.append`` can add for this record (varints at their widest).

    The producer compares ``builder.size + record_size_upper_bound(...)`` with ``batch.size``
    before appending, so a batch is closed before it overflows.
    """
    size = 5 + 1 + 10 + 5 + 5 + 5 + 5  # length, attributes, deltas, key/value lengths, count
    if key is not None:
        size += len(key)
    if value is not None:
        size += len(value)
    for header_key, header_value in headers:
        size += 10 + len(header_key.encode())
        if header_value is not None:
            size += len(header_value)
    return size


class BatchBuilder:
    """Accumulates records for one v2 batch, encoding each as it is appended.

    Records are written straight into a bytearray behind a 61-byte header placeholder;
    ``build`` fills the header, compresses if asked and computes the CRC once.
    """

    __slots__ = ("_base_timestamp", "_buf", "_count", "_max_timestamp")

    def __init__(self) -> None:
        self._buf = bytearray(HEADER_SIZE)
        self._count = 0
        self._base_timestamp = 0
        self._max_timestamp = 0

    @property
    def size(self) -> int:
        """Bytes of the batch so far, header included, before compression."""
        return len(self._buf)

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
        self._count, self._base_timestamp, self._max_timestamp = encode(
            self._buf, records, self._count, self._base_timestamp, self._max_timestamp
        )

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
    ) -> bytes:
        """Return the finished batch. Keep these bytes for retries: a retry must be identical."""
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
    ) -> bytes:
        if self._count == 0:
            raise ValueError("a record batch needs at least one record")
        compression = attributes & COMPRESSION_MASK
        level = resolve_level(compression, compression_level)
        if compression == NONE:
            out = self._buf
        else:
            body = compress(compression, memoryview(self._buf)[HEADER_SIZE:], level)
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
        _CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
        return bytes(out)


def encode_records(buf: bytearray, records: Sequence[Any], count: int, base: int, top: int) -> tuple[int, int, int]:
    """Append v2 records to ``buf`` after ``count`` others whose first and largest timestamps are
    ``base`` and ``top``; return the new count, base and top. A record is a `RecordFields` tuple
    or anything else with those four attributes (the producer's pending records).

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
    buf += b"".join(parts)
    return count, base, top


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
    key = _CONTROL_KEY.pack(0, CONTROL_COMMIT if commit else CONTROL_ABORT)
    builder.append(timestamp_ms, key, _CONTROL_VALUE.pack(0, coordinator_epoch))
    return builder._finish(
        TRANSACTIONAL_MASK | CONTROL_MASK,
        None,
        producer_id,
        producer_epoch,
        NO_SEQUENCE,
        base_offset,
        partition_leader_epoch,
    )


def decode_transaction_marker(record: Record) -> TransactionMarker:
    """Read a control batch's record as a commit/abort marker."""
    if record.key is None or len(record.key) < _CONTROL_KEY.size:
        raise DecodeError("control record key too short")
    _version, kind = _CONTROL_KEY.unpack_from(record.key)
    if kind not in (CONTROL_ABORT, CONTROL_COMMIT):
        raise DecodeError(f"control record type {kind} is not a transaction marker")
    # Later versions may append fields; the first ones keep their place.
    if record.value is None or len(record.value) < _CONTROL_VALUE.size:
        raise DecodeError("transaction marker value too short")
    _version, coordinator_epoch = _CONTROL_VALUE.unpack_from(record.value)
    return TransactionMarker(kind == CONTROL_COMMIT, coordinator_epoch)


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
    (crc,) = _CRC.unpack_from(out, CRC_OFFSET)
    if crc != crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]):
        raise CorruptRecordError("batch CRC mismatch before rewriting producer state")
    _PRODUCER.pack_into(out, PRODUCER_OFFSET, producer_id, producer_epoch, base_sequence)
    _CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def decode_batches(data: Buffer, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> list[RecordBatch]:
    """Decode the batches of a Fetch response partition (or any log segment bytes).

    Handles v2 batches and legacy magic 0/1 messages alike. A trailing incomplete batch,
    which brokers send when a fetch size limit cuts one, is dropped. Anything malformed
    raises DecodeError; a checksum failure raises its subclass CorruptRecordError.
    """
    # legacy.py builds Record/RecordBatch from this module, so it is imported on use.
    from kafkawire.records.legacy import decode_legacy_message

    buf = data if isinstance(data, bytes) else bytes(data)
    end = len(buf)
    pos = 0
    batches: list[RecordBatch] = []
    while end - pos >= LOG_OVERHEAD:
        _base_offset, length = _OFFSET_AND_LENGTH.unpack_from(buf, pos)
        if length < 0:
            raise DecodeError(f"negative batch length {length} at byte {pos}")
        batch_end = pos + LOG_OVERHEAD + length
        if batch_end > end:
            break
        if length < MAGIC_OFFSET + 1 - LOG_OVERHEAD:
            raise DecodeError(f"batch of {length} bytes at byte {pos} is too short to hold its magic")
        magic = buf[pos + MAGIC_OFFSET]
        if magic == MAGIC:
            batches.append(_decode_batch(buf, pos, batch_end, max_decompressed_size))
        elif magic in (0, 1):
            batches.append(decode_legacy_message(buf, pos, batch_end, max_decompressed_size))
        else:
            raise DecodeError(f"unknown record magic {magic} at byte {pos}")
        pos = batch_end
    return batches


def _decode_batch(buf: bytes, pos: int, end: int, max_decompressed_size: int) -> RecordBatch:
    if end - pos < HEADER_SIZE:
        raise DecodeError(f"v2 batch of {end - pos} bytes is shorter than its {HEADER_SIZE}-byte header")
    (
        base_offset,
        length,
        partition_leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    ) = HEADER.unpack_from(buf, pos)
    actual_crc = crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : end])
    if crc != actual_crc:
        raise CorruptRecordError(
            f"batch at offset {base_offset}: CRC-32C is {actual_crc:#010x}, header says {crc:#010x}"
        )
    if count < 0:
        raise DecodeError(f"negative record count {count}")
    codec = attributes & COMPRESSION_MASK
    if codec == NONE:
        body, body_pos, body_end = buf, pos + HEADER_SIZE, end
    else:
        body = decompress(codec, memoryview(buf)[pos + HEADER_SIZE : end], max_decompressed_size)
        body_pos, body_end = 0, len(body)
    if count > (body_end - body_pos) // _MIN_RECORD_SIZE:
        raise DecodeError(f"{count} records cannot fit in {body_end - body_pos} bytes")
    log_append_time = max_timestamp if attributes & TIMESTAMP_TYPE_MASK else None
    try:
        records, body_pos = _decode_records(
            body, body_pos, body_end, count, base_offset, base_timestamp, log_append_time
        )
    except IndexError:  # a varint ran past the end of the data
        raise DecodeError(f"batch at offset {base_offset} is truncated") from None
    if body_pos != body_end:
        raise DecodeError(f"{body_end - body_pos} bytes left over after {count} records")
    return RecordBatch(
        base_offset,
        length,
        partition_leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records,
    )


def _decode_records(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
) -> tuple[list[Record], int]:
    """Decode ``count`` records from ``buf[pos:end]``.

    Varints of one byte (nearly all lengths and deltas) are looked up inline; longer ones go
    through the shared decoder. Reading past ``len(buf)`` raises IndexError for the caller
    to convert; reading past a record's end is caught by the length checks.
    """
    one_byte = _ONE_BYTE_VARINT
    records = []
    for _ in range(count):
        b = buf[pos]
        if b < 0x80:
            length = one_byte[b]
            pos += 1
        else:
            length, pos = decode_varint(buf, pos)
        record_end = pos + length
        if length < _MIN_RECORD_SIZE - 1 or record_end > end:
            raise DecodeError(f"record length {length} does not fit the batch")
        pos += 1  # attributes, unused
        b = buf[pos]
        if b < 0x80:
            timestamp_delta = one_byte[b]
            pos += 1
        else:
            timestamp_delta, pos = decode_varlong(buf, pos)
        b = buf[pos]
        if b < 0x80:
            offset_delta = one_byte[b]
            pos += 1
        else:
            offset_delta, pos = decode_varint(buf, pos)
        key, pos = _read_bytes(buf, pos, record_end)
        value, pos = _read_bytes(buf, pos, record_end)
        if buf[pos] == 0:  # no headers, the common case
            headers: list[tuple[str, bytes | None]] = []
            pos += 1
        else:
            headers, pos = _read_headers(buf, pos, record_end)
        if pos != record_end:
            raise DecodeError(f"record of {length} bytes has {record_end - pos} unread")
        records.append(
            Record(
                base_offset + offset_delta,
                base_timestamp + timestamp_delta if log_append_time is None else log_append_time,
                key,
                value,
                headers,
            )
        )
    return records, pos


def _read_headers(buf: bytes, pos: int, end: int) -> tuple[list[tuple[str, bytes | None]], int]:
    count, pos = decode_varint(buf, pos)
    if count < 0 or count > (end - pos) // _MIN_HEADER_SIZE:
        raise DecodeError(f"header count {count} does not fit the record")
    headers = []
    for _ in range(count):
        raw_key, pos = _read_bytes(buf, pos, end)
        if raw_key is None:
            raise DecodeError("null header key")
        value, pos = _read_bytes(buf, pos, end)
        headers.append((raw_key.decode("utf-8", "replace"), value))
    return headers, pos


def _read_bytes(buf: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    """A varint-length-prefixed byte string (-1 = null) that must end by ``end``."""
    b = buf[pos]
    if b < 0x80:
        length = _ONE_BYTE_VARINT[b]
        pos += 1
    else:
        length, pos = decode_varint(buf, pos)
    if length < 0:
        if length != -1:
            raise DecodeError(f"negative length {length}")
        return None, pos
    stop = pos + length
    if stop > end:
        raise DecodeError(f"length {length} overruns the record")
    return buf[pos:stop], stop
