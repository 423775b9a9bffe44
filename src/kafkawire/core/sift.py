"""The decode-and-filter step every reader shares (fetch_range, the consumer's fetch engine):
of the batches a Fetch brought back, which records a reader sees, and where to fetch next."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..records import Record, RecordBatch
from .read_committed import CommittedFilter


def sift(
    batches: list[RecordBatch],
    offset: int,
    start: int,
    end: int,
    filt: CommittedFilter | None,
    records_of: Callable[[RecordBatch, int, int], list[Any]] | None = None,
) -> tuple[list[tuple[RecordBatch, list[Any]]], int]:
    """The decode-and-filter step every reader shares: of the batches a Fetch at ``offset``
    brought back, the records a reader sees, in offset order, as (batch, records) with
    ``start <= offset < end``; and the offset to fetch next.

    Batches wholly before ``offset`` (sent with a batch they belong to) are skipped, control
    batches are never data, and under read_committed (``filt``) transactional batches wait for
    their producer's marker: released ones may be from earlier answers, hence ``start``. The
    offset to fetch next is below ``offset`` when the filter asks to read again from there.
    ``records_of(batch, start, end)`` gives a batch's records in the range (default: its decoded
    Records; the consumer decodes lazily decoded batches straight into Messages).
    """
    if records_of is None:
        records_of = _within
    out: list[tuple[RecordBatch, list[Any]]] = []
    for batch in batches:
        next_offset = batch.next_offset
        if next_offset <= offset:
            continue
        if filt is None:
            if not batch.is_control:
                records = records_of(batch, offset, end)
                if records:
                    out.append((batch, records))
        elif batch.is_control or batch.base_offset < end:
            for released in filt.push(batch):
                records = records_of(released, start, end)
                if records:
                    out.append((released, records))
            rewind = filt.take_rewind()
            if rewind is not None:  # the filter skimmed past what it could not hold: read it again
                return out, rewind
        offset = next_offset
    return out, offset


def _within(batch: RecordBatch, start: int, end: int) -> list[Record]:
    records = batch.records
    if not records:
        return records
    if records[0].offset >= start and records[-1].offset < end:
        return records
    return [r for r in records if start <= r.offset < end]
