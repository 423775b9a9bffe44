"""The fetch rules of core/fetch_verdict.py as each fetcher applies them, without a broker: the
consumer's fetch table grows a partition's limit after an answer holding part of one batch, up to
its queue, then says the record is too large; the share consumer never acknowledges as gaps the
offsets it acquired past the answer's whole batches (their records would be lost)."""

from __future__ import annotations

import struct
from types import SimpleNamespace

from kafkawire.core.fetch_positions import FetchTable
from kafkawire.core.fetch_rows import FetchLimits
from kafkawire.records import BatchBuilder
from kafkawire.share_consumer.share_engine import _acquired


def _batch(base_offset: int, count: int) -> bytes:
    builder = BatchBuilder()
    builder.append_records([(1_700_000_000_000, None, b"v%d" % i, None) for i in range(count)])
    built = bytes(builder.build())
    return struct.pack(">q", base_offset) + built[8:]  # (the CRC covers what follows the length)


def _share_part(records: bytes, first: int, last: int) -> SimpleNamespace:
    acquired = [SimpleNamespace(first_offset=first, last_offset=last, delivery_count=1)]
    return SimpleNamespace(acquired_records=acquired, records=records)


def test_share_offsets_past_the_whole_batches_are_no_gaps() -> None:
    whole, cut = _batch(0, 3), _batch(3, 3)
    got, gaps = _acquired(_share_part(whole + cut[: len(cut) // 2], 0, 5), ("t", 0))
    assert [m.offset() for m in got] == [0, 1, 2]
    assert gaps == []  # 3..5 stay acquired: the broker releases them when their lock times out
    got, gaps = _acquired(_share_part(cut[:20], 3, 5), ("t", 0))  # part of one batch alone: too large
    assert (got, gaps) == ([], [])
    got, gaps = _acquired(_share_part(whole + cut, 0, 5), ("t", 0))
    assert [m.offset() for m in got] == [0, 1, 2, 3, 4, 5] and gaps == []


def test_share_offsets_within_a_whole_batch_without_a_record_are_gaps() -> None:
    """(A compacted batch keeps its offsets: those it no longer holds are gaps, acknowledged as such.)"""
    got, gaps = _acquired(_share_part(_batch(0, 3), 0, 2), ("t", 0))
    assert [m.offset() for m in got] == [0, 1, 2] and gaps == []
    got, gaps = _acquired(_share_part(_batch(0, 2) + _batch(4, 2), 0, 5), ("t", 0))
    assert [m.offset() for m in got] == [0, 1, 4, 5] and gaps == [2, 3]


def test_the_consumers_limit_grows_to_its_queue_then_the_record_is_too_large() -> None:
    table = FetchTable(FetchLimits(partition_max_bytes=1 << 20, queue_bytes=3 << 20))
    table.assign(("t", 0), 5)
    part = table.parts[("t", 0)]
    grown = []
    while table.too_large(part):
        grown.append(part.max_bytes)
    assert grown == [2 << 20, 3 << 20]  # doubled, up to the queue; then the caller reports MSG_SIZE_TOO_LARGE
    assert part.max_bytes == 3 << 20
