"""How much of one Fetch answer the consumer decodes now, sans IO: one budget per answer.

A Fetch answer's bytes say little about the memory its records take once decoded (a compressed
batch of empty records is ~1 byte per record on the wire and a few hundred as objects). So each
answer gets one `DecodeBudget`, the prefetch's room when it arrives (queued.max.messages.kbytes
less what is buffered and what the other fetches in flight reserved), and each batch is charged
what the fetch table will count it as (its wire bytes plus RECORD_COST per record) before it is
decoded. What does not fit is left undecoded: the partition is fetched again from the same offset
once take() has freed room. So that reading always moves on, an answer that meets an empty
prefetch decodes at least one record; and a batch larger than the room is decoded in slices
(records [first, stop)), each slice a fetch of its own, when the reader can stop inside it.
"""

from __future__ import annotations

import sys

from ..protocol.primitives import DecodeBudget
from ..records import RecordBatch
from ..records.types import RECORD_COST
from .fetch_positions import BATCH_OVERHEAD, FetchTable

WHOLE = sys.maxsize  # a cut's stop offset when its last batch is decoded whole


class AnswerBudget:
    """One answer's room for decoded records (see the module's docstring)."""

    __slots__ = ("budget", "must_progress", "short")

    def __init__(self, room: int, empty: bool) -> None:
        self.budget = DecodeBudget(max(0, room))
        self.must_progress = empty  # nothing buffered: the first record is decoded whatever it costs
        self.short = 0  # the smallest cost of a batch left undecoded: the room to wait for (0: none)

    @property
    def spent(self) -> bool:
        """No batch can be decoded any more in this answer (not even a slice of one record)."""
        return not self.must_progress and self.budget.remaining < BATCH_OVERHEAD + RECORD_COST

    def cut(self, batches: list[RecordBatch], offset: int, can_slice: bool) -> tuple[int, int]:
        """How many of a partition's ``batches`` (read from ``offset``) to decode now, and the
        offset to stop the last of them at (`WHOLE`: all of it); charged. (0, WHOLE) with a batch
        left: past the budget, the partition waits for room. Only the first batch to decode may be
        sliced, when ``can_slice`` (the reader can stop inside a batch: no read_committed filter
        holding batches) and it is not transactional (its marker decides it whole)."""
        budget = self.budget
        first_batch = True
        for i, batch in enumerate(batches):
            if batch.next_offset <= offset or batch.is_control:
                continue
            first = max(offset, batch.base_offset)
            wire = batch.batch_length + BATCH_OVERHEAD
            cost = wire + RECORD_COST * (batch.next_offset - first)
            if cost <= budget.remaining:
                budget.charge(cost, f"a batch of {batch.next_offset - first} records")
                self.must_progress = first_batch = False
                continue
            if first_batch and can_slice and not batch.is_transactional:
                fits = max((budget.remaining - wire) // RECORD_COST, 1 if self.must_progress else 0)
            elif self.must_progress:
                fits = batch.next_offset - first
            else:
                fits = 0
            if fits <= 0:
                self.short = min(self.short or cost, cost)
                return i, WHOLE
            budget.charge(budget.remaining, "the answer's last slice")
            self.must_progress = False
            return i + 1, WHOLE if first + fits >= batch.next_offset else first + fits
        return len(batches), WHOLE


def answer_budget(table: FetchTable, reserved: int) -> AnswerBudget:
    """The budget of an answer to a fetch that reserved ``reserved`` bytes: the prefetch's room
    (the queue bound less what is buffered and what other fetches in flight reserved)."""
    others = table.reserved - reserved
    room = table.limits.queue_bytes - table.buffered_bytes - others
    return AnswerBudget(room, empty=table.buffered_bytes == 0)
