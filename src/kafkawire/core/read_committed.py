"""read_committed, decided from the log itself: which fetched batches a committed reader may see.

A transactional producer's batches carry its producer id and the transactional bit; the
transaction ends with a control batch (a COMMIT or ABORT marker) from the same producer id. A
read_committed reader therefore holds a producer's transactional batches until its marker
arrives, then releases them (COMMIT) or drops them (ABORT). Control batches are never data.

The markers are the whole truth and every broker writes them, so the reader fetches the raw log
(read_uncommitted) and decides here. It does not ask the broker for read_committed: such a Fetch
stops at the broker's last stable offset, which Tansu was seen to leave behind a finished
transaction (contributing/judges.md), and the aborted-transaction list it would add only saves buffering.

Batches are released in log order: a batch behind a held one waits too, so a reader sees the
partition's committed records in offset order.

What is held is bounded (``max_held_bytes``): a transaction left open while others write would
otherwise keep the whole log after it in memory. Past the bound the filter drops what it holds
and skims on (the reader keeps fetching, the filter keeps only the markers it meets) until every
transaction it was holding has its marker; then it asks the reader to fetch again from the first
batch it had held (`take_rewind`) and decides those transactions from the markers it learned. A
broker's read_committed bounds the same memory by stopping at its last stable offset.
"""

from __future__ import annotations

from collections import deque

from ..records import RecordBatch, decode_transaction_marker

_HELD, _READY, _DROPPED = 0, 1, 2
BATCH_HEADER = 12  # base offset and length, before a batch's batch_length bytes
DEFAULT_MAX_HELD_BYTES = 64 << 20


class _Entry:
    __slots__ = ("batch", "size", "state")

    def __init__(self, batch: RecordBatch, state: int) -> None:
        self.batch = batch
        self.state = state
        self.size = batch.batch_length + BATCH_HEADER


class CommittedFilter:
    """Feed batches in log order with `push`; it answers the batches a committed reader sees."""

    def __init__(self, max_held_bytes: int = DEFAULT_MAX_HELD_BYTES) -> None:
        self.max_held_bytes = max_held_bytes
        self._queue: deque[_Entry] = deque()
        self._queued_bytes = 0
        self._open: dict[int, list[_Entry]] = {}  # producer id -> its held transactional batches
        # A skim under way: where the dropped batches started and whose markers are still awaited.
        self._skim: tuple[int, set[int]] | None = None
        self._rewind: int | None = None  # a finished skim's offset to read again from
        self._known: dict[int, list[tuple[int, bool]]] = {}  # producer id -> markers a skim met

    @property
    def holding(self) -> bool:
        """True while some transactional batch waits for its producer's marker."""
        return bool(self._open) or self._skim is not None

    @property
    def first_held_offset(self) -> int | None:
        """The base offset of the oldest batch still waiting (nothing at or after it was released)."""
        if self._skim is not None:
            return self._skim[0]
        return self._queue[0].batch.base_offset if self._queue else None

    def take_rewind(self) -> int | None:
        """Once, after a skim: the offset the reader must fetch again from (else None)."""
        rewind, self._rewind = self._rewind, None
        return rewind

    def push(self, batch: RecordBatch) -> list[RecordBatch]:
        """Take the next batch of the log; answer the batches now released, in log order."""
        if self._skim is not None:
            self._skim_past(batch)
            return []
        pid = batch.producer_id
        if batch.is_control:
            self._end_transaction(batch)
        elif not batch.is_transactional:
            if not self._queue:
                return [batch]  # nothing held: the common case costs no bookkeeping
            self._append(_Entry(batch, _READY))
        else:
            decided = self._decided(pid, batch.base_offset)
            entry = _Entry(batch, _HELD if decided is None else decided)
            self._append(entry)
            if decided is None:
                self._open.setdefault(pid, []).append(entry)
        out = self._release()
        if self._queued_bytes > self.max_held_bytes:
            self._start_skim()
        elif self._known:
            self._forget_before(self._queue[0].batch.base_offset if self._queue else batch.base_offset + 1)
        return out

    def _learn(self, pid: int, offset: int, commit: bool) -> None:
        """Remember a marker a later skim's rewind may read past again."""
        known = self._known.setdefault(pid, [])
        if (offset, commit) not in known:  # a later skim may pass the same markers again
            known.append((offset, commit))
            known.sort()

    def _forget_before(self, floor: int) -> None:
        """Markers below ``floor`` decide nothing any more: no rewind goes back past the oldest
        batch queued."""
        for pid in list(self._known):
            kept = [m for m in self._known[pid] if m[0] >= floor]
            if kept:
                self._known[pid] = kept
            else:
                del self._known[pid]

    def _append(self, entry: _Entry) -> None:
        body = entry.batch.body
        if body is not None and type(body[0]) is not bytes:  # held: its own copy, not a view
            data, pos, end, count = body  # into a whole Fetch answer (see decode_batches)
            entry.batch.body = (bytes(data[pos:end]), 0, end - pos, count)
        self._queue.append(entry)
        self._queued_bytes += entry.size

    def _decided(self, pid: int, offset: int) -> int | None:
        """A transactional batch's fate when a skim met its transaction's marker (the producer's
        first marker after it)."""
        for marker_offset, commit in self._known.get(pid, ()):
            if marker_offset > offset:
                return _READY if commit else _DROPPED
        return None

    def _start_skim(self) -> None:
        self._skim = (self._queue[0].batch.base_offset, set(self._open))
        self._queue.clear()
        self._queued_bytes = 0
        self._open.clear()

    def _skim_past(self, batch: RecordBatch) -> None:
        assert self._skim is not None
        if not batch.is_control or not batch.records:
            return
        pid = batch.producer_id
        self._learn(pid, batch.base_offset, decode_transaction_marker(batch.records[0]).commit)
        rewind, waiting = self._skim
        waiting.discard(pid)
        if not waiting:
            self._skim, self._rewind = None, rewind

    def _end_transaction(self, batch: RecordBatch) -> None:
        pid = batch.producer_id
        commit = False
        if batch.records:
            commit = decode_transaction_marker(batch.records[0]).commit
            if self._queue:  # a skim may yet rewind to before it
                self._learn(pid, batch.base_offset, commit)
        for entry in self._open.pop(pid, ()):
            entry.state = _READY if commit else _DROPPED

    def _release(self) -> list[RecordBatch]:
        out: list[RecordBatch] = []
        queue = self._queue
        while queue and queue[0].state != _HELD:
            entry = queue.popleft()
            self._queued_bytes -= entry.size
            if entry.state == _READY:
                out.append(entry.batch)
        return out
