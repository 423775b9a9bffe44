"""The fetch table: states, positions, the prefetch budget, fairness, answers and resets."""

from __future__ import annotations

import pytest

from kafkawire.core.fetch_positions import FetchTable
from kafkawire.core.fetch_rows import (
    AWAITING_OFFSET,
    FAILED,
    FETCHING,
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_STORED,
    FetchEvent,
    FetchLimits,
)
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.read_committed import CommittedFilter
from kafkawire.core.sift import sift
from kafkawire.records.types import RECORD_COST, Record, RecordBatch
from tests.unit.core.test_committed import batch, marker

A, B, C = ("t", 0), ("t", 1), ("t", 2)


def sized(base: int, count: int, size: int = 100, epoch: int = 3) -> RecordBatch:
    b = batch(base, count)
    b.batch_length = size - 12
    b.partition_leader_epoch = epoch
    return b


def fill(table: FetchTable, key: tuple[str, int], base: int, count: int, size: int = 100, hw: int = -1) -> None:
    part = table.parts[key]
    b = sized(base, count, size)
    chunks, next_offset = sift([b], part.fetch_offset, part.start, 1 << 62, part.filter)
    table.add(part, chunks, next_offset, hw, 0)


def leaders(node: int = 1) -> object:
    return lambda key: node


def offsets_taken(items: list) -> list[tuple[int, int]]:
    out = []
    for part, b, records in items:
        if b is not None:
            out += [(part.key[1], r.offset) for r in records]
    return out


def test_assign_with_an_offset_fetches_there_and_logical_ones_wait_for_a_lookup() -> None:
    t = FetchTable(FetchLimits())
    t.assign(A, 5)
    t.assign(B, OFFSET_BEGINNING)
    t.assign(C, OFFSET_STORED)
    assert t.parts[A].state == FETCHING and t.position(A) == 5
    assert t.parts[B].state == AWAITING_OFFSET and t.position(B) is None
    assert [p.key for p in t.lookups(0.0)] == [B, C]
    with pytest.raises(ValueError):
        t.assign(A, -7)


def test_offset_stored_without_a_group_follows_auto_offset_reset() -> None:
    t = FetchTable(FetchLimits(auto_offset_reset="latest"))
    t.assign(A, OFFSET_STORED)
    part = t.parts[A]
    assert not t.stored_lookup(part) and part.logical == OFFSET_END
    grouped = FetchTable(FetchLimits(has_group=True))
    grouped.assign(A, OFFSET_STORED)
    assert grouped.stored_lookup(grouped.parts[A])
    grouped.resolved(A, grouped.parts[A].generation, -1)  # nothing committed: latest (the default)
    assert grouped.parts[A].state == AWAITING_OFFSET and grouped.parts[A].logical == OFFSET_END


def test_reset_error_queues_one_event_and_stops_fetching_until_a_seek() -> None:
    t = FetchTable(FetchLimits(auto_offset_reset="error", has_group=True))
    t.assign(A, OFFSET_STORED)
    t.resolved(A, t.parts[A].generation, -1)
    assert t.parts[A].state == FAILED
    ((_part, b, event),) = t.take(10)
    assert b is None and isinstance(event, FetchEvent) and event.error.code() == KafkaError._AUTO_OFFSET_RESET
    assert t.fetch_plan(0.0, leaders(), ())[0] == {}
    t.seek(A, 3)
    assert t.parts[A].state == FETCHING and t.position(A) == 3


def test_an_answer_for_an_older_generation_changes_nothing() -> None:
    t = FetchTable(FetchLimits())
    t.assign(A, OFFSET_BEGINNING)
    old = t.parts[A].generation
    t.seek(A, 10)
    t.resolved(A, old, 0)
    assert t.position(A) == 10
    assert not t.current(t.parts[A], old)


