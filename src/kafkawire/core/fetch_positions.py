"""The consumer's fetch decisions, sans IO: one row per assigned partition, and what to do next.

A partition's row holds its state (`AWAITING_OFFSET` while a logical offset is being resolved,
`FETCHING`, `FAILED` after auto.offset.reset=error until the next seek), whether it is paused,
the offset the next Fetch asks for, the position (after the last record handed over), the records
fetched but not yet handed over, and what the last answer said of the log (start, high
watermark). The engine (consumer/fetch_engine.py) does the IO and asks this table:

- which partitions to fetch now, grouped by leader, and how many bytes a request may bring back:
  fetched bytes held plus bytes asked for stay within ``queued.max.messages.kbytes`` (a single
  batch larger than what was asked may still come whole, KIP-74), and a partition holding
  ``queued.min.messages`` records is not fetched until they are taken;
- which partitions need an offset looked up (ListOffsets, or the group's committed offset);
- what an answer changes (records appended, a new start after OFFSET_OUT_OF_RANGE per
  auto.offset.reset, an error event, a backoff);
- what `take` hands over: fair across partitions (each turn gives every partition with records
  an equal share), each partition in offset order.

Every repositioning (assign, seek) bumps the row's generation; an answer or lookup sent under an
older generation changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..records import Record, RecordBatch
from ..records.types import RECORD_COST
from . import TopicPartitionKey
from .fetch_rows import (
    AWAITING_OFFSET,
    FAILED,
    FETCHING,
    LOGICAL,
    OFFSET_INVALID,
    OFFSET_STORED,
    RESET_TO,
    Chunk,
    FetchEvent,
    FetchLimits,
    Partition,
)
from .fetch_verdict import larger_limit
from .kafka_error import KafkaError
from .read_committed import CommittedFilter

BATCH_OVERHEAD = 12  # a batch's wire size is batch_length + 12


# take(1) passes over at most this many rows that hold nothing before listing the rows anew
# (native_c/poll_take.c leaves a longer walk to `FetchTable._next_row`).
SKIPPED_ROWS = 16


class FetchTable:
    """Every assigned partition's row and the decisions over them (no clock, IO or threads: the
    caller passes ``now`` and holds whatever lock it needs)."""

    # Slots: poll()'s C take (native_c/poll_take.c) reads ``_rows`` and ``_turn`` at their offsets.
    __slots__ = (
        "_round_start",
        "_rows",
        "_turn",
        "buffered_bytes",
        "expansion",
        "limits",
        "offset_at",
        "parts",
        "received",
        "received_bytes",
        "reserved",
        "room_wanted",
        "starved",
    )

    def __init__(self, limits: FetchLimits, offset_at: Callable[[Any, int], int] | None = None) -> None:
        self.limits = limits
        self.offset_at = offset_at or _record_offset  # (buffered records, index) -> that record's offset
        self.parts: dict[TopicPartitionKey, Partition] = {}
        self.received = self.received_bytes = 0  # every row's, for statistics (rxmsgs, rxmsg_bytes)
        # Held bytes per wire byte fetched, from the last answer: a request asks for the room left
        # divided by it (records decoded into objects take more than their wire bytes).
        self.expansion = 2.0
        self.buffered_bytes = 0
        self.reserved = 0  # bytes asked for by fetches in flight
        self._turn = 0  # take(1)'s next row in ``_rows``
        self._round_start: Partition | None = None  # the row take(n)'s next round starts at
        # take(1)'s turn: the unpaused rows that held something when listed (see `_next_row`), in
        # the parts' order; None when a row not listed may hold something (listed anew when asked).
        self._rows: list[Partition] | None = None
        self.starved = False  # a fetch was held back for room: take() should wake the engine
        self.room_wanted = 0  # what a batch left undecoded for want of room costs (core/fetch_budget.py)

    # --- the application's moves ---------------------------------------------------------------

    def assign(self, key: TopicPartitionKey, offset: int, leader_epoch: int | None = None) -> None:
        part = self.parts.get(key)
        if part is None:
            part = self.parts[key] = Partition(key)
            self._rows = None
        self._reposition(part, offset)
        if leader_epoch is not None and leader_epoch >= 0:
            part.leader_epoch = leader_epoch

    def unassign(self, key: TopicPartitionKey) -> None:
        part = self.parts.pop(key, None)
        if part is not None:
            self._rows = None
            self._drop_buffer(part)

    def seek(self, key: TopicPartitionKey, offset: int) -> None:
        part = self.parts.get(key)
        if part is None:
            raise KeyError(key)
        self._reposition(part, offset)

    def pause(self, key: TopicPartitionKey, paused: bool) -> None:
        part = self.parts.get(key)
        if part is not None:
            part.paused = paused
            self._rows = None

    def restart(self, part: Partition) -> None:
        """Read again from the first record not handed over (what was buffered, and a fresh
        read_committed filter): after records that could not be decoded, keeping the backoff."""
        position, retry_at, last_error = self.position(part.key), part.retry_at, part.last_error
        if position is not None:
            self._reposition(part, position)
            part.retry_at, part.last_error = retry_at, last_error

    def _reposition(self, part: Partition, offset: int) -> None:
        self._drop_buffer(part)
        part.generation += 1
        part.resolving = False
        part.retry_at = 0.0
        part.eof_at = -1
        part.last_error = None
        part.filter = self._committed_filter()
        if offset >= 0:
            self._start_at(part, offset)
        elif offset in LOGICAL:
            part.state, part.logical, part.position = AWAITING_OFFSET, offset, None
        else:
            raise ValueError(f"invalid offset {offset}")

    def _start_at(self, part: Partition, offset: int) -> None:
        part.state = FETCHING
        part.start = part.fetch_offset = offset
        part.position = offset
        part.max_bytes = self.limits.partition_max_bytes

    def _drop_buffer(self, part: Partition) -> None:
        self.buffered_bytes -= part.buffered_bytes
        part.buffer.clear()
        part.buffered_bytes = part.buffered_records = 0

    # --- offsets to look up ----------------------------------------------------------------------

    def lookups(self, now: float) -> list[Partition]:
        """Rows whose logical offset should be resolved now (the caller marks them `resolving`)."""
        return [p for p in self.parts.values() if p.state == AWAITING_OFFSET and not p.resolving and p.retry_at <= now]

    def stored_lookup(self, part: Partition) -> bool:
        """True when the row's offset is the group's committed one (else ListOffsets' timestamp
        is ``part.logical``, after `lookups` turned a missing group into auto.offset.reset)."""
        if part.logical in (OFFSET_STORED, OFFSET_INVALID):
            if self.limits.has_group:
                return True
            self._reset(part, None)
        return False

    def resolved(self, key: TopicPartitionKey, generation: int, offset: int) -> None:
        """A lookup's answer: a ListOffsets offset, or the committed offset (-1: none)."""
        part = self._current(key, generation)
        if part is None:
            return
        part.resolving = False
        if part.logical in (OFFSET_STORED, OFFSET_INVALID) and self.limits.has_group:
            part.committed = offset  # the answer of the group's OffsetFetch
        if offset >= 0:
            self._start_at(part, offset)
        else:
            self._reset(part, None)

    def lookup_again(self, key: TopicPartitionKey, generation: int, now: float) -> None:
        """The answer cannot be right yet (a committed transaction's offset is not visible): the
        row asks again after the fetch error backoff, telling the application nothing."""
        part = self._current(key, generation)
        if part is not None:
            part.resolving = False
            part.retry_at = now + self.limits.error_backoff

    def lookup_failed(self, key: TopicPartitionKey, generation: int, error: KafkaError, now: float) -> None:
        part = self._current(key, generation)
        if part is None:
            return
        part.resolving = False
        part.retry_at = now + self.limits.error_backoff
        self._event(part, error, None)

    def _reset(self, part: Partition, out_of_range_at: int | None) -> None:
        """auto.offset.reset: look up the log start or end again, or report _AUTO_OFFSET_RESET."""
        target = RESET_TO[self.limits.auto_offset_reset]
        if target is not None:
            part.state, part.logical = AWAITING_OFFSET, target
            return
        part.state = FAILED
        if out_of_range_at is None:
            why = "no committed offset, and auto.offset.reset is error"
        else:
            why = f"offset {out_of_range_at} is out of range, and auto.offset.reset is error"
        self._event(
            part, KafkaError(KafkaError._AUTO_OFFSET_RESET, f"{part.key[0]} [{part.key[1]}]: {why}"), out_of_range_at
        )

    # --- fetches to send -------------------------------------------------------------------------

    def fetch_plan(
        self, now: float, leader_of: Callable[[TopicPartitionKey], int | None], busy: Iterable[int]
    ) -> tuple[dict[int, tuple[int, list[Partition]]], list[Partition]]:
        """What to fetch now: node -> (the request's max_bytes, its partitions); and the rows
        whose leader is unknown (the caller refreshes metadata). Marks the planned rows in flight
        and reserves their bytes; `answered` releases them."""
        limits = self.limits
        plan: dict[int, list[Partition]] = {}
        leaderless: list[Partition] = []
        busy_nodes = set(busy)
        held_back = False
        for part in self.parts.values():
            if not part.fetchable or part.retry_at > now:
                continue
            if part.buffered_records >= limits.queue_records:
                held_back = True
                continue
            node = self.fetch_node(part, leader_of(part.key), now)
            if node is None:
                leaderless.append(part)
            elif node not in busy_nodes:
                plan.setdefault(node, []).append(part)
        out: dict[int, tuple[int, list[Partition]]] = {}
        for node, parts in plan.items():
            room = limits.queue_bytes - self.buffered_bytes - self.reserved
            # Too little room for a useful answer (or for the batch an answer left undecoded, an
            # empty prefetch always has): wait until take() frees some.
            if room < max(
                min(limits.partition_max_bytes, limits.queue_bytes // 4), min(self.room_wanted, limits.queue_bytes)
            ):
                held_back = True
                break
            self.room_wanted = 0
            max_bytes = max(1, min(limits.fetch_max_bytes, int(room / self.expansion)))
            for part in parts:
                part.in_flight = True
            self.reserved += max_bytes
            out[node] = (max_bytes, parts)
        self.starved = held_back
        return out, leaderless

    # --- answers ---------------------------------------------------------------------------------

    def answered(self, reserved: int, parts: list[Partition]) -> None:
        """A fetch came back (or failed): its reservation and in-flight marks end."""
        self.reserved -= reserved
        for part in parts:
            part.in_flight = False

    def wants_room(self, cost: int) -> None:
        """An answer left a batch costing ``cost`` undecoded: fetch again once there is room for it."""
        self.room_wanted = max(self.room_wanted, cost)

    def current(self, part: Partition, generation: int) -> bool:
        """Is the row still assigned and not repositioned since ``generation``?"""
        return self.parts.get(part.key) is part and part.generation == generation

    def _current(self, key: TopicPartitionKey, generation: int) -> Partition | None:
        part = self.parts.get(key)
        return part if part is not None and part.generation == generation else None

    def add(
        self,
        part: Partition,
        chunks: list[tuple[RecordBatch, list[Any]]],
        next_offset: int,
        high_watermark: int,
        log_start: int,
        last_stable: int = -1,
        node: int = -1,
    ) -> bool:
        """Records of one answer for the row (already sifted: see `sift`) from broker ``node``. True
        when take() has something new (records or an event). A chunk holds its batch's wire bytes
        (about its keys and values) plus RECORD_COST per record (the objects around them).
        _PARTITION_EOF (librdkafka's text, naming the broker) follows an answer to a Fetch asked
        at the end (empty, after fetch.wait.max.ms), as librdkafka's: not the answer that brought
        the last records, so a record produced while that next Fetch waits comes before the event."""
        asked = part.fetch_offset
        new = False
        if not part.buffer:
            self._rows = None  # the row may not be listed for take(1)'s turn
        for batch, records in chunks:
            wire = batch.batch_length + BATCH_OVERHEAD
            size = wire + RECORD_COST * len(records)
            self.expansion = max(1.0, size / wire)
            part.buffer.append(Chunk(batch, records, size))
            part.buffered_bytes += size
            part.buffered_records += len(records)
            part.received += len(records)
            part.received_bytes += wire
            self.received += len(records)
            self.received_bytes += wire
            self.buffered_bytes += size
            new = True
        if next_offset != part.fetch_offset:  # below it: the read_committed filter reads again
            part.fetch_offset = next_offset
        part.last_error = None
        if high_watermark >= 0:
            part.high_watermark = high_watermark
        if log_start >= 0:
            part.log_start = log_start
        if last_stable >= 0:
            part.last_stable = last_stable
        if self.limits.partition_eof and self._at_end(part, asked):
            part.eof_at = part.fetch_offset
            hw = part.high_watermark
            eof = KafkaError(
                KafkaError._PARTITION_EOF,
                f"Fetch from broker {node} reached end of partition at offset {part.fetch_offset} (HighwaterMark {hw})",
            )
            part.buffer.append(FetchEvent(eof, hw))
            new = True
        return new

    @staticmethod
    def _at_end(part: Partition, asked: int) -> bool:
        """The answer was to a Fetch asked at the high watermark, nothing held for a marker, not yet
        reported there."""
        hw = part.high_watermark
        if hw < 0 or asked < hw or part.fetch_offset < hw or part.eof_at == part.fetch_offset:
            return False
        return part.filter is None or not part.filter.holding

    def _committed_filter(self) -> CommittedFilter | None:
        """read_committed: a row's filter may hold a quarter of the prefetch bound for markers."""
        return CommittedFilter(self.limits.queue_bytes // 4) if self.limits.read_committed else None

    def prefer(self, part: Partition, replica: int, now: float, ttl: float) -> None:
        """KIP-392: the leader says to fetch from ``replica`` (nearer to client.rack) for a while."""
        part.preferred = (replica, now + ttl) if replica >= 0 else None

    @staticmethod
    def fetch_node(part: Partition, leader: int | None, now: float) -> int | None:
        """Where the row's next Fetch goes: its preferred replica while that holds, else the leader."""
        preferred = part.preferred
        if preferred is not None and now < preferred[1]:
            return preferred[0]
        return leader

    def too_large(self, part: Partition) -> bool:
        """An answer held only part of one batch: ask for more next time (`larger_limit`, up to the
        queue); False when the limit cannot grow (the record is too large to fetch)."""
        larger = larger_limit(part.max_bytes, self.limits.queue_bytes)
        if larger is None:
            return False
        part.max_bytes = larger
        return True

    def out_of_range(self, part: Partition) -> bool:
        """OFFSET_OUT_OF_RANGE at the fetch offset: reset per auto.offset.reset. True when an
        event was queued."""
        self._drop_buffer(part)
        part.generation += 1
        part.filter = self._committed_filter()
        self._reset(part, part.fetch_offset)
        return part.state == FAILED

    def failed(self, part: Partition, error: KafkaError, now: float, report: bool) -> bool:
        """A fetch error for the row: back off (fetch.error.backoff.ms), back to the leader if a
        preferred replica answered; with ``report``, tell the application once per distinct error.
        True when an event was queued."""
        part.retry_at = now + self.limits.error_backoff
        part.preferred = None
        if report and part.last_error != error.code():
            part.last_error = error.code()
            self._event(part, error, part.fetch_offset)
            return True
        return False

    def _event(self, part: Partition, error: KafkaError, offset: int | None) -> None:
        if not part.buffer:
            self._rows = None  # the row may not be listed for take(1)'s turn
        part.buffer.append(FetchEvent(error, offset))

    # --- handing over ----------------------------------------------------------------------------

    def position(self, key: TopicPartitionKey) -> int | None:
        """The offset after the last record handed over; past skipped records (control batches,
        aborted transactions) once nothing before them waits to be handed over."""
        part = self.parts.get(key)
        if part is None or part.position is None:
            return None
        if part.state != FETCHING or part.buffered_records:
            return part.position
        end = part.fetch_offset
        if part.filter is not None and (held := part.filter.first_held_offset) is not None:
            end = min(end, held)
        return max(part.position, end)

    def skipped_past(self, key: TopicPartitionKey, handed_to: int) -> int | None:
        """The position past the control batches and aborted records that follow ``handed_to``,
        when the last record handed over ends there (not after a seek); else None. librdkafka
        stores those skipped offsets too (enable.auto.offset.store), so a commit passes them."""
        part = self.parts.get(key)
        if part is None or part.position != handed_to:
            return None
        position = self.position(key)
        return position if position is not None and position > handed_to else None

    def take(self, max_records: int) -> list[tuple[Partition, RecordBatch | None, list[Any] | FetchEvent]]:
        """Up to ``max_records`` records (and the events among them), fair across unpaused rows:
        rounds in which each row with something gives an equal share, starting after the row
        served last. A share never splits a batch, only ``max_records`` does (a row's turn gives at
        least the rest of its head batch): shares of a record or two each made consume(1000) over
        2,048 partitions hand over a piece per record (bench/PROFILE.md, "Partitions"), and
        librdkafka's queue hands over whole fetched batches in turn too. Advances positions past
        what is returned."""
        out: list[tuple[Partition, RecordBatch | None, list[Any] | FetchEvent]] = []
        if max_records == 1:  # poll(): one record, from the next row in turn
            part = self._next_row()
            if part is not None:
                self._take_from(part, 1, out)
            return out
        if max_records <= 0:
            return out
        start = self._round_start
        ready: list[Partition] = []
        turn = 0
        for part in self.parts.values():
            if part is start:
                turn = len(ready)
            if part.buffer and not part.paused:
                ready.append(part)
        if not ready:
            return out
        if turn:
            ready = ready[turn:] + ready[:turn]
        left = max_records
        rows = list(enumerate(ready))
        last = 0
        while left > 0 and rows:
            share = left // len(rows)
            still = []
            for i, part in rows:
                if left <= 0:
                    break
                left -= self._take_from(part, min(left, max(share, _head_left(part))), out)
                last = i
                if part.buffer:
                    still.append((i, part))
            rows = still
        self._round_start = ready[(last + 1) % len(ready)]
        return out

    def take_one(self, out: list[tuple[Partition, RecordBatch | None, list[Any] | FetchEvent]]) -> Any:
        """take(1) for poll(), without the lists: a record of a list of records comes back as
        it is (``out`` untouched); anything else (an event, Columns) is appended to ``out`` as
        take(1) gives it, and None returned (as when nothing is buffered)."""
        rows = self._rows
        if rows is not None and len(rows) == 1:  # one row: no turn to take (no call per record)
            part = rows[0]
            if not part.buffer or part.paused:
                return None
        else:
            found = self._next_row()
            if found is None:
                return None
            part = found
        head = part.buffer[0]
        if type(head) is not Chunk or type(head.records) is not list or head.pos + 1 >= len(head.records):
            self._take_from(part, 1, out)  # an event, Columns, or a chunk's last record
            return None
        pos = head.pos
        head.pos = pos + 1
        part.buffered_records -= 1
        records = head.records
        part.position = self.offset_at(records, pos) + 1
        epoch = head.batch.partition_leader_epoch
        if epoch >= 0:
            part.leader_epoch = epoch
        return records[pos]

    def _next_row(self) -> Partition | None:
        """The next unpaused row with something buffered, after the one served last.

        Only the rows that held something when listed are in turn: with thousands assigned and a
        few holding records, walking every row per record made poll() cost grow with the
        partitions (bench/PROFILE.md, "Partitions"). A row that gets something, or is resumed,
        unlists them all (`add`, `_event`, `pause`); rows that emptied since are passed over,
        and once a call passes over more than SKIPPED_ROWS of them the rows are listed anew."""
        rows = self._rows
        if rows is None:
            rows = self._rows = self._holding()
        count = len(rows)
        if not count:
            return None
        start = self._turn % count
        part = rows[start]
        if part.buffer and not part.paused:  # the row whose turn it is (the usual case: no loop)
            self._turn = start + 1
            return part
        for i in range(1, count):
            index = start + i
            part = rows[index - count if index >= count else index]
            if part.buffer and not part.paused:
                if i > SKIPPED_ROWS:
                    rows = self._rows = self._holding()
                    index = rows.index(part)
                self._turn = index + 1
                return part
        if count > 1:
            self._rows = []  # none holds anything: nothing to walk until a row gets something
        return None

    def _holding(self) -> list[Partition]:
        return [p for p in self.parts.values() if p.buffer and not p.paused]

    def _take_from(
        self, part: Partition, wanted: int, out: list[tuple[Partition, RecordBatch | None, list[Any] | FetchEvent]]
    ) -> int:
        taken = 0
        buffer = part.buffer
        while buffer and taken < wanted:
            head = buffer[0]
            if isinstance(head, FetchEvent):
                buffer.popleft()
                out.append((part, None, head))
                taken += 1
                continue
            pos, records = head.pos, head.records
            stop = min(len(records), pos + wanted - taken)
            piece = records if pos == 0 and stop == len(records) else records[pos:stop]
            out.append((part, head.batch, piece))
            n = stop - pos
            taken += n
            part.buffered_records -= n
            part.position = self.offset_at(records, stop - 1) + 1
            epoch = head.batch.partition_leader_epoch
            part.leader_epoch = epoch if epoch >= 0 else part.leader_epoch
            if stop == len(records):
                buffer.popleft()
                part.buffered_bytes -= head.size
                self.buffered_bytes -= head.size
            else:
                head.pos = stop
        return taken


def _head_left(part: Partition) -> int:
    """What a row's head holds: an event counts one, a chunk its records not yet taken."""
    head = part.buffer[0]
    return 1 if isinstance(head, FetchEvent) else len(head.records) - head.pos


def _record_offset(records: list[Record], i: int) -> int:
    return records[i].offset
