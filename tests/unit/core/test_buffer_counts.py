"""The producer's buffer counters: `_native.BufferCounts` holds what its pure-Python twin holds, and
the engine, its accumulator and the C lane share one object, so a record the lane queues shows in
the counts the Python side reads (statistics, flush, the buffer limits)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from kafkawire.core.buffer_counts import BufferCounts, new_buffer_counts
from kafkawire.native import native

needs_native = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)


def kinds() -> list[Any]:
    return [BufferCounts] + ([native.BufferCounts] if native is not None else [])


@pytest.mark.parametrize("kind", kinds())
def test_counts_start_at_zero_and_hold_any_size(kind: Any) -> None:
    counts = kind()
    assert (counts.outstanding, counts.buffered_bytes, counts.queued) == (0, 0, 0)
    counts.outstanding += 3
    counts.buffered_bytes = 2**40  # a buffer limit in bytes can pass 32 bits
    counts.queued -= 1
    assert (counts.outstanding, counts.buffered_bytes, counts.queued) == (3, 2**40, -1)
    with pytest.raises(AttributeError):
        counts.other = 1


@needs_native
def test_native_counts_refuse_what_is_not_an_int() -> None:
    counts = native.BufferCounts()  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        counts.outstanding = "1"
    assert counts.outstanding == 0


def test_new_counts_are_the_native_ones_when_built() -> None:
    assert type(new_buffer_counts()) is (BufferCounts if native is None else native.BufferCounts)


def test_the_lane_moves_the_counts_the_producer_reads() -> None:
    from kafkawire import Producer

    p = Producer({"bootstrap.servers": "127.0.0.1:1", "linger.ms": 60_000, "socket.connection.setup.timeout.ms": 1000})
    try:
        engine = p._engine  # what statistics and flush() read
        engine.client.metadata.partition_counts["t"] = 1  # a known topic: the record goes to its batch
        assert engine.acc.counts is engine.counts
        for _ in range(3):
            p.produce("t", b"v", partition=0)
        assert (engine.counts.outstanding, engine.counts.queued, len(engine.acc)) == (3, 3, 3)
        assert engine.counts.buffered_bytes > 0
    finally:
        p.purge()
        p.poll(0)
