"""One partition's log in memory: batches as the producer sent them, offsets assigned here.

Bounded: past ``max_bytes`` the oldest batches go and the log start moves, as retention would.
Idempotent producers' sequences are checked per partition (Kafka keeps the last five batches
of each producer to answer a retried one with its first offset). Transactional batches keep
the last stable offset below the first open transaction; aborted ones are listed for
read_committed readers. Sans-IO: the caller passes the time.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from kafkawire.protocol import error_codes as E
from kafkawire.records.batch import build_control_batch
from kafkawire.records.crc import crc32c
from kafkawire.records.types import (
    ATTRIBUTES_OFFSET,
    CONTROL_MASK,
    CRC_OFFSET,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    MAGIC_OFFSET,
    NO_PRODUCER_ID,
    TRANSACTIONAL_MASK,
)

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
REMEMBERED_BATCHES = 5  # Kafka's duplicate window per producer
_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")
_LEADER_EPOCH_OFFSET = 12


@dataclass(frozen=True)
class BatchInfo:
    """The header fields of a produced batch the log needs."""

    attributes: int
    last_offset_delta: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int

    @property
    def transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)


@dataclass
class _Stored:
    base_offset: int
    last_offset: int
    max_timestamp: int
    data: bytes


@dataclass
class _Producer:
    epoch: int
    last_sequence: int = -1
    recent: list[tuple[int, int, int]] = field(default_factory=list)  # (first seq, last seq, base offset)


def split_batches(records: bytes | memoryview) -> tuple[list[tuple[bytes, BatchInfo]], int]:
    """The v2 batches of a Produce partition, checked (length, magic, CRC); or an error code."""
    out: list[tuple[bytes, BatchInfo]] = []
    data = bytes(records)
    pos = 0
    while pos < len(data):
        if len(data) - pos < HEADER_SIZE:
            return [], E.CORRUPT_MESSAGE
        fields = HEADER.unpack_from(data, pos)
        end = pos + LOG_OVERHEAD + fields[1]
        if fields[1] < HEADER_SIZE - LOG_OVERHEAD or end > len(data):
            return [], E.CORRUPT_MESSAGE
        if data[pos + MAGIC_OFFSET] != MAGIC:
            return [], E.UNSUPPORTED_FOR_MESSAGE_FORMAT
        batch = data[pos:end]
        if struct.unpack_from(">I", batch, CRC_OFFSET)[0] != crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]):
            return [], E.CORRUPT_MESSAGE
        _, _, _, _, _, attributes, last_delta, _, max_ts, pid, epoch, seq, count = fields
        out.append((batch, BatchInfo(attributes, last_delta, max_ts, pid, epoch, seq, count)))
        pos = end
    if not out:
        return [], E.CORRUPT_MESSAGE
    return out, E.NONE


class PartitionLog:
    """Batches with their offsets; watermarks; producer sequences; open and aborted transactions."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.batches: list[_Stored] = []
        self.log_start = 0
        self.end = 0  # the high watermark: every append is acknowledged by all replicas here
        self.size = 0
        self.leader_epoch = 0
        self._producers: dict[int, _Producer] = {}
        self._open: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.aborted: list[tuple[int, int, int]] = []  # (producer id, first offset, marker offset)

    @property
    def last_stable(self) -> int:
        return min(self._open.values(), default=self.end)

    def check_producer(self, info: BatchInfo) -> tuple[int, int | None]:
        """(error, offset of a duplicate) for a batch of an idempotent producer."""
        if info.producer_id == NO_PRODUCER_ID:
            return E.NONE, None
        state = self._producers.get(info.producer_id)
        if state is None:
            return (E.NONE if info.base_sequence == 0 else E.OUT_OF_ORDER_SEQUENCE_NUMBER), None
        if info.producer_epoch < state.epoch:
            return E.INVALID_PRODUCER_EPOCH, None
        if info.producer_epoch > state.epoch:
            return (E.NONE if info.base_sequence == 0 else E.OUT_OF_ORDER_SEQUENCE_NUMBER), None
        last_seq = info.base_sequence + info.last_offset_delta
        for first, last, offset in state.recent:
            if (first, last) == (info.base_sequence, last_seq):
                return E.NONE, offset
        if info.base_sequence != state.last_sequence + 1:
            return E.OUT_OF_ORDER_SEQUENCE_NUMBER, None
        return E.NONE, None

    def append(self, batch: bytes, info: BatchInfo) -> int:
        """Store a checked batch at the end; returns its base offset."""
        base = self.end
        stored = bytearray(batch)
        _BASE_OFFSET.pack_into(stored, 0, base)
        _LEADER_EPOCH.pack_into(stored, _LEADER_EPOCH_OFFSET, self.leader_epoch)
        self._store(_Stored(base, base + info.last_offset_delta, info.max_timestamp, bytes(stored)))
        if info.producer_id != NO_PRODUCER_ID and not info.attributes & CONTROL_MASK:
            state = self._producers.get(info.producer_id)
            if state is None or state.epoch != info.producer_epoch:
                state = self._producers[info.producer_id] = _Producer(info.producer_epoch)
            state.last_sequence = info.base_sequence + info.last_offset_delta
            state.recent = [*state.recent, (info.base_sequence, state.last_sequence, base)][-REMEMBERED_BATCHES:]
            if info.transactional:
                self._open.setdefault(info.producer_id, base)
        return base

    def write_marker(self, producer_id: int, producer_epoch: int, commit: bool, now_ms: int) -> None:
        """End a producer's transaction here (a control batch), if it wrote to this partition."""
        first = self._open.pop(producer_id, None)
        if first is None:
            return
        marker = build_control_batch(commit, 0, producer_id, producer_epoch, now_ms, self.end, self.leader_epoch)
        offset = self.end
        self._store(_Stored(offset, offset, now_ms, marker))
        if not commit:
            self.aborted.append((producer_id, first, offset))

    def _store(self, stored: _Stored) -> None:
        self.batches.append(stored)
        self.size += len(stored.data)
        self.end = stored.last_offset + 1
        while self.size > self.max_bytes and len(self.batches) > 1:
            dropped = self.batches.pop(0)
            self.size -= len(dropped.data)
            self.log_start = self.batches[0].base_offset
        self.aborted = [a for a in self.aborted if a[2] >= self.log_start]

    def read(self, offset: int, max_bytes: int, limit: int) -> bytes:
        """Batches holding ``offset`` and after, below ``limit``: at least one, then up to
        ``max_bytes`` (a reader always moves on, as Kafka's KIP-74 rule says)."""
        parts: list[bytes] = []
        size = 0
        for stored in self._from(offset):
            if stored.base_offset >= limit:
                break
            if parts and size + len(stored.data) > max_bytes:
                break
            parts.append(stored.data)
            size += len(stored.data)
        return b"".join(parts)

    def _from(self, offset: int) -> list[_Stored]:
        lo, hi = 0, len(self.batches)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.batches[mid].last_offset < offset:
                lo = mid + 1
            else:
                hi = mid
        return self.batches[lo:]

    def aborted_between(self, start: int, end: int) -> list[tuple[int, int]]:
        """Aborted transactions a read_committed reader of [start, end) must skip."""
        return [(pid, first) for pid, first, marker in self.aborted if first < end and marker >= start]

    def offset_for_time(self, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first batch whose records reach ``timestamp``; (-1, -1) if none."""
        for stored in self.batches:
            if stored.max_timestamp >= timestamp:
                return max(stored.base_offset, self.log_start), stored.max_timestamp
        return -1, -1

    def max_timestamp(self) -> tuple[int, int]:
        best = max(self.batches, key=lambda s: s.max_timestamp, default=None)
        return (-1, -1) if best is None else (best.last_offset, best.max_timestamp)

    def delete_before(self, offset: int) -> None:
        """DeleteRecords: the log starts at ``offset`` (batches wholly before it go)."""
        self.log_start = max(self.log_start, min(offset, self.end))
        while self.batches and self.batches[0].last_offset < self.log_start:
            self.size -= len(self.batches.pop(0).data)
