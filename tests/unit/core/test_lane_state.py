"""The produce lane's shared state: `_native.LaneState` and `OpenBatch` hold what their pure-Python
twins hold and answer the hot path's two rules (buffer room, a batch's room) alike, the engine, its
accumulator, its sender and the C lane share one object, and the slots the lane reads by name
(core/lane_state.py LANE_SLOTS) are slots of those classes, so a record the lane queues shows in
what the Python side reads (statistics, flush, the buffer limits, the open batches)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.core import partitioners
from kafkawire.core.accumulator import ProducerBatch
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.lane_state import (
    FILLED,
    LANE_SLOTS,
    LEFT,
    ROOM,
    SERVED_PATHS,
    SHUT,
    LaneState,
    OpenBatch,
    buffer_charge,
    new_lane_state,
)
from kafkawire.core.metadata import ClusterView
from kafkawire.native import native

needs_native = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)
FIELDS = {
    "outstanding",
    "buffered_bytes",
    "queued",
    "queues",
    "fatal",
    "max_messages",
    "max_bytes",
    "lane_served",
    "bulk_served",
    "twin_served",
    "slow_served",
}
BATCH_FIELDS = {"messages", "bytes", "full", "payload", "attempts", "extra", "rows"}


def kinds() -> list[Any]:
    return [LaneState] + ([native.LaneState] if native is not None else [])


def batch_kinds() -> list[Any]:
    return [OpenBatch] + ([native.OpenBatch] if native is not None else [])


@pytest.mark.parametrize("kind", kinds())
def test_the_state_starts_empty_and_counts_hold_any_size(kind: Any) -> None:
    state = kind()
    assert (state.outstanding, state.buffered_bytes, state.queued, state.queues, state.fatal) == (0, 0, 0, {}, None)
    state.outstanding += 3
    state.buffered_bytes = 2**40  # a buffer limit in bytes can pass 32 bits
    state.queued -= 1
    state.fatal = KafkaError(-1)
    assert (state.outstanding, state.buffered_bytes, state.queued) == (3, 2**40, -1)
    assert state.fatal.code() == -1
    with pytest.raises(AttributeError):
        state.other = 1


def test_twin_and_native_declare_the_same_fields() -> None:
    assert set(LaneState.__slots__) == FIELDS
    assert {f"{path}_served" for path in SERVED_PATHS} <= FIELDS
    assert set(OpenBatch.__slots__) == BATCH_FIELDS
    if native is not None:
        assert {name for name in FIELDS if hasattr(native.LaneState, name)} == FIELDS
        assert {name for name in BATCH_FIELDS if hasattr(native.OpenBatch, name)} == BATCH_FIELDS


def test_a_batch_is_the_open_batch_in_use() -> None:
    """ProducerBatch derives from the OpenBatch the lanes read: C fields when the extension is built."""
    assert issubclass(ProducerBatch, OpenBatch if native is None else native.OpenBatch)
    assert not set(ProducerBatch.__slots__) & BATCH_FIELDS


def _batch(kind: Any) -> Any:
    b = kind()
    b.messages, b.bytes, b.full, b.payload, b.attempts, b.extra, b.rows = [], 61, False, None, 0, 0, 0
    return b


def _batch_state(b: Any) -> tuple[Any, ...]:
    return (list(b.messages), b.bytes, b.full, b.payload, b.attempts, b.extra, b.rows)


@pytest.mark.parametrize("kind", batch_kinds())
def test_a_batch_takes_records_until_full_by_size_or_count(kind: Any) -> None:
    b = _batch(kind)  # 61 bytes of header
    assert b.room(50, 300) == ROOM
    assert b.push("a", 50, 300, 3) == ROOM
    assert b.push("b", 100, 300, 3) == ROOM
    assert b.room(100, 300) == SHUT and not b.full  # (room changes nothing)
    assert b.push("c", 100, 300, 3) == SHUT and b.full  # past batch.size: full from now on, not joined
    assert b.push("d", 1, 300, 3) == LEFT
    assert _batch_state(b) == (["a", "b"], 211, True, None, 0, 0, 0)
    first = _batch(kind)
    assert first.push("big", 5_000, 300, 3) == FILLED  # a first record always joins
    counted = _batch(kind)
    counted.extra = 1  # an entry standing for two records
    assert counted.push("x", 1, 10_000, 3) == ROOM and counted.push("y", 1, 10_000, 3) == FILLED
    for left in ({"payload": b"built"}, {"attempts": 1}):
        b = _batch(kind)
        for name, value in left.items():
            setattr(b, name, value)
        assert b.push("z", 1, 10_000, 3) == LEFT and b.messages == []


@needs_native
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 2)), max_size=40),
    st.integers(1, 1000),
    st.integers(1, 12),
)
def test_native_and_twin_batches_answer_alike(steps: list[tuple[int, int]], batch_size: int, count: int) -> None:
    """The rule of a batch's room, one in C and its twin: the same answers and fields throughout."""
    a, b = _batch(native.OpenBatch), _batch(OpenBatch)  # type: ignore[union-attr]
    for i, (size, op) in enumerate(steps):
        if op == 2:
            assert a.room(size, batch_size) == b.room(size, batch_size)
        else:
            assert a.push(i, size, batch_size, count) == b.push(i, size, batch_size, count)
        assert _batch_state(a) == _batch_state(b)


@pytest.mark.parametrize("kind", kinds())
def test_the_room_rule_is_librdkafkas(kind: Any) -> None:
    """Fewer than max_messages records (0: none), their charges within max_bytes: taken when so."""
    state = kind()
    state.max_messages, state.max_bytes = 3, 100
    assert [state.take_room(c) for c in (60, 40, 1)] == [True, True, False]  # 101 > 100
    assert state.take_room(0)  # the third record, of no charge
    assert not state.take_room(0)  # a fourth: the count
    assert (state.outstanding, state.buffered_bytes) == (3, 100)
    state.max_messages = 0
    assert state.take_room(0) and not state.take_room(1)
    assert buffer_charge(None) == 0 and buffer_charge(b"abc") == 3


@needs_native
def test_native_state_refuses_what_it_cannot_hold() -> None:
    state = native.LaneState()  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        state.outstanding = "1"
    with pytest.raises(TypeError):
        state.queues = []  # the lane reads it as a dict
    assert (state.outstanding, state.queues) == (0, {})


def test_new_state_is_the_native_one_when_built() -> None:
    assert type(new_lane_state()) is (LaneState if native is None else native.LaneState)


def test_the_slots_the_lane_names_are_slots_of_those_classes() -> None:
    for cls in (partitioners._Stick, ClusterView):  # the sticky state's class is private
        named = LANE_SLOTS[cls.__name__]
        assert set(named) <= set(cls.__slots__), cls


def test_the_lane_moves_the_state_the_producer_reads() -> None:
    from kafkawire import Producer

    p = Producer({"bootstrap.servers": "127.0.0.1:1", "linger.ms": 60_000, "socket.connection.setup.timeout.ms": 1000})
    try:
        engine = p._engine  # what statistics and flush() read
        engine.client.metadata.partition_counts["t"] = 1  # a known topic: the record goes to its batch
        assert engine.acc.state is engine.state
        for _ in range(3):
            p.produce("t", b"v", partition=0)
        assert (engine.state.outstanding, engine.state.queued, len(engine.acc)) == (3, 3, 3)
        assert engine.state.buffered_bytes > 0
        [queue] = engine.state.queues.values()  # the accumulator's open batch, as the lane found it
        assert sum(len(batch.messages) for batch in queue) == 3
    finally:
        p.purge()
        p.poll(0)
