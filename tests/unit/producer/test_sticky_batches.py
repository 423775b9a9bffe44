"""Keyless records fill each batch before the sticky partition moves on, on every path.

The sticky partitioner counts a record as its batch does (`PendingMessage.size`) and moves when
the next record would not fit what a batch holds after its header (`Accumulator.room`). Counting
value bytes against ``batch.size`` instead moved it a few records after the batch had closed:
with 1 KB values, each partition's turn left a 943-record batch and a 34-record one, 7% more
ProduceRequests than librdkafka sent for the same records. No broker: the partition count is put
in the metadata, and nothing leaves (a long linger, an unreachable bootstrap server).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire import Producer
from kafkawire.native import native
from kafkawire.records import HEADER_SIZE, record_size_upper_bound

TOPIC = "sticky-fill"
LANE = [pytest.param(True, marks=pytest.mark.skipif(native is None, reason="kafkawire._native is not built")), False]


def _producer(lane: bool, **conf: Any) -> Producer:
    p = Producer({"bootstrap.servers": "127.0.0.1:1", "linger.ms": 600_000, "message.timeout.ms": 900_000, **conf})
    p._engine._sticky._rng = random.Random(5)
    p._engine.client.metadata.partition_counts = {TOPIC: 4}
    if not lane:
        p._lane = None
    return p


def _batches_behind(p: Producer) -> list[int]:
    """The record counts of every batch but the one the sticky partition is filling now."""
    engine = p._engine
    current = (TOPIC, engine._sticky.topics[TOPIC].partition)
    counts = []
    for tp, queue in engine.acc._queues.items():
        for batch in queue:
            if not (tp == current and batch is queue[-1]):
                counts.append(len(batch.messages))
    return counts


def _assert_full_batches(lane: bool, batch_size: int, value: bytes, produce: Callable[[Any], Any]) -> None:
    """``produce(producer)`` left at least 8 batches behind the open one, each holding as many
    records of ``value`` as fit ``batch_size``."""
    p = _producer(lane, **{"batch.size": batch_size})
    try:
        produce(p)
        per_batch = (batch_size - HEADER_SIZE) // record_size_upper_bound(None, value)
        behind = _batches_behind(p)
        assert len(behind) >= 8
        assert set(behind) == {per_batch}
    finally:
        p.purge()
        p.close(0)


@pytest.mark.parametrize("lane", LANE)
@pytest.mark.parametrize("value_size", [1000, 1024, 77])
def test_produce_fills_each_batch_before_the_sticky_partition_moves(lane: bool, value_size: int) -> None:
    value = b"v" * value_size
    _assert_full_batches(lane, 20_000, value, lambda p: [p.produce(TOPIC, value) for _ in range(2_000)])


@pytest.mark.parametrize("lane", LANE)
def test_produce_batch_fills_each_batch_before_the_sticky_partition_moves(lane: bool) -> None:
    value = b"w" * 1024

    def produce(p: Any) -> None:
        for _ in range(20):
            assert p.produce_batch(TOPIC, [{"value": value} for _ in range(100)]) == 100

    _assert_full_batches(lane, 50_000, value, produce)
