"""The rows of the consumer's fetch table (core/fetch_positions.py): a partition's state, its
buffered chunks and events, and the limits the table decides by."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from ..records import RecordBatch
from . import TopicPartitionKey
from .kafka_error import KafkaError
from .read_committed import CommittedFilter

AWAITING_OFFSET = "awaiting-offset"
FETCHING = "fetching"
FAILED = "failed"

OFFSET_BEGINNING = -2
OFFSET_END = -1
OFFSET_STORED = -1000
OFFSET_INVALID = -1001
LOGICAL = (OFFSET_BEGINNING, OFFSET_END, OFFSET_STORED, OFFSET_INVALID)

# auto.offset.reset -> the logical offset it resets to (None: report _AUTO_OFFSET_RESET)
RESET_TO = {"earliest": OFFSET_BEGINNING, "latest": OFFSET_END, "error": None}


@dataclass(frozen=True)
class FetchLimits:
    """The configuration the table decides by (librdkafka's names in comments)."""

    queue_bytes: int = 65_536 * 1024  # queued.max.messages.kbytes
    queue_records: int = 100_000  # queued.min.messages, per partition
    fetch_max_bytes: int = 52_428_800  # fetch.max.bytes
    partition_max_bytes: int = 1_048_576  # max.partition.fetch.bytes
    error_backoff: float = 0.5  # fetch.error.backoff.ms, in s
    auto_offset_reset: str = "latest"  # earliest | latest | error
    read_committed: bool = False
    partition_eof: bool = False  # enable.partition.eof
    has_group: bool = False  # OFFSET_STORED is looked up in the group, else auto.offset.reset


class Chunk:
    """Records of one batch not yet handed over: ``records[pos:]`` (Records, or whatever the
    caller decoded them into: the engine keeps Messages)."""

    __slots__ = ("batch", "pos", "records", "size")

    def __init__(self, batch: RecordBatch, records: Any, size: int) -> None:
        self.batch = batch
        self.records = records
        self.pos = 0
        self.size = size  # what it holds in memory (see FetchTable.add), released with its last record


class FetchEvent:
    """An error event for take(): _PARTITION_EOF, _AUTO_OFFSET_RESET, a partition's final error."""

    __slots__ = ("error", "offset")

    def __init__(self, error: KafkaError, offset: int | None) -> None:
        self.error = error
        self.offset = offset


class Partition:
    """One assigned partition's row."""

    __slots__ = (
        "buffer",
        "buffered_bytes",
        "buffered_records",
        "committed",
        "eof_at",
        "fetch_offset",
        "filter",
        "generation",
        "high_watermark",
        "in_flight",
        "key",
        "last_error",
        "last_stable",
        "leader_epoch",
        "log_start",
        "logical",
        "max_bytes",
        "paused",
        "position",
        "preferred",
        "received",
        "received_bytes",
        "resolving",
        "retry_at",
        "start",
        "state",
    )

    def __init__(self, key: TopicPartitionKey) -> None:
        self.key = key
        self.state = AWAITING_OFFSET
        self.logical = OFFSET_STORED
        self.generation = 0
        self.paused = False
        self.start = 0  # where this generation's reading began
        self.fetch_offset = 0
        self.position: int | None = None
        self.leader_epoch: int | None = None
        self.buffer: deque[Chunk | FetchEvent] = deque()
        self.buffered_bytes = 0
        self.buffered_records = 0
        self.filter: CommittedFilter | None = None
        self.in_flight = False
        self.resolving = False
        self.retry_at = 0.0
        self.log_start = -1
        self.high_watermark = -1
        self.last_stable = -1
        self.committed = -1  # the group's committed offset as looked up at the start (statistics)
        self.received = self.received_bytes = 0  # records fetched (not skipped) and their batches' bytes: statistics
        self.eof_at = -1  # the offset an EOF event was last given for
        self.last_error: int | None = None  # the code of the last error event (given once)
        self.max_bytes = 0  # this partition's Fetch size, doubled while one batch does not fit
        self.preferred: tuple[int, float] | None = None  # KIP-392: (replica to fetch from, until when)

    @property
    def fetchable(self) -> bool:
        return self.state == FETCHING and not self.paused and not self.in_flight
