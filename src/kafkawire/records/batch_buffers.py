"""Spare buffers of delivered batches, written over by the next batches.

A producer's batch is a bytearray of up to ``batch.size`` (1 MB in the benchmark). Allocated
afresh for each batch, every 4 KiB of it is a page fault and a page the kernel zeroes before the
records are written, then unmapped again when the batch is freed: at 1 KB values that was a
quarter of the IO thread's time. A delivered batch's buffer is kept here instead and the next
batch is written over it (`BatchBuilder(spare)`), so its pages stay the process's.

Used by the IO thread alone (taken when a batch is encoded, given back when it is delivered);
emptied when the producer is idle (nothing queued or in flight).
"""

from __future__ import annotations

# Buffers shorter than this are not worth keeping: their allocation costs little.
MIN_SPARE = 64 * 1024


class BatchBuffers:
    def __init__(self, keep: int) -> None:
        self._keep = keep  # at most this many spare buffers (their memory stays the process's)
        self._spare: list[bytearray] = []

    def __len__(self) -> int:
        return len(self._spare)

    def take(self) -> bytearray | None:
        """A spare buffer, or None: the batch makes its own."""
        return self._spare.pop() if self._spare else None

    def give(self, buf: bytes | bytearray | None) -> None:
        """``buf``, a finished batch nothing will read again, to be written over."""
        if buf.__class__ is not bytearray or len(buf) < MIN_SPARE or len(self._spare) >= self._keep:
            return
        assert isinstance(buf, bytearray)
        try:
            # A view of it still alive (a write not finished) would see it change: resizing is what
            # such a view forbids, so a one-byte shrink and regrowth (no allocation) tells.
            buf.append(buf.pop())
        except BufferError:
            return
        self._spare.append(buf)

    def clear(self) -> None:
        self._spare.clear()
