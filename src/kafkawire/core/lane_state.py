"""The produce lane's shared state and the hot path's rules: the objects the C lanes and the Python
side both read, their fields and rules declared once (``kafkawire._native.LaneState`` and
``OpenBatch``, native_c/lane_state.c; the classes here are their pure-Python twins, for
``KAFKAWIRE_PURE_PYTHON=1`` and the tests, which hold the two to the same fields and answers).

What produce()'s C path reads and moves for every record lives here, where both sides reach it
without a lookup: the buffer counters (the engine's ``outstanding`` and ``buffered_bytes``, which
``queue.buffering.max.*`` bound, and the accumulator's ``queued``), machine integers in C; the
accumulator's open batches per partition (``queues``, the accumulator keeps them here, not in its own
instance); the sender's ``fatal`` error, which stops the lane as it stops the Python path; the
buffer limits and the buffer-room rule (`LaneState.take_room`, librdkafka's); and a count of the
records each path queued (`served`), which tests assert on. A batch records join is an `OpenBatch`
(`ProducerBatch` adds the rest), whose `OpenBatch.push` is the one rule of a batch's room. The
rest of the lane's contract is named slots of two classes, found by name when the lane is made
(LANE_SLOTS below), so a slot renamed on one side fails the producer's construction, not a record.
"""

from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING, Any

from ..native import native

if TYPE_CHECKING:
    from .kafka_error import KafkaError

# The slots the lanes read by class, in the order the lane takes them (ProduceLane's arguments): the
# sticky state's (core/partitioners.py: produced moved; until, the time its partition is left,
# compared with the record's) and the cluster picture's partition counts (core/metadata.py
# ClusterView). A batch's fields are OpenBatch's, declared in C.
LANE_SLOTS = {
    "_Stick": ("partition", "produced", "until"),
    "ClusterView": ("partition_counts",),
}

# The paths that queue a record (LaneState's ``<path>_served`` counters): produce()'s C lane, the bulk
# paths' C loop (produce_batch(), the Arrow writer), the Python admission of a plain record (bytes
# or None, no headers: the C paths' twin, which takes what they leave), and the Python path of any
# other form (headers, values to convert, interceptors, transactions).
SERVED_PATHS = ("lane", "bulk", "twin", "slow")


def buffer_charge(value: bytes | None) -> int:
    """What a record takes of ``queue.buffering.max.kbytes`` until its report is served: its value's
    length, as librdkafka counts it (rd_kafka_msg_new0 charges ``len`` alone)."""
    return 0 if value is None else len(value)


class LaneState:
    __slots__ = (
        "buffered_bytes",
        "bulk_served",
        "fatal",
        "lane_served",
        "max_bytes",
        "max_messages",
        "outstanding",
        "queued",
        "queues",
        "slow_served",
        "twin_served",
    )

    def __init__(self) -> None:
        self.outstanding = 0  # records produced and not yet reported
        self.buffered_bytes = 0  # their buffer charge
        self.queued = 0  # records in the accumulator, not yet in a request
        self.queues: dict[Any, Any] = {}  # the accumulator's open batches: (topic, partition) -> deque
        self.fatal: KafkaError | None = None  # the sender's fatal error: nothing more can be produced
        self.max_messages = 0  # queue.buffering.max.messages (0: no limit)
        self.max_bytes = sys.maxsize  # queue.buffering.max.kbytes * 1024
        self.lane_served = self.bulk_served = self.twin_served = self.slow_served = 0

    def take_room(self, charge: int) -> bool:
        """Room for one record of ``charge`` (`buffer_charge`), taken when there is: librdkafka's
        rule (rd_kafka_curr_msgs_add), fewer than ``max_messages`` records (0: no limit) and their
        charges within ``max_bytes``."""
        limit = self.max_messages
        if (limit > 0 and self.outstanding >= limit) or self.buffered_bytes + charge > self.max_bytes:
            return False
        self.outstanding += 1
        self.buffered_bytes += charge
        return True


def served(state: Any) -> dict[str, int]:
    """The records each path queued so far, by `SERVED_PATHS` name."""
    return {path: getattr(state, f"{path}_served") for path in SERVED_PATHS}


def new_lane_state() -> LaneState:
    """The C state when the extension is built (the lane needs it), else the twin."""
    return LaneState() if native is None else native.LaneState()


# What `OpenBatch.push` answers: the batch left or is full (LEFT: not joined), it is open but the
# record would take it past batch.size (SHUT: full from now on, not joined), the record joined
# (ROOM), or joined and no further record can (FILLED).
LEFT, SHUT, ROOM, FILLED = 0, 1, 2, 3


class OpenBatch:
    """The fields of a batch that records join, and the rule of its room (the twin of
    ``_native.OpenBatch``: `ProducerBatch` derives from the one in use)."""

    __slots__ = ("attempts", "bytes", "extra", "full", "messages", "payload", "rows")

    messages: list[Any]  # one entry per record, or an ArrowRows entry standing for several
    bytes: int  # the batch's size if every record took its upper bound
    full: bool
    payload: builtins.bytes | bytearray | None  # built once; a retry re-sends the same bytes
    attempts: int
    extra: int  # records beyond one per entry
    rows: int  # ArrowRows entries

    def room(self, size: int, batch_size: int) -> int:
        """LEFT, SHUT or ROOM for a record of ``size``, nothing changed."""
        if self.full or self.payload is not None or self.attempts:
            return LEFT
        if self.messages and self.bytes + size > batch_size:
            return SHUT
        return ROOM

    def push(self, msg: Any, size: int, batch_size: int, batch_count: int) -> int:
        """``msg`` (of bound ``size``) joins when it fits: ROOM, or FILLED once ``batch_count``
        records or ``batch_size`` bytes leave room for no other; else LEFT, or SHUT (marked full)."""
        room = self.room(size, batch_size)
        if room != ROOM:
            if room == SHUT:
                self.full = True
            return room
        messages = self.messages
        messages.append(msg)
        self.bytes += size
        if len(messages) + self.extra >= batch_count or self.bytes >= batch_size:
            self.full = True
            return FILLED
        return ROOM


if TYPE_CHECKING:
    BatchBase = OpenBatch
else:
    BatchBase = OpenBatch if native is None else native.OpenBatch
