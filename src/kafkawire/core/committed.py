"""read_committed, decided from the log itself: which fetched batches a committed reader may see.

A transactional producer's batches carry its producer id and the transactional bit; the
transaction ends with a control batch (a COMMIT or ABORT marker) from the same producer id. A
read_committed reader therefore holds a producer's transactional batches until its marker
arrives, then releases them (COMMIT) or drops them (ABORT). Control batches are never data.

The markers are the whole truth and every broker writes them, so the reader fetches the raw log
(read_uncommitted) and decides here. It does not ask the broker for read_committed: such a Fetch
stops at the broker's last stable offset, which Tansu was seen to leave behind a finished
transaction (DESIGN.md, quirks), and the aborted-transaction list it would add only saves buffering.

Batches are released in log order: a batch behind a held one waits too, so a reader sees the
partition's committed records in offset order.
"""

from __future__ import annotations

from collections import deque

from ..records import RecordBatch, decode_transaction_marker

_HELD, _READY, _DROPPED = 0, 1, 2


class _Entry:
    __slots__ = ("batch", "state")

    def __init__(self, batch: RecordBatch, state: int) -> None:
        self.batch = batch
        self.state = state


class CommittedFilter:
    """Feed batches in log order with `push`; it answers the batches a committed reader sees."""

    def __init__(self) -> None:
        self._queue: deque[_Entry] = deque()
        self._open: dict[int, list[_Entry]] = {}  # producer id -> its held transactional batches

    @property
    def holding(self) -> bool:
        """True while some transactional batch waits for its producer's marker."""
        return bool(self._open)

    @property
    def first_held_offset(self) -> int | None:
        """The base offset of the oldest batch still waiting (nothing at or after it was released)."""
        return self._queue[0].batch.base_offset if self._queue else None

    def push(self, batch: RecordBatch) -> list[RecordBatch]:
        """Take the next batch of the log; answer the batches now released, in log order."""
        pid = batch.producer_id
        if batch.is_control:
            self._end_transaction(batch)
        elif not batch.is_transactional:
            if not self._queue:
                return [batch]  # nothing held: the common case costs no bookkeeping
            self._queue.append(_Entry(batch, _READY))
        else:
            entry = _Entry(batch, _HELD)
            self._queue.append(entry)
            self._open.setdefault(pid, []).append(entry)
        return self._release()

    def _end_transaction(self, batch: RecordBatch) -> None:
        pid = batch.producer_id
        commit = False
        if batch.records:
            commit = decode_transaction_marker(batch.records[0]).commit
        for entry in self._open.pop(pid, ()):
            entry.state = _READY if commit else _DROPPED

    def _release(self) -> list[RecordBatch]:
        out: list[RecordBatch] = []
        queue = self._queue
        while queue and queue[0].state != _HELD:
            entry = queue.popleft()
            if entry.state == _READY:
                out.append(entry.batch)
        return out
