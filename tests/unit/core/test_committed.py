"""read_committed from the log's markers: held batches, COMMIT/ABORT, the broker's aborted list, order."""

from __future__ import annotations

import struct

from kafkawire.core.committed import CommittedFilter
from kafkawire.records.types import CONTROL_MASK, TRANSACTIONAL_MASK, Record, RecordBatch


def batch(base: int, count: int = 1, pid: int = -1, *, txn: bool = False) -> RecordBatch:
    records = [Record(base + i, 0, None, b"v%d" % (base + i)) for i in range(count)]
    attributes = TRANSACTIONAL_MASK if txn else 0
    return RecordBatch(base, 0, 0, 2, 0, attributes, count - 1, 0, 0, pid, 0, 0, records)


def marker(offset: int, pid: int, *, commit: bool) -> RecordBatch:
    record = Record(offset, 0, struct.pack(">hh", 0, 1 if commit else 0), struct.pack(">hi", 0, 7))
    return RecordBatch(offset, 0, 0, 2, 0, TRANSACTIONAL_MASK | CONTROL_MASK, 0, 0, 0, pid, 0, -1, [record])


def offsets(batches: list[RecordBatch]) -> list[int]:
    return [r.offset for b in batches for r in b.records]


def test_plain_batches_pass_straight_through() -> None:
    f = CommittedFilter()
    assert offsets(f.push(batch(0, 3))) == [0, 1, 2]
    assert not f.holding


def test_a_transaction_is_held_until_its_commit_and_dropped_on_abort() -> None:
    f = CommittedFilter()
    assert f.push(batch(0, 2, pid=5, txn=True)) == []
    assert f.holding and f.first_held_offset == 0
    assert offsets(f.push(marker(2, 5, commit=True))) == [0, 1]
    assert f.push(batch(3, 2, pid=5, txn=True)) == []
    assert f.push(marker(5, 5, commit=False)) == []
    assert not f.holding


def test_output_stays_in_offset_order_behind_a_held_transaction() -> None:
    f = CommittedFilter()
    out: list[RecordBatch] = []
    out += f.push(batch(0, 1, pid=1, txn=True))
    out += f.push(batch(1, 1))  # plain, but behind a held batch
    out += f.push(batch(2, 1, pid=2, txn=True))
    out += f.push(marker(3, 2, commit=False))  # pid 2 aborts; pid 1 still open
    assert out == []
    out += f.push(batch(4, 1, pid=1, txn=True))
    out += f.push(marker(5, 1, commit=True))
    assert offsets(out) == [0, 1, 4]


def test_interleaved_producers_resolve_independently() -> None:
    f = CommittedFilter()
    out: list[RecordBatch] = []
    for b in (batch(0, 1, 1, txn=True), batch(1, 1, 2, txn=True), batch(2, 1, 1, txn=True), marker(3, 2, commit=True)):
        out += f.push(b)
    assert out == []  # pid 2 committed, but pid 1's batch at 0 comes first
    out += f.push(marker(4, 1, commit=True))
    assert offsets(out) == [0, 1, 2]


def test_a_marker_without_held_batches_is_harmless() -> None:
    f = CommittedFilter()
    assert f.push(marker(0, 9, commit=False)) == []
    assert offsets(f.push(batch(1))) == [1]
