"""Legacy MessageSet (magic 0 and 1), for Produce v0-v2 and old log segments in Fetch.

Message grammar (big-endian)::

    Message =>
      offset      int64   v0: absolute; v1 inside a compressed wrapper: relative (0, 1, ...)
      messageSize int32   bytes after this field
      crc         uint32  CRC-32 (IEEE) over magic .. end
      magic       int8    0 or 1
      attributes  int8    bits 0-2 compression codec, bit 3 (v1) timestamp type
      timestamp   int64   v1 only
      key         int32 length (-1 = null) + bytes
      value       int32 length (-1 = null) + bytes

A compressed message is a wrapper whose value is a whole compressed message set. The
wrapper's offset is the last inner offset; in v1 the inner offsets are relative, so the
absolute offset of an inner message is wrapper offset - last inner offset + inner offset.

lz4 under magic 0 carries KAFKA-3160's bug: old Java clients computed the frame
descriptor checksum over the frame magic as well as the descriptor. We write that broken
byte for magic 0, as Java and librdkafka do, and repair it before decompressing; magic 1
uses the correct checksum.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kafkawire.protocol.primitives import DecodeError
from kafkawire.records.compression import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    LZ4,
    NONE,
    ZSTD,
    compress,
    decompress,
)
from kafkawire.records.crc import crc32
from kafkawire.records.types import (
    COMPRESSION_MASK,
    COPY_BODY_LIMIT,
    RECORD_COST,
    TIMESTAMP_TYPE_MASK,
    CorruptRecordError,
    DecodeBudget,
    Record,
    RecordBatch,
)

NO_TIMESTAMP = -1

_PREFIX = struct.Struct(">qiIbb")  # offset, messageSize, crc, magic, attributes
_PREFIX_SIZE = _PREFIX.size  # 18
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_LOG_OVERHEAD = 12  # offset + messageSize
_CRC_END = 16  # magic follows the crc
# Smallest message after messageSize: crc, magic, attributes, [timestamp], key and value lengths.
_MIN_SIZE = {0: 4 + 1 + 1 + 4 + 4, 1: 4 + 1 + 1 + 8 + 4 + 4}

LegacyRecord = tuple[int, bytes | None, bytes | None]  # (timestamp_ms, key, value)


def encode_message_set(
    magic: int,
    records: Sequence[LegacyRecord],
    compression: int = NONE,
    compression_level: int | None = None,
) -> bytes:
    """Encode ``(timestamp_ms, key, value)`` records as a magic 0/1 message set.

    Offsets are 0..n-1 (the broker assigns real ones). With compression the set is one
    wrapper message. Magic 0 has no timestamps, so theirs are dropped.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy message sets are magic 0 or 1, not {magic}")
    if not records:
        raise ValueError("a message set needs at least one record")
    if compression == ZSTD:
        raise ValueError("zstd needs record batch v2 (magic 2); brokers reject it in magic 0/1")
    messages = b"".join(
        _encode_message(magic, i, timestamp, NONE, key, value) for i, (timestamp, key, value) in enumerate(records)
    )
    if compression == NONE:
        return messages
    payload = compress(compression, messages, compression_level)
    if compression == LZ4 and magic == 0:
        payload = _set_lz4_header_checksum(payload, broken=True)
    max_timestamp = max(timestamp for timestamp, _key, _value in records)
    return _encode_message(magic, len(records) - 1, max_timestamp, compression, None, payload)


def _encode_message(
    magic: int,
    offset: int,
    timestamp: int,
    attributes: int,
    key: bytes | None,
    value: bytes | None,
) -> bytes:
    body = bytearray((magic, attributes))
    if magic == 1:
        body += _INT64.pack(timestamp)
    for field in (key, value):
        if field is None:
            body += _INT32.pack(-1)
        else:
            body += _INT32.pack(len(field))
            body += field
    return struct.pack(">qiI", offset, 4 + len(body), crc32(body)) + bytes(body)


def decode_legacy_message(
    buf: bytes,
    pos: int,
    end: int,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    budget: DecodeBudget | None = None,
) -> RecordBatch:
    """Decode the top-level message in ``buf[pos:end]`` as a batch of its records.

    An uncompressed message is a batch of one; a compressed wrapper yields its inner
    messages with absolute offsets. ``end`` must be exactly the message's end. What the
    records take is charged to ``budget`` (see `DecodeBudget`).
    """
    if budget is None:
        budget = DecodeBudget()
    offset, size, crc, magic, attributes, timestamp, key, value = _read_message(buf, pos, end)
    codec = attributes & COMPRESSION_MASK
    if codec == NONE:
        budget.charge(RECORD_COST + size, "a message")
        records = [Record(offset, timestamp, key, value, [])]
    else:
        if value is None:
            raise DecodeError(f"compressed message at offset {offset} has a null value")
        if codec == LZ4 and magic == 0:
            value = _set_lz4_header_checksum(value, broken=False)
        inner = decompress(codec, value, min(max_decompressed_size, budget.remaining))
        budget.charge(len(inner), "decompressed messages")
        log_append_time = timestamp if magic == 1 and attributes & TIMESTAMP_TYPE_MASK else None
        records = _decode_inner(
            bytes(inner) if len(inner) <= COPY_BODY_LIMIT else inner, magic, offset, log_append_time, budget
        )
    base_offset = records[0].offset
    return RecordBatch(
        base_offset=base_offset,
        batch_length=size,
        partition_leader_epoch=-1,
        magic=magic,
        crc=crc,
        attributes=attributes,
        last_offset_delta=records[-1].offset - base_offset,
        base_timestamp=records[0].timestamp,
        max_timestamp=timestamp,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        records=records,
    )


