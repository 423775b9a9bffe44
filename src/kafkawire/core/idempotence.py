"""The idempotent producer's bookkeeping (sans-IO): producer id and epoch, per-partition sequences,
what may be sent now, and what each error means for a batch (KIP-98, KIP-360, KIP-679).

A batch gets its base sequence the first time it leaves and keeps it for every retry, so a
retried batch is byte-identical and the broker can drop a duplicate. Order is kept by two rules:
a partition sends only to the node its in-flight batches went to (after a leader change nothing
goes to the new leader until the old requests have drained), and after a failure a partition
sends nothing more until everything it had in flight has been answered, then resends in
sequence order.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from .accumulator import ProducerBatch, TopicPartition

SEQUENCE_MODULUS = 2**31  # sequences wrap from 2^31-1 to 0
MAX_IN_FLIGHT = 5  # per partition; the broker remembers the last five batches of a producer

OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
INVALID_PRODUCER_EPOCH = 47
UNKNOWN_PRODUCER_ID = 59
PRODUCER_FENCED = 90


class Verdict(enum.Enum):
    DELIVERED = "delivered"  # a duplicate of a batch the log already holds
    REQUEUE = "requeue"  # an earlier batch failed: resend in sequence order, not an error
    BUMP_EPOCH = "bump epoch"  # the broker forgot us: new epoch, sequences from 0, then resend
    FATAL = "fatal"  # sequence state is broken or we were fenced: nothing may be sent any more
    POLICY = "policy"  # not idempotence's business: the general error policy decides


class Idempotence:
    def __init__(self) -> None:
        self.producer_id = -1
        self.epoch = -1
        self._next: dict[TopicPartition, int] = {}
        self._in_flight: dict[TopicPartition, list[ProducerBatch]] = {}  # by base sequence
        self._node: dict[TopicPartition, int] = {}  # where a partition's in-flight batches went
        self._failed: set[TopicPartition] = set()  # partitions draining after a failure

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    def set_producer_id(self, producer_id: int, epoch: int) -> None:
        """A new id or epoch: every partition's sequence starts again at 0."""
        self.producer_id = producer_id
        self.epoch = epoch
        self._next.clear()
        self._failed.clear()

    # --- sending -------------------------------------------------------------------------------

    def may_send(self, tp: TopicPartition, node: int) -> bool:
        in_flight = self._in_flight.get(tp)
        if not in_flight:
            return True
        if tp in self._failed:
            return False  # drain first, then resend in order
        return self._node.get(tp) == node and len(in_flight) < MAX_IN_FLIGHT

    def stamp(self, batch: ProducerBatch) -> tuple[int, int, int]:
        """(producer id, epoch, base sequence) for a batch about to leave; a retry keeps its own."""
        tp = (batch.topic, batch.partition)
        if batch.base_sequence < 0:
            batch.base_sequence = self._next.get(tp, 0)
            self._next[tp] = (batch.base_sequence + len(batch.messages)) % SEQUENCE_MODULUS
        return self.producer_id, self.epoch, batch.base_sequence

    def sent(self, batch: ProducerBatch, node: int) -> None:
        tp = (batch.topic, batch.partition)
        self._in_flight.setdefault(tp, []).append(batch)  # batches leave in sequence order
        self._node[tp] = node

    def answered(self, batch: ProducerBatch, *, failed: bool) -> None:
        tp = (batch.topic, batch.partition)
        queue = self._in_flight.get(tp, [])
        if batch in queue:
            queue.remove(batch)
        if failed:
            self._failed.add(tp)
        if not queue:
            self._in_flight.pop(tp, None)
            self._node.pop(tp, None)
            self._failed.discard(tp)

    def in_flight(self, tp: TopicPartition) -> int:
        return len(self._in_flight.get(tp, ()))

    def anything_in_flight(self) -> bool:
        return any(self._in_flight.values())

    # --- errors --------------------------------------------------------------------------------

    def verdict(self, batch: ProducerBatch, code: int) -> Verdict:
        """What an error on ``batch`` means, before the general policy is asked."""
        tp = (batch.topic, batch.partition)
        if code == DUPLICATE_SEQUENCE_NUMBER:
            return Verdict.DELIVERED
        if code in (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED):
            return Verdict.FATAL
        if code == OUT_OF_ORDER_SEQUENCE_NUMBER:
            # Behind an earlier failure this is expected; on the oldest batch it means lost data.
            earlier = [b for b in self._in_flight.get(tp, ()) if b is not batch and _before(b, batch)]
            return Verdict.REQUEUE if earlier or tp in self._failed else Verdict.FATAL
        if code == UNKNOWN_PRODUCER_ID:
            return Verdict.BUMP_EPOCH
        return Verdict.POLICY

    def restamp(self, batches: Iterable[ProducerBatch]) -> None:
        """After an epoch bump: give unanswered batches new sequences from 0, in their old order."""
        for batch in sorted(batches, key=lambda b: (b.topic, b.partition, b.base_sequence)):
            batch.base_sequence = -1
            self.stamp(batch)


def _distance(seq: int, origin: int) -> int:
    return (seq - origin) % SEQUENCE_MODULUS


def _before(a: ProducerBatch, b: ProducerBatch) -> bool:
    return 0 < _distance(b.base_sequence, a.base_sequence) < SEQUENCE_MODULUS // 2
