"""The idempotent producer's bookkeeping (sans-IO): producer id and epoch, per-partition sequences,
what may be sent now, and what each error means for a batch (KIP-98, KIP-360, KIP-679).

A batch gets its base sequence the first time it leaves and keeps it for every retry, so a
retried batch is byte-identical and the broker can drop a duplicate. Order is kept by one rule:
a partition has one batch in flight at a time (`may_send`), and a failed batch goes back to the
head of its partition's queue, in sequence order. A later batch is thus never sent, nor accepted,
ahead of one that may still fail and be retried, whatever the broker checks: librdkafka's mock
takes any sequence from an idempotent producer, and wrote a batch pipelined behind a refused one
ahead of that one's retry. (Pipelining is left to the other partitions, which share the
requests; a partition's records keep filling its next batch while one is out, as librdkafka's
producer, which sends about one batch per partition per round trip.)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from ..protocol import error_codes as ec
from ..protocol.error_codes import (
    DUPLICATE_SEQUENCE_NUMBER,
    INVALID_PRODUCER_EPOCH,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    PRODUCER_FENCED,
    UNKNOWN_PRODUCER_ID,
)
from . import TopicPartitionKey
from .accumulator import ProducerBatch
from .kafka_error import KafkaError
from .policy import Meanings

SEQUENCE_MODULUS = 2**31  # sequences wrap from 2^31-1 to 0
MAX_EPOCH = 2**15 - 1  # an epoch is an int16


class IdempotenceVerdict(enum.Enum):
    DELIVERED = "delivered"  # a duplicate of a batch the log already holds
    REQUEUE = "requeue"  # an earlier batch failed: resend in sequence order, not an error
    BUMP_EPOCH = "bump epoch"  # the broker forgot us: new epoch, sequences from 0, then resend
    # (inside a transaction: the batch fails, the transaction must abort, the abort bumps)
    FATAL = "fatal"  # sequence state is broken or we were fenced: nothing may be sent any more
    POLICY = "policy"  # not idempotence's business: the general error policy decides


class InitOutcome(enum.Enum):
    DONE = "done"  # a producer id (or a new epoch of ours) is set: sending may go on
    RETRY = "retry"  # ask again after a backoff
    FATAL = "fatal"  # no producer id can be had: the producer can send nothing


class InitError(enum.Enum):
    FATAL = "fatal"  # retrying cannot help: no producer id can be had
    BUMP_REFUSED = "bump refused"  # this broker will not bump (KIP-360): ask for a fresh id instead
    RETRY = "retry"  # ask again after a backoff


# What an InitProducerId error means. A broker that will not bump: a fresh producer id resets the
# sequences just as well (as with brokers older than InitProducerId v3).
INIT_ERRORS = Meanings(
    "producer id (InitProducerId)",
    {
        ec.CLUSTER_AUTHORIZATION_FAILED: InitError.FATAL,
        INVALID_PRODUCER_EPOCH: InitError.FATAL,
        ec.INVALID_TRANSACTION_TIMEOUT: InitError.FATAL,
        ec.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: InitError.FATAL,
        PRODUCER_FENCED: InitError.FATAL,
        KafkaError._UNSUPPORTED_FEATURE: InitError.FATAL,  # the broker has no InitProducerId
        ec.UNKNOWN_SERVER_ERROR: InitError.BUMP_REFUSED,  # Tansu answers every bump so
        ec.UNSUPPORTED_VERSION: InitError.BUMP_REFUSED,
        ec.INVALID_REQUEST: InitError.BUMP_REFUSED,
        ec.INVALID_PRODUCER_ID_MAPPING: InitError.BUMP_REFUSED,  # librdkafka's mock: it bumps transactional ids only
        UNKNOWN_PRODUCER_ID: InitError.BUMP_REFUSED,  # the broker forgot the id we want to bump
    },
    InitError.RETRY,
)


class Idempotence:
    def __init__(self) -> None:
        self.producer_id = -1
        self.epoch = -1
        self.assignments = 0  # ids or epochs given so far (statistics' epoch_cnt)
        self._next: dict[TopicPartitionKey, int] = {}
        self._out: set[TopicPartitionKey] = set()  # partitions with their one batch in flight
        self.bump_wanted = False  # sequences must restart under a new epoch before anything is sent
        self._bump_refused = False  # the broker will not bump: ask for a fresh producer id instead
        self._bump_ours = False  # every reason for the bump due is a sequence we gave up on
        # Set for a transactional producer (KIP-360): a broken sequence only costs the open
        # transaction (abort, new epoch), never the producer.
        self.transactional = False

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    @property
    def needs_init(self) -> bool:
        """An InitProducerId is due (first id, or a bump) before any batch may leave."""
        return not self.has_producer_id or self.bump_wanted

    @property
    def bumping(self) -> bool:
        """The next InitProducerId (v3+) asks for a new epoch of our own id."""
        return self.bump_wanted and self.has_producer_id and not self._bump_refused

    def request_bump(self, *, ours: bool = False) -> None:
        """A sequence was lost (a batch failed or timed out after it left, or the broker forgot
        us): nothing more is sent until everything in flight is answered and the epoch is bumped.
        ``ours``: we gave up on the sequence (the broker still knows our id and epoch)."""
        if self.has_producer_id:
            self._bump_ours = ours and (self._bump_ours or not self.bump_wanted)
            self.bump_wanted = True

    def bump_locally(self) -> bool:
        """Bump the epoch without asking a broker, when that is enough (as librdkafka's idempotent
        producer): not transactional, and only sequences we gave up on are lost, so the brokers
        still know our id; a broker takes a higher epoch of a known id from sequence 0 on. Asking
        instead waits behind whatever the broker still holds on that connection (a Produce in
        purgatory while the ISR shrinks). True when done (sequences restart at 0)."""
        if not (self.bump_wanted and self._bump_ours and not self.transactional and self.has_producer_id):
            return False
        if self.epoch >= MAX_EPOCH:
            return False  # no higher epoch: a fresh id
        self.set_producer_id(self.producer_id, self.epoch + 1)
        return True

    def init_ids(self, version: int) -> tuple[int, int]:
        """The (producer id, epoch) an InitProducerId of ``version`` carries: ours when bumping
        (v3+, KIP-360), else -1/-1 (a fresh id)."""
        if self.bumping and version >= 3:
            return self.producer_id, self.epoch
        return -1, -1

    def init_answered(self, code: int, producer_id: int = -1, epoch: int = -1) -> InitOutcome:
        """What an InitProducerId answer means; on success the new id/epoch is set."""
        if code == 0:
            self.set_producer_id(producer_id, epoch)
            return InitOutcome.DONE
        meaning = INIT_ERRORS.meaning(code)
        if meaning is InitError.FATAL:
            return InitOutcome.FATAL
        if self.bump_wanted and meaning is InitError.BUMP_REFUSED:
            self._bump_refused = True  # the next request asks for a fresh id
        return InitOutcome.RETRY

    def set_producer_id(self, producer_id: int, epoch: int) -> None:
        """A new id or epoch: every partition's sequence starts again at 0."""
        self.producer_id = producer_id
        self.epoch = epoch
        self.assignments += 1
        self._next.clear()
        self.bump_wanted = False

    # --- sending -------------------------------------------------------------------------------

    def may_send(self, tp: TopicPartitionKey) -> bool:
        """Whether ``tp``'s next batch may leave: only once the one before it has been answered."""
        return tp not in self._out

    def stamp(self, batch: ProducerBatch) -> tuple[int, int, int]:
        """(producer id, epoch, base sequence) for a batch about to leave; a retry keeps its own."""
        tp = (batch.topic, batch.partition)
        if batch.base_sequence < 0:
            batch.base_sequence = self._next.get(tp, 0)
            self._next[tp] = (batch.base_sequence + batch.count) % SEQUENCE_MODULUS
        return self.producer_id, self.epoch, batch.base_sequence

    def sent(self, batch: ProducerBatch) -> None:
        self._out.add((batch.topic, batch.partition))

    def answered(self, batch: ProducerBatch) -> None:
        self._out.discard((batch.topic, batch.partition))

    def anything_in_flight(self) -> bool:
        return bool(self._out)

    # --- errors --------------------------------------------------------------------------------

    def verdict(self, batch: ProducerBatch, code: int) -> IdempotenceVerdict:
        """What an error on ``batch`` means, before the general policy is asked."""
        if code == DUPLICATE_SEQUENCE_NUMBER:
            return IdempotenceVerdict.DELIVERED
        if code in (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED):
            if self.transactional:
                return IdempotenceVerdict.FATAL  # another producer took our transactional id
            # Without a transactional id nobody can fence us: the broker does not know the id we
            # hold (an answer we should not have trusted). A fresh id restarts every sequence.
            self._bump_refused = True
            return IdempotenceVerdict.BUMP_EPOCH
        if code == OUT_OF_ORDER_SEQUENCE_NUMBER:
            # Before a due bump (it closes the sequence hole) this is expected; otherwise, with
            # nothing of the partition in flight before this batch, the broker lost data we were
            # told it had.
            if self.bump_wanted:
                return IdempotenceVerdict.REQUEUE
            return IdempotenceVerdict.BUMP_EPOCH if self.transactional else IdempotenceVerdict.FATAL
        if code == UNKNOWN_PRODUCER_ID:
            return IdempotenceVerdict.BUMP_EPOCH
        return IdempotenceVerdict.POLICY

    def restamp(self, batches: Iterable[ProducerBatch]) -> None:
        """After an epoch bump: give unanswered batches new sequences from 0, in the order given
        (each partition's queue order, which is their old sequence order)."""
        for batch in batches:
            batch.base_sequence = -1
            self.stamp(batch)

    def forget_in_flight(self, batches: Iterable[ProducerBatch]) -> None:
        """Batches given up on while in flight (purged): their answers will be ignored and their
        sequences may or may not be in the log, so the epoch must be bumped."""
        for batch in batches:
            self.answered(batch)
        self.request_bump(ours=True)
