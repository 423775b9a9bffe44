"""Spare batch buffers: a batch written over one is byte for byte a fresh batch, and a buffer
something still views is never written over."""

from __future__ import annotations

import pytest

from kafkawire.records import BatchBuilder, decode_batches
from kafkawire.records.batch_buffers import MIN_SPARE, BatchBuffers
from kafkawire.records.compression import LZ4, NONE


def _records(n: int, size: int) -> list[tuple[int, bytes | None, bytes | None, None]]:
    return [(1_700_000_000_000 + i, b"k%d" % i if i % 3 else None, bytes([i % 251]) * size, None) for i in range(n)]


def _built(
    spare: bytearray | None, records: list[tuple[int, bytes | None, bytes | None, None]], compression: int
) -> bytes:
    builder = BatchBuilder(spare)
    half = len(records) // 2
    builder.append_records(records[:half])  # two calls: the second writes after the first
    builder.append_records(records[half:])
    return bytes(
        builder.build(producer_id=7, producer_epoch=1, base_sequence=3, compression=compression, hand_over=True)
    )


@pytest.mark.parametrize("compression", [NONE, LZ4])
@pytest.mark.parametrize("spare_size", [MIN_SPARE, 300_000, 2_000_000])  # shorter and longer than the batch
def test_a_batch_over_a_spare_buffer_is_the_fresh_batch(compression: int, spare_size: int) -> None:
    records = _records(500, 1000)
    spare = bytearray(b"\xee" * spare_size)  # an earlier batch's bytes: none may show through
    got = _built(spare, records, compression)
    assert got == _built(None, records, compression)
    (batch,) = decode_batches(got)
    assert [(r.timestamp, r.key, r.value) for r in batch.records] == [(t, k, v) for t, k, v, _ in records]


def test_spares_are_taken_back_in_turn_up_to_the_limit() -> None:
    spares = BatchBuffers(2)
    assert spares.take() is None
    first, second, third = (bytearray(MIN_SPARE) for _ in range(3))
    for buf in (first, second, third):
        spares.give(buf)
    assert len(spares) == 2
    assert spares.take() is second
    assert spares.take() is first
    assert spares.take() is None


def test_what_is_not_a_large_bytearray_is_not_kept() -> None:
    spares = BatchBuffers(4)
    spares.give(None)
    spares.give(bytes(MIN_SPARE))  # a compressed batch may be bytes
    spares.give(bytearray(MIN_SPARE - 1))
    assert len(spares) == 0


def test_a_buffer_still_viewed_is_not_kept() -> None:
    """A view alive (a write not finished) would see the next batch's bytes: such a buffer is
    dropped, unchanged."""
    spares = BatchBuffers(4)
    buf = bytearray(b"x" * MIN_SPARE)
    view = memoryview(buf)[10:20]
    spares.give(buf)
    assert len(spares) == 0
    assert bytes(view) == b"x" * 10 and len(buf) == MIN_SPARE
    view.release()
    spares.give(buf)
    assert spares.take() is buf


def test_clear_drops_the_spares() -> None:
    spares = BatchBuffers(4)
    spares.give(bytearray(MIN_SPARE))
    spares.clear()
    assert spares.take() is None