def test_one_request_per_leader_and_none_to_a_busy_one() -> None:
    t = FetchTable(FetchLimits())
    for key in (A, B, C):
        t.assign(key, 0)
    plan, leaderless = t.fetch_plan(0.0, lambda key: None if key == C else 1, ())
    assert list(plan) == [1] and [p.key for p in plan[1][1]] == [A, B] and [p.key for p in leaderless] == [C]
    assert t.parts[A].in_flight and t.reserved == plan[1][0]
    again, _ = t.fetch_plan(0.0, leaders(2), ())
    assert [p.key for p in again[2][1]] == [C]  # A and B are in flight; C has a leader now
    t.answered(plan[1][0], plan[1][1])
    t.answered(again[2][0], again[2][1])
    assert t.reserved == 0 and not t.parts[A].in_flight
    assert t.fetch_plan(0.0, leaders(), (1,))[0] == {}  # busy leader
    assert list(t.fetch_plan(0.0, leaders(), ())[0]) == [1]


def test_the_budget_holds_fetches_back_until_take_frees_room() -> None:
    t = FetchTable(FetchLimits(queue_bytes=10_000, partition_max_bytes=2000))
    t.assign(A, 0)
    plan, _ = t.fetch_plan(0.0, leaders(), ())
    assert plan[1][0] == 5000  # the room, over 2 held bytes per wire byte until an answer says
    t.answered(5000, plan[1][1])
    fill(t, A, 0, 9, size=4000)
    assert t.buffered_bytes == 4000 + 9 * RECORD_COST  # wire bytes plus the objects per record
    assert t.expansion == t.buffered_bytes / 4000
    plan, _ = t.fetch_plan(0.0, leaders(), ())
    assert plan[1][0] == int((10_000 - t.buffered_bytes) / t.expansion)
    t.answered(plan[1][0], plan[1][1])
    fill(t, A, 9, 9, size=4000)
    assert t.fetch_plan(0.0, leaders(), ())[0] == {} and t.starved  # less room than a partition's fetch
    assert len(offsets_taken(t.take(18))) == 18
    assert t.buffered_bytes == 0
    assert t.fetch_plan(0.0, leaders(), ())[0] != {}


def test_queued_min_messages_holds_one_partition_back() -> None:
    t = FetchTable(FetchLimits(queue_records=5))
    t.assign(A, 0)
    t.assign(B, 0)
    fill(t, A, 0, 5)
    plan, _ = t.fetch_plan(0.0, leaders(), ())
    assert [p.key for p in plan[1][1]] == [B] and t.starved


def test_take_is_fair_and_rotates_and_advances_positions() -> None:
    t = FetchTable(FetchLimits())
    for key in (A, B, C):
        t.assign(key, 0)
        fill(t, key, 0, 10)
        fill(t, key, 10, 20)
    got = offsets_taken(t.take(60))  # equal shares, each past its first batch
    assert sorted(p for p, _ in got) == [0] * 20 + [1] * 20 + [2] * 20
    assert [t.position(k) for k in (A, B, C)] == [20, 20, 20]
    assert t.parts[A].leader_epoch == 3
    # A share never splits a batch: a turn gives at least the rest of the row's head batch.
    assert offsets_taken(t.take(9)) == [(0, o) for o in range(20, 29)]  # C was served last: A's turn
    assert offsets_taken(t.take(12)) == [(1, o) for o in range(20, 30)] + [(2, 20), (2, 21)]
    rest = offsets_taken(t.take(100))
    assert rest == [(0, 29)] + [(2, o) for o in range(22, 30)]  # after C: A, then C's rest
    for key in (A, B, C):
        assert t.position(key) == 30


def test_take_over_more_rows_than_records_hands_over_whole_batches_in_turn() -> None:
    keys = [("t", p) for p in range(10)]
    t = FetchTable(FetchLimits())
    for key in keys:
        t.assign(key, 0)
        fill(t, key, 0, 5)
    pieces = t.take(12)
    assert [(part.key[1], len(records)) for part, _b, records in pieces] == [(0, 5), (1, 5), (2, 2)]
    pieces = t.take(12)  # on from the row after the last served
    assert [(part.key[1], len(records)) for part, _b, records in pieces] == [(3, 5), (4, 5), (5, 2)]
    t.take(4 * 5 + 3 + 3)  # rows 6-9 whole, then 2's and 5's rests
    assert [t.position(k) for k in keys] == [5] * 10
    assert t.take(10) == []


