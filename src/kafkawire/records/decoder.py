"""Decoding record batches from a Fetch answer or log bytes, trusting nothing.

v2 batches here, legacy magic 0/1 messages in legacy.py. Everything a peer declares is checked
against the bytes that hold it before anything is allocated, and what decoding allocates is
charged against a `DecodeBudget` (bytes plus a cost per record and per header), so neither a
decompression bomb nor a batch declaring millions of empty records can take more memory than
the budget allows. Anything malformed raises DecodeError.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from kafkawire.protocol.primitives import DecodeError, decode_varint, decode_varlong, unzigzag
from kafkawire.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, NONE, decompress
from kafkawire.records.crc import crc32c
from kafkawire.records.legacy import decode_legacy_message
from kafkawire.records.types import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_MASK,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CONTROL_KEY,
    CONTROL_MASK,
    CONTROL_VALUE,
    COPY_BODY_LIMIT,
    HEADER,
    HEADER_COST,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_OFFSET,
    RECORD_COST,
    TIMESTAMP_TYPE_MASK,
    Buffer,
    CorruptRecordError,
    DecodeBudget,
    Record,
    RecordBatch,
    TransactionMarker,
)

_OFFSET_AND_LENGTH = struct.Struct(">qi")

# The smallest encodings, for rejecting counts that cannot fit in the bytes left. A v2 record is
# at least 7 bytes: length, attributes, timestampDelta, offsetDelta, keyLength (-1),
# valueLength (-1), headersCount (0), one byte each. A header is at least 2 (an empty key, a null value).
_MIN_RECORD_SIZE = 7
_MIN_HEADER_SIZE = 2
_ReadBytes = Callable[["bytes | bytearray | memoryview", int, int], "tuple[bytes | None, int]"]
# Values of the 128 one-byte varints and of the 16,384 two-byte ones (indexed by their 14 payload
# bits, which are the unsigned value), for the decoder's fast path: nearly every length and delta in
# a record takes one or two bytes. Built with the zigzag formula: decoding each would cost 17 ms at import.
_TWO_BYTE_VARINT = tuple(map(unzigzag, range(1 << 14)))
_ONE_BYTE_VARINT = _TWO_BYTE_VARINT[:0x80]


def decode_batches(
    data: Buffer,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    budget: DecodeBudget | None = None,
    lazy: bool = False,
    end_offset: int | None = None,
) -> list[RecordBatch]:
    """Decode the batches of a Fetch response partition (or any log segment bytes).

    Handles v2 batches and legacy magic 0/1 messages alike. A trailing incomplete batch, which
    brokers send when a fetch size limit cuts one, is dropped. ``max_decompressed_size`` bounds
    one batch's decompressed bytes, ``budget`` (a fresh `DecodeBudget` if None) everything the
    call allocates. Anything malformed raises DecodeError; a checksum failure its subclass
    CorruptRecordError, a budget overrun DecodeBudgetError. ``lazy``: v2 data batches keep their
    (checked, decompressed) record bytes in ``body`` for a caller that decodes them itself
    (the consumer, straight into Messages); control batches are always decoded. ``end_offset``: a
    range reader's end; batches starting there or later are not decoded (a broker fills its size
    limit, often far past a short range), except the first, so that the reader always moves on.
    """
    if budget is None:
        budget = DecodeBudget()
    # Lazy batches read a view in place (the consumer decodes them at once, in C); else bytes.
    buf = data if type(data) is bytes or (lazy and type(data) is memoryview) else bytes(data)
    end = len(buf)
    pos = 0
    batches: list[RecordBatch] = []
    while end - pos >= LOG_OVERHEAD:
        base_offset, length = _OFFSET_AND_LENGTH.unpack_from(buf, pos)
        if end_offset is not None and base_offset >= end_offset and batches:
            break
        if length < 0:
            raise DecodeError(f"negative batch length {length} at byte {pos}")
        batch_end = pos + LOG_OVERHEAD + length
        if batch_end > end:
            break
        if length < MAGIC_OFFSET + 1 - LOG_OVERHEAD:
            raise DecodeError(f"batch of {length} bytes at byte {pos} is too short to hold its magic")
        magic = buf[pos + MAGIC_OFFSET]
        if magic == MAGIC:
            batches.append(_decode_batch(buf, pos, batch_end, max_decompressed_size, budget, lazy))
        elif magic in (0, 1):
            buf = buf if type(buf) is bytes else bytes(buf)  # (old segments: rare, read as bytes)
            batches.append(decode_legacy_message(buf, pos, batch_end, max_decompressed_size, budget))
        else:
            raise DecodeError(f"unknown record magic {magic} at byte {pos}")
        pos = batch_end
    return batches


def _decode_batch(
    buf: bytes | memoryview, pos: int, end: int, max_decompressed_size: int, budget: DecodeBudget, lazy: bool = False
) -> RecordBatch:
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
    body: bytes | bytearray | memoryview
    if codec == NONE:
        body, body_pos, body_end = buf, pos + HEADER_SIZE, end
        if count > (body_end - body_pos) // _MIN_RECORD_SIZE:
            raise DecodeError(f"{count} records cannot fit in {body_end - body_pos} bytes")
        budget.charge(count * RECORD_COST + body_end - body_pos, f"a batch of {count} records")
    else:
        if count > max_decompressed_size // _MIN_RECORD_SIZE:
            raise DecodeError(f"{count} records cannot fit in the {max_decompressed_size}-byte decompression limit")
        budget.charge(count * RECORD_COST, f"a batch of {count} records")  # before decompressing
        limit = min(max_decompressed_size, budget.remaining)
        body = decompress(codec, memoryview(buf)[pos + HEADER_SIZE : end], limit)
        budget.charge(len(body), "decompressed records")
        if len(body) <= COPY_BODY_LIMIT:
            body = bytes(body)
        body_pos, body_end = 0, len(body)
        if count > body_end // _MIN_RECORD_SIZE:
            raise DecodeError(f"{count} records cannot fit in {body_end} bytes")
    log_append_time = max_timestamp if attributes & TIMESTAMP_TYPE_MASK else None
    records: list[Record] = []
    undecoded = None
    if lazy and not attributes & CONTROL_MASK:
        undecoded = (body, body_pos, body_end, count)
    else:
        try:
            records, body_pos = decode_records(
                body, body_pos, body_end, count, base_offset, base_timestamp, log_append_time, budget
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
        undecoded,
    )


def decode_records(
    buf: bytes | bytearray | memoryview,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    budget: DecodeBudget,
) -> tuple[list[Record], int]:
    """Decode ``count`` records from ``buf[pos:end]``.

    Varints of one or two bytes (nearly all lengths and deltas) are looked up inline; longer ones go
    through the shared decoder. Reading past ``len(buf)`` raises IndexError for the caller
    to convert; reading past a record's end is caught by the length checks.
    """
    one_byte = _ONE_BYTE_VARINT
    two_byte = _TWO_BYTE_VARINT
    read_bytes = _read_bytes if buf.__class__ is bytes else _copy_bytes
    records = []
    for _ in range(count):
        b = buf[pos]
        if b < 0x80:
            length = one_byte[b]
            pos += 1
        elif buf[pos + 1] < 0x80:
            length = two_byte[(b & 0x7F) | (buf[pos + 1] << 7)]
            pos += 2
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
        elif buf[pos + 1] < 0x80:
            timestamp_delta = two_byte[(b & 0x7F) | (buf[pos + 1] << 7)]
            pos += 2
        else:
            timestamp_delta, pos = decode_varlong(buf, pos)
        b = buf[pos]
        if b < 0x80:
            offset_delta = one_byte[b]
            pos += 1
        elif buf[pos + 1] < 0x80:
            offset_delta = two_byte[(b & 0x7F) | (buf[pos + 1] << 7)]
            pos += 2
        else:
            offset_delta, pos = decode_varint(buf, pos)
        key, pos = read_bytes(buf, pos, record_end)
        value, pos = read_bytes(buf, pos, record_end)
        if buf[pos] == 0:  # no headers, the common case
            headers: list[tuple[str, bytes | None]] = []
            pos += 1
        else:
            headers, pos = _read_headers(buf, pos, record_end, read_bytes, budget)
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


def _read_headers(
    buf: bytes | bytearray | memoryview, pos: int, end: int, read_bytes: _ReadBytes, budget: DecodeBudget
) -> tuple[list[tuple[str, bytes | None]], int]:
    count, pos = decode_varint(buf, pos)
    if count < 0 or count > (end - pos) // _MIN_HEADER_SIZE:
        raise DecodeError(f"header count {count} does not fit the record")
    budget.charge(count * HEADER_COST, f"{count} record headers")
    headers = []
    for _ in range(count):
        raw_key, pos = read_bytes(buf, pos, end)
        if raw_key is None:
            raise DecodeError("null header key")
        value, pos = read_bytes(buf, pos, end)
        headers.append((raw_key.decode("utf-8", "replace"), value))
    return headers, pos


def _read_bytes(buf: bytes | bytearray | memoryview, pos: int, end: int) -> tuple[bytes | None, int]:
    """A varint-length-prefixed byte string (-1 = null) that must end by ``end``."""
    b = buf[pos]
    if b < 0x80:
        length = _ONE_BYTE_VARINT[b]
        pos += 1
    elif buf[pos + 1] < 0x80:
        length = _TWO_BYTE_VARINT[(b & 0x7F) | (buf[pos + 1] << 7)]
        pos += 2
    else:
        length, pos = decode_varint(buf, pos)
    if length < 0:
        if length != -1:
            raise DecodeError(f"negative length {length}")
        return None, pos
    stop = pos + length
    if stop > end:
        raise DecodeError(f"length {length} overruns the record")
    return buf[pos:stop], stop  # type: ignore[return-value]  # bytes when buf is bytes


def _copy_bytes(buf: bytes | bytearray | memoryview, pos: int, end: int) -> tuple[bytes | None, int]:
    """`_read_bytes` for a bytearray or memoryview body: the value copied out as bytes."""
    value, pos = _read_bytes(buf, pos, end)
    return (None if value is None else bytes(value)), pos


def decode_transaction_marker(record: Record) -> TransactionMarker:
    """Read a control batch's record as a commit/abort marker."""
    if record.key is None or len(record.key) < CONTROL_KEY.size:
        raise DecodeError("control record key too short")
    _version, kind = CONTROL_KEY.unpack_from(record.key)
    if kind not in (CONTROL_ABORT, CONTROL_COMMIT):
        raise DecodeError(f"control record type {kind} is not a transaction marker")
    # Later versions may append fields; the first ones keep their place.
    if record.value is None or len(record.value) < CONTROL_VALUE.size:
        raise DecodeError("transaction marker value too short")
    _version, coordinator_epoch = CONTROL_VALUE.unpack_from(record.value)
    return TransactionMarker(kind == CONTROL_COMMIT, coordinator_epoch)
