"""The produce lane's shared state: one object the C lane and the Python side both read, its fields
declared once (``kafkawire._native.LaneState``; this class is its pure-Python twin, for
``KAFKAWIRE_PURE_PYTHON=1`` and the tests, which hold the two to the same fields).

What produce()'s C path reads and moves for every record lives here, where both sides reach it
without a lookup: the buffer counters (the engine's ``outstanding`` and ``buffered_bytes``, which
``queue.buffering.max.*`` bound, and the accumulator's ``queued``), machine integers in C; the
accumulator's open batches per partition (``queues``, the accumulator keeps them here, not in its own
instance); and the sender's ``fatal`` error, which stops the lane as it stops the Python path. The
rest of the lane's contract is named slots of three classes, found by name when the lane is made
(LANE_SLOTS below), so a slot renamed on one side fails the producer's construction, not a record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..native import native

if TYPE_CHECKING:
    from .kafka_error import KafkaError

# The slots the lane reads (and the ones it moves, marked) by class: ProducerBatch's (core/accumulator.py:
# messages appended, bytes and full moved), the sticky state's (core/partitioners.py: produced moved;
# until, the time its partition is left, compared with the record's), and the cluster picture's
# partition counts (core/metadata.py ClusterView).
LANE_SLOTS = {
    "ProducerBatch": ("messages", "bytes", "full", "payload", "attempts"),
    "_Stick": ("partition", "produced", "until"),
    "ClusterView": ("partition_counts",),
}


class LaneState:
    __slots__ = ("buffered_bytes", "fatal", "outstanding", "queued", "queues")

    def __init__(self) -> None:
        self.outstanding = 0  # records produced and not yet reported
        self.buffered_bytes = 0  # their buffer charge
        self.queued = 0  # records in the accumulator, not yet in a request
        self.queues: dict[Any, Any] = {}  # the accumulator's open batches: (topic, partition) -> deque
        self.fatal: KafkaError | None = None  # the sender's fatal error: nothing more can be produced


def new_lane_state() -> LaneState:
    """The C state when the extension is built (the lane needs it), else the twin."""
    return LaneState() if native is None else native.LaneState()
