"""The produce lane's shared state: `_native.LaneState` holds what its pure-Python twin holds, the
engine, its accumulator, its sender and the C lane share one object, and the slots the lane reads
by name (core/lane_state.py LANE_SLOTS) are slots of those classes, so a record the lane queues
shows in what the Python side reads (statistics, flush, the buffer limits, the open batches)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from kafkawire.core import partitioners
from kafkawire.core.accumulator import ProducerBatch
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.lane_state import LANE_SLOTS, LaneState, new_lane_state
from kafkawire.core.metadata import ClusterView
from kafkawire.native import native

needs_native = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)
FIELDS = {"outstanding", "buffered_bytes", "queued", "queues", "fatal"}


def kinds() -> list[Any]:
    return [LaneState] + ([native.LaneState] if native is not None else [])


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
    if native is not None:
        assert {name for name in FIELDS if hasattr(native.LaneState, name)} == FIELDS


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
    for cls in (ProducerBatch, partitioners._Stick, ClusterView):  # the sticky state's class is private
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
