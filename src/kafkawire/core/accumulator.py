"""Per-partition batching (sans-IO): which records travel together, and when a batch may leave.

``append`` only queues a record and counts its bytes (an upper bound of its encoded size): the
records are encoded when their batch closes, in one loop over the batch
(`BatchBuilder.append_records`), on the sender's thread. ``produce()`` thus does no encoding. A batch is ready when it is full (``batch.size`` bytes or
``batch.num.messages`` records), when ``linger.ms`` has passed since it opened, when a flush asks
for everything now, or, for a retried batch, when its backoff has passed. The caller (the
producer's sender, on the IO thread) asks `ready` what to send and `pop`s batches; everything
here takes ``now`` and decides, nothing waits.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from operator import attrgetter
from typing import Any, Protocol

from ..records import HEADER_SIZE, NONE, BatchBuilder, crc, with_producer_state
from ..records.batch_buffers import BatchBuffers
from . import TopicPartitionKey
from .kafka_error import KafkaError
from .lane_state import FILLED, LEFT, ROOM, SHUT, BatchBase, LaneState, new_lane_state

_enqueued = attrgetter("enqueued")

# Spare batch buffers kept while the producer is busy (each up to batch.size): deliveries come in
# bursts of answers, the next batches are encoded in bursts too.
SPARE_BUFFERS = 16


class Pending(Protocol):
    """A record between ``produce()`` and its delivery report, as the accumulator and the batch
    encoders see it (the producer's ``PendingMessage``: ``kafkawire.producer.pending``)."""

    topic: str
    partition: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None
    timestamp: int
    callback: Callable[..., Any] | None
    future: Future[Any] | None
    enqueued: float
    size: int


def expanded(entries: list[Pending]) -> list[Pending]:
    """``entries`` one object per record: each ArrowRows entry (native_c/arrow_rows.c) replaced by
    the PendingMessages of its rows."""
    out: list[Pending] = []
    for m in entries:
        expand = getattr(m, "expand", None)
        if expand is None:
            out.append(m)
        else:
            out += expand()
    return out


class ProducerBatch(BatchBase):
    """Records for one partition that are sent, retried and acknowledged together. The fields
    records join, and the rule of its room, are `OpenBatch`'s (core/lane_state.py: declared in C
    when the extension is built, so the lanes read them as C fields)."""

    __slots__ = (
        "_builder",
        "base_sequence",
        "created",
        "order",
        "partition",
        "retry_at",
        "stamp",
        "topic",
        "unanswered",
    )
    messages: list[Pending]

    def __init__(self, topic: str, partition: int, now: float, order: int = 0) -> None:
        self.topic = topic
        self.partition = partition
        self.order = order  # its place among its partition's batches, given by the accumulator
        self._builder: BatchBuilder | None = None
        # One entry per record, or an ArrowRows (native_c/arrow_rows.c) standing for some of an
        # Arrow batch's rows: ``rows`` counts those entries, ``extra`` the records beyond one per entry.
        self.messages = []
        self.rows = 0
        self.extra = 0
        self.bytes = HEADER_SIZE  # the batch's size if every record took its upper bound
        self.created = now
        self.full = False
        self.attempts = 0
        self.retry_at = 0.0
        self.payload = None  # built once; a retry re-sends the same bytes
        self.base_sequence = -1  # set by the idempotent producer when the batch first leaves
        self.stamp = (-1, -1, -1)  # the (producer id, epoch, base sequence) inside ``payload``
        # The error of an attempt that ended without the broker's answer: the log may hold it.
        self.unanswered: KafkaError | None = None

    @property
    def count(self) -> int:
        """The records in the batch."""
        return len(self.messages) + self.extra

    def records(self) -> list[Pending]:
        """The batch's records one object each: `messages` with each ArrowRows entry expanded into
        the PendingMessages its rows stand for (for failures, per-record reports, statistics)."""
        return expanded(self.messages) if self.rows else self.messages

    @property
    def builder(self) -> BatchBuilder:
        """The batch's records, encoded: those not encoded yet are, now, in one loop."""
        return self.encode()

    def encode(self, spares: BatchBuffers | None = None) -> BatchBuilder:
        """`builder`, written over a spare buffer of ``spares`` when the batch has none yet."""
        builder = self._builder
        if builder is None:
            builder = self._builder = BatchBuilder(None if spares is None else spares.take())
        done = len(builder)
        if done < self.count:
            # (The C encoder reads ArrowRows entries in place; a batch holds them only when it runs.)
            builder.append_records(self.records()[done:] if done else self.messages)
        return builder

    def close(
        self,
        compression: int,
        compression_level: int | None,
        stamp: tuple[int, int, int] = (-1, -1, -1),
        transactional: bool = False,
        spares: BatchBuffers | None = None,
    ) -> bytes | bytearray:
        """The batch's bytes: built once; only a new producer epoch rewrites the header fields.
        Compressed, the records' buffer is free once built: it goes to ``spares`` at once (the
        batch in flight holds its compressed bytes alone, and the next batch writes over it)."""
        if self.payload is None:
            producer_id, epoch, sequence = stamp
            builder = self.encode(spares)
            self.payload = builder.build(
                producer_id=producer_id,
                producer_epoch=epoch,
                base_sequence=sequence,
                transactional=transactional,
                compression=compression,
                compression_level=compression_level,
                hand_over=True,  # the builder's buffer is the payload: no copy of the batch
            )
            if compression != NONE and spares is not None:
                self._builder = None
                spares.give(builder.records_buffer())
        elif stamp != self.stamp:
            self.payload = with_producer_state(self.payload, *stamp)
        self.stamp = stamp
        return self.payload

    def give_up_buffer(self) -> bytes | bytearray | None:
        """(Once delivered) The batch's bytes, which it no longer holds: for `BatchBuffers.give`."""
        payload = self.payload
        self.payload = self._builder = None
        return payload

    @property
    def oldest(self) -> float:
        return self.messages[0].enqueued

    def split(self, until: float) -> ProducerBatch | None:
        """The records enqueued at or before ``until``, taken out into a batch of their own, when
        this batch never left and none of its records is encoded yet, and some but not all are
        that old; None otherwise (the batch goes, or stays, whole)."""
        if self.attempts or self.payload is not None or self._builder is not None or self.base_sequence >= 0:
            return None
        messages = self.messages
        # Records are appended as they are enqueued, so their times only grow: the usual answer
        # (all that old, or none) is known from the ends, a split point found by bisection.
        if not messages or messages[-1].enqueued <= until or messages[0].enqueued > until:
            return None
        count = bisect_right(messages, until, key=_enqueued)
        out = ProducerBatch(self.topic, self.partition, self.created, self.order)
        out.messages = messages[:count]
        out.bytes = HEADER_SIZE + sum(m.size for m in out.messages)
        if self.rows:
            counts = [getattr(m, "count", 1) for m in out.messages if hasattr(m, "expand")]
            out.rows, out.extra = len(counts), sum(counts) - len(counts)
            self.rows -= out.rows
            self.extra -= out.extra
        del messages[:count]  # (in place: produce()'s C lane appends to this very list)
        self.bytes -= out.bytes - HEADER_SIZE
        return out


class Accumulator:
    def __init__(
        self,
        *,
        batch_size: int,
        batch_num_messages: int,
        linger: float,
        compression: int,
        compression_level: int | None,
        state: LaneState | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.batch_num_messages = batch_num_messages
        self.linger = linger
        self.compression = compression
        self.compression_level = compression_level
        self._flushes = 0  # flushes under way: linger is off while any runs
        self._orders = itertools.count(1)  # batches numbered as made: a retried one goes back in its place
        # The open batches and ``queued`` (records here) live in the state the producer's C lane
        # moves too; the dict is never replaced, so both sides keep reaching the same one.
        self.state = state if state is not None else new_lane_state()
        self._queues: dict[TopicPartitionKey, deque[ProducerBatch]] = self.state.queues
        crc.load()  # here, on the thread making the producer: not on the IO thread at the first batch
        # Delivered batches' buffers, for the next batches to be written over (the IO thread's).
        self.spares = BatchBuffers(SPARE_BUFFERS)

    @property
    def room(self) -> int:
        """What a batch holds after its header: where the sticky partitioner moves on."""
        return max(1, self.batch_size - HEADER_SIZE)

    def flush_started(self) -> None:
        """A flush began: every batch is ready now, whatever its linger, until it ends."""
        self._flushes += 1

    def flush_ended(self) -> None:
        self._flushes -= 1

    def __len__(self) -> int:
        """Messages waiting here (not yet handed to a request)."""
        return self.state.queued

    def append(self, msg: Pending, now: float) -> bool:
        """Add a record to its partition's open batch (`extend` of one).

        True when the sender should look now: a batch filled up, or a partition with nothing waiting
        got a record (its linger clock starts).
        """
        return self.extend(msg.topic, msg.partition, (msg,), now)

    def extend(self, topic: str, partition: int, msgs: Sequence[Pending], now: float) -> bool:
        """Add a run of records of one partition, in order, each joining the open batch while
        `OpenBatch.push` (the rule the C lanes apply too) takes it, else a new one; the same
        answer as `append`."""
        if not msgs:
            return False
        queue = self._queues.get((topic, partition))
        if queue is None:
            queue = self._queues[(topic, partition)] = deque()
        batch = queue[-1] if queue else None
        filled = batch is None
        batch_size, batch_count = self.batch_size, self.batch_num_messages
        for msg in msgs:
            size = msg.size
            taken = LEFT if batch is None else batch.push(msg, size, batch_size, batch_count)
            if taken < ROOM:  # a new batch, which takes any first record
                filled = filled or taken == SHUT
                batch = ProducerBatch(topic, partition, now, next(self._orders))
                queue.append(batch)
                taken = batch.push(msg, size, batch_size, batch_count)
            if taken == FILLED:
                filled = True
        self.state.queued += len(msgs)
        return filled

    def ready(self, now: float) -> tuple[list[TopicPartitionKey], float | None]:
        """Partitions whose first batch may be sent now, and when the next one will be."""
        ready: list[TopicPartitionKey] = []
        wake: float | None = None
        for tp, queue in self._queues.items():
            if not queue:
                continue
            head = queue[0]
            if head.retry_at > now:
                when = head.retry_at
            elif head.full or len(queue) > 1 or self._flushes or now - head.created >= self.linger:
                ready.append(tp)
                continue
            else:
                when = head.created + self.linger
            wake = when if wake is None else min(wake, when)
        return ready, wake

    def oldest(self) -> float | None:
        """When the oldest waiting record was enqueued (its expiry is the next one), or None."""
        oldest = None  # (a loop: a comprehension is a call of its own, and this runs every sender pass)
        for queue in self._queues.values():
            if queue:
                head = queue[0].oldest
                if oldest is None or head < oldest:
                    oldest = head
        return oldest

    def pop(self, tp: TopicPartitionKey, span: float = float("inf")) -> ProducerBatch | None:
        """The partition's head batch, to be sent. One that never left goes with the records
        enqueued within ``span`` of its oldest only, the rest staying at the head: a request is given
        up at its oldest record's message timeout, so a backlog gathered behind a stalled partition
        leaves in slices, and records that still have time do not fail with the oldest (as they
        do not in librdkafka's pipelined requests)."""
        queue = self._queues.get(tp)
        if not queue:
            return None
        part = queue[0].split(queue[0].oldest + span)
        if part is not None:
            self.state.queued -= part.count
            part.full = True
            return part
        batch = queue.popleft()
        if not queue:
            del self._queues[tp]
        self.state.queued -= batch.count
        batch.full = True
        return batch

    def requeue(self, batch: ProducerBatch, retry_at: float) -> None:
        """Put a batch back at the head of its partition, to go again after ``retry_at``. Batches
        that already carry sequences stay in sequence order among themselves; others go back
        behind the older batches already put back, as librdkafka puts a failed request's records
        back in their first order (several requests of a partition failing at a leader change
        would otherwise go again newest first)."""
        batch.retry_at = retry_at
        queue = self._queues.setdefault((batch.topic, batch.partition), deque())
        position = 0
        if batch.base_sequence >= 0:
            while (
                position < len(queue)
                and queue[position].base_sequence >= 0
                and queue[position].base_sequence < batch.base_sequence
            ):
                position += 1
        else:
            while position < len(queue) and queue[position].order < batch.order:
                position += 1
        queue.insert(position, batch)
        self.state.queued += batch.count

    def take_expired(self, now: float, timeout: float) -> list[ProducerBatch]:
        """Remove and return the waiting records older than ``timeout``, in batches: whole batches
        once they left before (their records go and fail together), else record by record."""
        expired: list[ProducerBatch] = []
        for tp in list(self._queues):
            queue = self._queues[tp]
            while queue and now - queue[0].oldest >= timeout:
                part = queue[0].split(now - timeout)
                if part is not None:
                    expired.append(part)
                    break
                expired.append(queue.popleft())
            if not queue:
                del self._queues[tp]
        if expired:
            self.state.queued -= sum(b.count for b in expired)
        return expired

    def depths(self) -> dict[TopicPartitionKey, tuple[int, int]]:
        """Per partition: records waiting and their bytes (upper bounds, for statistics)."""
        return {tp: (sum(b.count for b in queue), sum(b.bytes for b in queue)) for tp, queue in self._queues.items()}

    def take_if(self, leaving: Callable[[ProducerBatch], bool]) -> list[ProducerBatch]:
        """Remove and return the waiting batches ``leaving`` picks."""
        out: list[ProducerBatch] = []
        for tp in list(self._queues):
            queue = self._queues[tp]
            gone = [b for b in queue if leaving(b)]
            if gone:
                out += gone
                kept = [b for b in queue if not leaving(b)]
                queue.clear()
                queue.extend(kept)
                if not queue:
                    del self._queues[tp]
        self.state.queued -= sum(b.count for b in out)
        return out

    def stamped_batches(self) -> list[ProducerBatch]:
        """Waiting batches that already carry sequences (sent before, now queued for a retry)."""
        return [b for queue in self._queues.values() for b in queue if b.base_sequence >= 0]

    def take_all(self) -> list[ProducerBatch]:
        batches = [b for queue in self._queues.values() for b in queue]
        self._queues.clear()
        self.state.queued = 0
        return batches