def _decode_inner(
    data: bytes | bytearray, magic: int, wrapper_offset: int, log_append_time: int | None, budget: DecodeBudget
) -> list[Record]:
    """The uncompressed messages of a wrapper; unlike a fetch, none may be cut short.

    The messages are counted first (their sizes only) and charged to ``budget`` before any is
    decoded, so a wrapper of millions of tiny messages fails before it allocates them.
    """
    count = 0
    pos = 0
    end = len(data)
    while pos < end:  # sizes only: nothing is allocated per message
        if end - pos < _LOG_OVERHEAD:
            raise DecodeError("truncated message inside a compressed wrapper")
        (size,) = _INT32.unpack_from(data, pos + 8)
        if size < 0 or pos + _LOG_OVERHEAD + size > end:
            raise DecodeError(f"inner message size {size} overruns its wrapper")
        count += 1
        pos += _LOG_OVERHEAD + size
    if not count:
        raise DecodeError("compressed message holds no inner messages")
    budget.charge(RECORD_COST * count, f"{count} messages in a wrapper")
    records = []
    pos = 0
    while pos < end:
        (size,) = _INT32.unpack_from(data, pos + 8)
        message_end = pos + _LOG_OVERHEAD + size
        offset, _size, _crc, inner_magic, attributes, timestamp, key, value = _read_message(data, pos, message_end)
        if inner_magic != magic:
            raise DecodeError(f"magic {inner_magic} message inside a magic {magic} wrapper")
        if attributes & COMPRESSION_MASK:
            raise DecodeError("nested compression inside a compressed message")
        if log_append_time is not None:
            timestamp = log_append_time
        if data.__class__ is not bytes:  # a large body read in place: copy the values out
            key, value = (None if key is None else bytes(key)), (None if value is None else bytes(value))
        records.append(Record(offset, timestamp, key, value, []))
        pos = message_end
    if magic == 1:
        shift = wrapper_offset - records[-1].offset
        for record in records:
            record.offset += shift
    return records


def _read_message(
    buf: bytes | bytearray, pos: int, end: int
) -> tuple[int, int, int, int, int, int, bytes | None, bytes | None]:
    """Parse and CRC-check one message spanning exactly ``buf[pos:end]``."""
    if end - pos < _PREFIX_SIZE:
        raise DecodeError(f"message of {end - pos} bytes is shorter than its header")
    offset, size, crc, magic, attributes = _PREFIX.unpack_from(buf, pos)
    if magic not in (0, 1):
        raise DecodeError(f"legacy message with magic {magic}")
    if size != end - pos - _LOG_OVERHEAD:
        raise DecodeError(f"message size {size} disagrees with its {end - pos} bytes")
    if size < _MIN_SIZE[magic]:
        raise DecodeError(f"magic {magic} message of {size} bytes is too short")
    actual_crc = crc32(memoryview(buf)[pos + _CRC_END : end])
    if crc != actual_crc:
        raise CorruptRecordError(f"message at offset {offset}: CRC-32 is {actual_crc:#010x}, header says {crc:#010x}")
    cursor = pos + _PREFIX_SIZE
    timestamp = NO_TIMESTAMP
    if magic == 1:
        (timestamp,) = _INT64.unpack_from(buf, cursor)
        cursor += 8
    key, cursor = _read_bytes(buf, cursor, end)
    value, cursor = _read_bytes(buf, cursor, end)
    if cursor != end:
        raise DecodeError(f"{end - cursor} stray bytes after message at offset {offset}")
    return offset, size, crc, magic, attributes, timestamp, key, value


def _read_bytes(buf: bytes | bytearray, pos: int, end: int) -> tuple[bytes | None, int]:
    if end - pos < 4:
        raise DecodeError("truncated length in message")
    (length,) = _INT32.unpack_from(buf, pos)
    pos += 4
    if length == -1:
        return None, pos
    if length < 0 or length > end - pos:
        raise DecodeError(f"length {length} overruns the message")
    return buf[pos : pos + length], pos + length  # type: ignore[return-value]  # bytes from bytes


def _set_lz4_header_checksum(frame: bytes, broken: bool) -> bytes:
    """Rewrite an lz4 frame's descriptor checksum byte, correct or KAFKA-3160 style.

    The checksum is the second byte of xxHash32 over the descriptor (FLG, BD, optional
    content size and dictionary id); the broken variant hashed from the frame magic on.
    """
    if len(frame) < 7:
        raise DecodeError("truncated lz4 frame header")
    flags = frame[4]
    descriptor_end = 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
    if len(frame) <= descriptor_end:
        raise DecodeError("truncated lz4 frame header")
    start = 0 if broken else 4
    checksum = (_xxh32_short(frame[start:descriptor_end]) >> 8) & 0xFF
    return frame[:descriptor_end] + bytes((checksum,)) + frame[descriptor_end + 1 :]


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _xxh32_short(data: bytes) -> int:
    """xxHash32 with seed 0 for inputs under 16 bytes (all an lz4 frame descriptor needs)."""
    if len(data) >= 16:
        raise ValueError("_xxh32_short only handles inputs under 16 bytes")
    h = (_P5 + len(data)) & _M32
    pos = 0
    while len(data) - pos >= 4:
        word = int.from_bytes(data[pos : pos + 4], "little")
        h = (_rotl((h + word * _P3) & _M32, 17) * _P4) & _M32
        pos += 4
    for byte in data[pos:]:
        h = (_rotl((h + byte * _P5) & _M32, 11) * _P1) & _M32
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h