def test_take_one_alternates_rows_and_leaves_events_and_last_records_to_take() -> None:
    t = FetchTable(FetchLimits(partition_eof=True))
    for key in (A, B, C):
        t.assign(key, 0)
    fill(t, A, 0, 3, hw=3)  # three records, then (the next Fetch's empty answer) an EOF event
    t.add(t.parts[A], [], 3, 3, 0)
    fill(t, C, 0, 3)
    t.pause(C, True)
    out: list = []
    assert [t.take_one(out).offset for _ in range(2)] == [0, 1]  # B has nothing, C is paused
    assert out == [] and t.position(A) == 2 and t.parts[A].leader_epoch == 3
    assert t.take_one(out) is None  # the chunk's last record: as take(1) gives it
    assert offsets_taken(out) == [(0, 2)] and t.parts[A].buffered_bytes == 0
    out.clear()
    assert t.take_one(out) is None and [e.error.code() for _, b, e in out if b is None] == [KafkaError._PARTITION_EOF]  # type: ignore[union-attr]
    out.clear()
    assert t.take_one(out) is None and out == []  # nothing left but the paused row
    t.pause(C, False)
    fill(t, A, 3, 3)
    got = [t.take_one(out) for _ in range(4)]
    assert [(r.offset if r is not None else None) for r in got] == [0, 3, 1, 4]  # in turn: C, A, C, A
    assert offsets_taken(t.take(10)) in ([(2, 2), (0, 5)], [(0, 5), (2, 2)])


def test_paused_partitions_keep_their_records_and_are_not_fetched() -> None:
    t = FetchTable(FetchLimits())
    t.assign(A, 0)
    t.assign(B, 0)
    fill(t, A, 0, 4)
    fill(t, B, 0, 4)
    t.pause(A, True)
    assert {p for p, _ in offsets_taken(t.take(100))} == {1}
    plan, _ = t.fetch_plan(0.0, leaders(), ())
    assert [p.key for p in plan[1][1]] == [B]
    t.pause(A, False)
    assert offsets_taken(t.take(100)) == [(0, o) for o in range(4)]


def test_control_batches_and_aborted_records_move_the_position_past_them() -> None:
    t = FetchTable(FetchLimits(read_committed=True))
    t.assign(A, 0)
    part = t.parts[A]
    log = [batch(0, 2, pid=7, txn=True), marker(2, 7, commit=False), batch(3, 1), batch(4, 2, pid=8, txn=True)]
    chunks, next_offset = sift(log, 0, 0, 1 << 62, part.filter)
    assert next_offset == 6
    t.add(part, chunks, next_offset, 6, 0)
    assert offsets_taken(t.take(10)) == [(0, 3)]
    assert t.position(A) == 4  # pid 8's open transaction at 4 may still commit
    chunks, next_offset = sift([marker(6, 8, commit=True)], 6, 0, 1 << 62, part.filter)
    t.add(part, chunks, next_offset, 7, 0)
    assert offsets_taken(t.take(10)) == [(0, 4), (0, 5)]
    assert t.position(A) == 7


def test_sift_skips_what_lies_before_the_offset_asked() -> None:
    chunks, next_offset = sift([batch(0, 5), batch(5, 5)], 3, 3, 1 << 62, None)
    assert [[r.offset for r in rs] for _, rs in chunks] == [[3, 4], [5, 6, 7, 8, 9]]
    assert next_offset == 10
    assert sift([batch(0, 5)], 5, 5, 1 << 62, CommittedFilter()) == ([], 5)


def test_partition_eof_once_per_end_reached() -> None:
    """As librdkafka: the event follows an answer to a Fetch asked at the end, not the answer that
    reached it, so a record that arrives while the next Fetch waits comes first."""
    t = FetchTable(FetchLimits(partition_eof=True))
    t.assign(A, 0)
    fill(t, A, 0, 2, hw=2)  # the answer that reached the end: no event yet
    part = t.parts[A]
    assert offsets_taken(t.take(10)) == [(0, 0), (0, 1)] and t.take(10) == []
    fill(t, A, 2, 1, hw=3)  # produced meanwhile: the Fetch asked at 2 brings it
    t.add(part, [], 3, -1, -1)  # the Fetch asked at 3 comes back empty (left out of the session)
    t.add(part, [], 3, 3, 0)  # at the end again: no second event
    items = t.take(10)
    assert offsets_taken(items) == [(0, 2)]
    assert [e.error.code() for _, b, e in items if b is None] == [KafkaError._PARTITION_EOF]  # type: ignore[union-attr]
    assert items[-1][1] is None  # the event after the record


