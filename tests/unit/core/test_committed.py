"""read_committed from the log's markers: held batches, COMMIT/ABORT, the broker's aborted list, order."""

from __future__ import annotations

import random
import struct

from kafkawire.core.read_committed import CommittedFilter
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


def test_a_held_batch_keeps_a_copy_of_its_records_not_a_view_of_the_answer() -> None:
    """Lazily decoded batches read their records in place in a Fetch answer's buffer; one the
    filter holds for a marker takes its own copy, so a waiting transaction never pins an answer."""
    answer = bytearray(b"..records of a whole answer..")
    held = batch(0, 2, pid=5, txn=True)
    held.body = (memoryview(answer)[2:9], 0, 7, 2)
    f = CommittedFilter()
    assert f.push(held) == []
    assert held.body is not None and type(held.body[0]) is bytes and held.body == (b"records", 0, 7, 2)
    answer[2:9] = b"XXXXXXX"  # the answer's buffer reused: the held copy is unchanged
    [released] = f.push(marker(2, 5, commit=True))
    assert released is held and released.body == (b"records", 0, 7, 2)


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


def read_all(log: list[RecordBatch], f: CommittedFilter) -> list[int]:
    """A reader of ``log`` as sift drives the filter: fetch again from where a skim says."""
    out: list[int] = []
    by_offset = {b.base_offset: i for i, b in enumerate(log)}
    i = 0
    while i < len(log):
        out += offsets(f.push(log[i]))
        rewind = f.take_rewind()
        i = by_offset[rewind] if rewind is not None else i + 1
    return out


def test_a_long_open_transaction_is_skimmed_past_not_held() -> None:
    log = [
        batch(0, 1, 1, txn=True),
        batch(1),
        batch(2, 1, 2, txn=True),
        batch(3),
        marker(4, 2, commit=False),
        batch(5),
        marker(6, 1, commit=True),
        batch(7),
    ]
    f = CommittedFilter(max_held_bytes=30)  # two 12-byte test batches fit, a third does not
    assert f.push(log[0]) == [] and f.push(log[1]) == [] and f.push(log[2]) == []
    assert f.holding and f.first_held_offset == 0  # dropped, skimming: the position stays
    for b in log[3:6]:
        assert f.push(b) == [] and f.take_rewind() is None
    assert f.push(log[6]) == [] and f.take_rewind() == 0  # pid 1's marker: read again from 0
    assert read_all(log, CommittedFilter(max_held_bytes=30)) == [0, 1, 3, 5, 7]


def test_a_bounded_filter_answers_what_an_unbounded_one_does() -> None:
    rng = random.Random(11)
    for _ in range(2000):
        log: list[RecordBatch] = []
        open_txn: set[int] = set()
        offset = 0
        for _ in range(rng.randint(1, 40)):
            pid = rng.randint(1, 4)
            roll = rng.random()
            if pid in open_txn and roll < 0.3:
                log.append(marker(offset, pid, commit=rng.random() < 0.6))
                open_txn.discard(pid)
                offset += 1
                continue
            count = rng.randint(1, 3)
            if roll < 0.6:
                log.append(batch(offset, count, pid, txn=True))
                open_txn.add(pid)
            else:
                log.append(batch(offset, count))
            offset += count
        for pid in sorted(open_txn):
            log.append(marker(offset, pid, commit=rng.random() < 0.6))
            offset += 1
        want = read_all(log, CommittedFilter())
        assert read_all(log, CommittedFilter(max_held_bytes=rng.choice([12, 30, 60]))) == want
