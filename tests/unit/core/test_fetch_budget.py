"""One Fetch answer's decoding budget (core/fetch_budget.py): whole batches while they fit, the
first batch sliced when it does not, at least one record into an empty prefetch, nothing past the
room otherwise."""

from __future__ import annotations

from kafkawire.core.fetch_budget import WHOLE, AnswerBudget, answer_budget
from kafkawire.core.fetch_positions import BATCH_OVERHEAD, FetchTable
from kafkawire.core.fetch_rows import FetchLimits
from kafkawire.records import BatchBuilder, RecordBatch, decode_batches
from kafkawire.records.types import RECORD_COST


def _batches(*counts: int, transactional: bool = False) -> list[RecordBatch]:
    out: list[RecordBatch] = []
    base = 0
    for count in counts:
        builder = BatchBuilder()
        for i in range(count):
            builder.append(0, None, b"v%d" % i, ())
        txn = (
            {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0, "transactional": True} if transactional else {}
        )
        out += decode_batches(builder.build(base_offset=base, **txn), lazy=True)
        base += count
    return out


def _cost(batch: RecordBatch, records: int) -> int:
    return batch.batch_length + BATCH_OVERHEAD + RECORD_COST * records


def test_batches_that_fit_are_decoded_whole_and_charged() -> None:
    batches = _batches(10, 10)
    room = _cost(batches[0], 10) + _cost(batches[1], 10)
    budget = AnswerBudget(room, empty=False)
    assert budget.cut(batches, 0, can_slice=True) == (2, WHOLE)
    assert budget.budget.remaining == 0 and budget.spent


def test_the_first_batch_too_large_for_the_room_is_sliced_to_what_fits() -> None:
    batches = _batches(100, 10)
    room = _cost(batches[0], 30) + RECORD_COST // 2
    assert AnswerBudget(room, empty=False).cut(batches, 0, can_slice=True) == (1, 30)
    # read from inside the batch (the slice before went out): charged from there
    assert AnswerBudget(room, empty=False).cut(batches, 30, can_slice=True) == (1, 60)


def test_a_later_batch_that_does_not_fit_waits_for_the_next_fetch_whole() -> None:
    batches = _batches(10, 100)
    room = _cost(batches[0], 10) + _cost(batches[1], 30)
    budget = AnswerBudget(room, empty=False)
    assert budget.cut(batches, 0, can_slice=True) == (1, WHOLE)
    assert not budget.spent  # another partition's smaller batch may still fit


def test_past_the_budget_nothing_is_decoded_unless_the_prefetch_is_empty() -> None:
    batches = _batches(100)
    assert AnswerBudget(0, empty=False).cut(batches, 0, can_slice=True) == (0, WHOLE)
    assert AnswerBudget(0, empty=True).cut(batches, 0, can_slice=True) == (1, 1)  # one record: reading moves on
    # a batch that cannot be sliced (read_committed holding, Columns) comes whole into an empty prefetch
    assert AnswerBudget(0, empty=True).cut(batches, 0, can_slice=False) == (1, WHOLE)
    waiting = AnswerBudget(0, empty=False)
    assert waiting.cut(batches, 0, can_slice=False) == (0, WHOLE)
    assert waiting.short == _cost(batches[0], 100)  # the room the partition waits for


def test_a_fetch_waits_for_the_room_an_undecoded_batch_needs() -> None:
    table = FetchTable(FetchLimits(queue_bytes=10_000_000, partition_max_bytes=1000))
    table.assign(("t", 0), 0)
    table.buffered_bytes = 4_000_000
    table.wants_room(8_000_000)
    assert table.fetch_plan(0.0, lambda key: 1, ()) == ({}, []) and table.starved
    table.buffered_bytes = 1_000_000
    plan, _ = table.fetch_plan(0.0, lambda key: 1, ())
    assert list(plan) == [1] and table.room_wanted == 0


def test_a_transactional_batch_is_never_sliced() -> None:
    batches = _batches(100, transactional=True)
    room = _cost(batches[0], 30)
    assert AnswerBudget(room, empty=False).cut(batches, 0, can_slice=True) == (0, WHOLE)
    assert AnswerBudget(room, empty=True).cut(batches, 0, can_slice=True) == (1, WHOLE)


def test_batches_before_the_offset_cost_nothing() -> None:
    batches = _batches(10, 10)
    room = _cost(batches[1], 10)
    assert AnswerBudget(room, empty=False).cut(batches, 10, can_slice=True) == (2, WHOLE)


def test_an_answer_gets_the_room_left_by_what_is_buffered_and_the_other_fetches_in_flight() -> None:
    table = FetchTable(FetchLimits(queue_bytes=1000))
    table.buffered_bytes, table.reserved = 300, 450  # this fetch reserved 200 of the 450
    budget = answer_budget(table, 200)
    assert budget.budget.remaining == 1000 - 300 - 250 and not budget.must_progress
    table.buffered_bytes = 0
    assert answer_budget(table, 200).must_progress
