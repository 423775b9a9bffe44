"""The record types and the v2 batch layout, shared by the builder (batch.py), the decoder
(decoder.py) and the legacy formats (legacy.py).

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
from typing import Any

from kafkawire.protocol.primitives import DEFAULT_DECODE_BUDGET, DecodeBudget, DecodeBudgetError, DecodeError

__all__ = [
    "DEFAULT_DECODE_BUDGET",
    "DecodeBudget",
    "DecodeBudgetError",
]  # re-exported: the records layer's budget is the codec's

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
CRC = struct.Struct(">I")
CONTROL_KEY = struct.Struct(">hh")  # version, type
CONTROL_VALUE = struct.Struct(">hi")  # version, coordinatorEpoch

Buffer = bytes | bytearray | memoryview
Headers = Sequence[tuple[str, bytes | None]]


# What decoding may allocate. A record costs its bytes plus the Python objects around them:
# measured, a Record with its headers list, two ints and its key and value objects takes about
# 200 bytes beyond the payload, a header (tuple, str, bytes) about 100.
RECORD_COST = 256
HEADER_COST = 128
# A decompressed body up to this size is copied into bytes for the fast slicing path (nearly
# every batch: producers close batches at about 1 MB); a larger one is read in place, each key and
# value copied out, so that a body near the decompression limit never exists twice.
COPY_BODY_LIMIT = 32 * 1024 * 1024


class CorruptRecordError(DecodeError):
    """A batch or message failed its CRC check: the bytes were damaged in transit or on disk."""


class Record:
    """One decoded record, with its absolute offset and effective timestamp. (This module's classes
    are plain classes with value equality: as dataclasses they cost about a millisecond each of
    every client's start-up to create.)"""

    __slots__ = ("headers", "key", "offset", "timestamp", "value")

    def __init__(
        self,
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None = None,
    ) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers: list[tuple[str, bytes | None]] = [] if headers is None else headers

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and (self.offset, self.timestamp, self.key, self.value, self.headers) == (
            other.offset,
            other.timestamp,
            other.key,
            other.value,
            other.headers,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        return (
            f"Record(offset={self.offset!r}, timestamp={self.timestamp!r}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )


_BATCH_FIELDS = (
    "base_offset",
    "batch_length",
    "partition_leader_epoch",
    "magic",
    "crc",
    "attributes",
    "last_offset_delta",
    "base_timestamp",
    "max_timestamp",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "records",
    "body",
)


class RecordBatch:
    """One decoded batch: the v2 header fields as sent plus its records.

    Legacy (magic 0/1) messages decode to this too, one per top-level message, with
    producer fields -1, so a consumer handles a single shape.
    """

    __slots__ = _BATCH_FIELDS

    def __init__(
        self,
        base_offset: int,
        batch_length: int,
        partition_leader_epoch: int,
        magic: int,
        crc: int,
        attributes: int,
        last_offset_delta: int,
        base_timestamp: int,
        max_timestamp: int,
        producer_id: int,
        producer_epoch: int,
        base_sequence: int,
        records: list[Record],
        # decode_batches(lazy=True): the records not decoded yet, (bytes, start, end, count) of the
        # (decompressed) record bytes; records is then empty.
        body: tuple[bytes | bytearray | memoryview, int, int, int] | None = None,
    ) -> None:
        self.base_offset = base_offset
        self.batch_length = batch_length
        self.partition_leader_epoch = partition_leader_epoch
        self.magic = magic
        self.crc = crc
        self.attributes = attributes
        self.last_offset_delta = last_offset_delta
        self.base_timestamp = base_timestamp
        self.max_timestamp = max_timestamp
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.records = records
        self.body = body

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _BATCH_FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordBatch) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(_BATCH_FIELDS, self._fields(), strict=True))
        return f"RecordBatch({shown})"

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


class TransactionMarker:
    """The content of a transaction control record: did the transaction commit or abort."""

    __slots__ = ("commit", "coordinator_epoch")

    def __init__(self, commit: bool, coordinator_epoch: int) -> None:
        self.commit = commit
        self.coordinator_epoch = coordinator_epoch

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TransactionMarker) and (self.commit, self.coordinator_epoch) == (
            other.commit,
            other.coordinator_epoch,
        )

    def __hash__(self) -> int:
        return hash((self.commit, self.coordinator_epoch))

    def __repr__(self) -> str:
        return f"TransactionMarker(commit={self.commit!r}, coordinator_epoch={self.coordinator_epoch!r})"
