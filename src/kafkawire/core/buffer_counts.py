"""The producer's buffer counters, in one object the produce lane (C) adds to per record.

The engine's ``outstanding`` and ``buffered_bytes`` (what ``queue.buffering.max.*`` bound) and the
accumulator's ``queued`` move with every record produced. Held as plain attributes of instance
dicts, the lane paid a dict lookup and a new int object for each, per record; here they are
machine integers it reads and writes in place (``kafkawire._native.BufferCounts``). This class
is the pure-Python twin: the same attributes, for ``KAFKAWIRE_PURE_PYTHON=1`` and the tests.
"""

from __future__ import annotations

from ..native import native


class BufferCounts:
    __slots__ = ("buffered_bytes", "outstanding", "queued")

    def __init__(self) -> None:
        self.outstanding = 0  # records produced and not yet reported
        self.buffered_bytes = 0  # their buffer charge
        self.queued = 0  # records in the accumulator, not yet in a request


def new_buffer_counts() -> BufferCounts:
    """The C counters when the extension is built (the lane needs them), else the twin."""
    return BufferCounts() if native is None else native.BufferCounts()