def test_out_of_range_resets_or_reports() -> None:
    t = FetchTable(FetchLimits(auto_offset_reset="earliest"))
    t.assign(A, 50)
    assert not t.out_of_range(t.parts[A])
    assert t.parts[A].state == AWAITING_OFFSET and t.parts[A].logical == OFFSET_BEGINNING
    strict = FetchTable(FetchLimits(auto_offset_reset="error"))
    strict.assign(A, 50)
    assert strict.out_of_range(strict.parts[A])
    ((_, _, event),) = strict.take(1)
    assert isinstance(event, FetchEvent) and event.offset == 50


def test_fetch_errors_back_off_and_are_reported_once() -> None:
    t = FetchTable(FetchLimits(error_backoff=0.5))
    t.assign(A, 0)
    error = KafkaError(29, "denied")
    assert t.failed(t.parts[A], error, 10.0, report=True)
    assert not t.failed(t.parts[A], error, 10.0, report=True)
    assert t.fetch_plan(10.2, leaders(), ())[0] == {}
    assert t.fetch_plan(10.6, leaders(), ())[0] != {}


def test_unassign_releases_the_buffer() -> None:
    t = FetchTable(FetchLimits())
    t.assign(A, 0)
    fill(t, A, 0, 3, size=300)
    t.unassign(A)
    assert t.buffered_bytes == 0 and t.position(A) is None and t.take(10) == []


def test_a_batch_larger_than_the_partition_size_doubles_it() -> None:
    t = FetchTable(FetchLimits(partition_max_bytes=100, queue_bytes=1000))
    t.assign(A, 0)
    part = t.parts[A]
    t.too_large(part)
    t.too_large(part)
    t.too_large(part)
    t.too_large(part)
    assert part.max_bytes == 1000


def test_records_kept_as_decoded() -> None:
    t = FetchTable(FetchLimits())
    t.assign(A, 0)
    part = t.parts[A]
    b = RecordBatch(0, 88, 1, 2, 0, 0, 1, 0, 0, -1, -1, -1, [Record(0, 5, b"k", b"v"), Record(1, 6, None, None)])
    t.add(part, [(b, b.records)], 2, 2, 0)
    ((_, got_batch, records),) = t.take(5)
    assert got_batch is b and records == b.records


def test_a_preferred_read_replica_is_used_until_it_expires_or_fails() -> None:
    t = FetchTable(FetchLimits())
    t.assign(A, 0)
    part = t.parts[A]
    t.prefer(part, 7, 10.0, 60.0)
    plan, _ = t.fetch_plan(11.0, leaders(1), ())
    assert list(plan) == [7]
    t.answered(plan[7][0], plan[7][1])
    assert list(t.fetch_plan(71.0, leaders(1), ())[0]) == [1]  # expired: the leader again
    t.answered(t.reserved, [part])
    t.prefer(part, 7, 80.0, 60.0)
    t.failed(part, KafkaError(6, "not leader or follower"), 80.0, report=False)
    assert part.preferred is None


def test_a_committed_offset_not_visible_yet_is_asked_again_after_the_backoff_without_an_event() -> None:
    """Issue 39: an OffsetFetch older than this process's committed transaction is asked again."""
    t = FetchTable(FetchLimits(has_group=True))
    t.assign(A, OFFSET_STORED)
    part = t.parts[A]
    part.resolving = True  # (the engine marks a row it asks for)
    t.lookup_again(A, part.generation, now=1.0)
    assert part.state == AWAITING_OFFSET and t.take(10) == []
    assert t.lookups(1.0) == [] and [p.key for p in t.lookups(1.0 + t.limits.error_backoff)] == [A]
