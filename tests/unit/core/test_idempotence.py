"""The idempotent producer's bookkeeping, sans-IO: sequences, what may be sent, what errors mean.

Batches are built by hand and driven through `Idempotence` as the sender would (stamp, close,
sent, answered); the bytes a batch would carry are read back with kafka-python's record parser,
an independent decoder, so "a retry is byte-identical" and "a bump rewrites the header" are
checked on the wire format, not on our own fields.
"""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kafkawire.core.accumulator import ProducerBatch
from kafkawire.core.idempotence import (
    DUPLICATE_SEQUENCE_NUMBER,
    INVALID_PRODUCER_EPOCH,
    MAX_EPOCH,
    OUT_OF_ORDER_SEQUENCE_NUMBER,
    PRODUCER_FENCED,
    SEQUENCE_MODULUS,
    UNKNOWN_PRODUCER_ID,
    Idempotence,
    IdempotenceVerdict,
    InitOutcome,
)
from kafkawire.producer.pending import PendingMessage
from kafkawire.records import NONE

PID, EPOCH = 4242, 7
NOT_LEADER_OR_FOLLOWER = 6
UNKNOWN_SERVER_ERROR = -1
INVALID_PRODUCER_ID_MAPPING = 49
COORDINATOR_NOT_AVAILABLE = 15
CLUSTER_AUTHORIZATION_FAILED = 31


def batch(n: int = 1, *, partition: int = 0, topic: str = "t", first: int = 0) -> ProducerBatch:
    b = ProducerBatch(topic, partition, 0.0)
    for i in range(first, first + n):
        value = f"{topic}-{partition}-{i}".encode()
        b.builder.append(1_700_000_000_000 + i, None, value, ())
        b.messages.append(PendingMessage(topic, partition, None, value, None, 0, None, None, 0.0))
    return b


def idem() -> Idempotence:
    i = Idempotence()
    assert i.needs_init and i.init_ids(5) == (-1, -1)
    assert i.init_answered(0, PID, EPOCH) is InitOutcome.DONE
    assert not i.needs_init
    return i


def wire(i: Idempotence, b: ProducerBatch) -> bytes:
    """Stamp and close ``b`` as the sender does when it leaves."""
    return b.close(NONE, None, i.stamp(b))


def header(payload: bytes) -> tuple[int, int, int, int]:
    parsed = DefaultRecordBatch(payload)
    return parsed.producer_id, parsed.producer_epoch, parsed.base_sequence, len(list(parsed))


def send(i: Idempotence, b: ProducerBatch) -> bytes:
    payload = wire(i, b)
    i.sent(b)
    return payload


# --- sequences ------------------------------------------------------------------------------------


def test_base_sequences_follow_record_counts_per_partition() -> None:
    i = idem()
    a, b, c = batch(3), batch(2, first=3), batch(4, partition=1)
    assert header(send(i, a)) == (PID, EPOCH, 0, 3)
    assert header(send(i, b)) == (PID, EPOCH, 3, 2)
    assert header(send(i, c)) == (PID, EPOCH, 0, 4), "each partition counts from 0"
    assert header(send(i, batch(1, first=5))) == (PID, EPOCH, 5, 1)


def test_a_retried_batch_is_byte_identical() -> None:
    i = idem()
    first = batch(5)
    payload = send(i, first)
    send(i, batch(2, first=5))
    i.answered(first)  # e.g. its connection broke
    assert wire(i, first) == payload, "same base sequence, count and records"
    assert header(wire(i, batch(1, first=7)))[2] == 7, "a retry consumes no new sequence"


def test_sequences_wrap_from_2_31_minus_1_to_0() -> None:
    i = idem()
    huge = batch(1)
    huge.extra = SEQUENCE_MODULUS - 3 - len(huge.messages)  # a batch of 2^31-3 records (as Arrow rows count)
    assert i.stamp(huge)[2] == 0
    before_wrap = batch(5)
    assert header(wire(i, before_wrap))[2] == SEQUENCE_MODULUS - 3  # its records: 2^31-3 .. 2^31-1, 0, 1
    assert header(wire(i, batch(1)))[2] == 2


# --- what may be sent -----------------------------------------------------------------------------


def test_a_partition_has_one_batch_in_flight_at_a_time() -> None:
    """Whatever the broker checks, a later batch cannot be written ahead of one that may still
    fail and go again (librdkafka's mock took any sequence from an idempotent producer)."""
    i = idem()
    tp = ("t", 0)
    assert i.may_send(tp)
    first = batch(1)
    send(i, first)
    assert not i.may_send(tp), "the next batch waits for the answer"
    assert i.may_send(("t", 1)), "other partitions are not held"
    assert i.anything_in_flight()
    i.answered(first)  # delivered or failed alike: a failed one is back at the queue's head
    assert i.may_send(tp) and not i.anything_in_flight()


# --- verdicts -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "verdict"),
    [
        (DUPLICATE_SEQUENCE_NUMBER, IdempotenceVerdict.DELIVERED),
        (INVALID_PRODUCER_EPOCH, IdempotenceVerdict.BUMP_EPOCH),  # (non-transactional: see the test below)
        (PRODUCER_FENCED, IdempotenceVerdict.BUMP_EPOCH),
        (UNKNOWN_PRODUCER_ID, IdempotenceVerdict.BUMP_EPOCH),
        (NOT_LEADER_OR_FOLLOWER, IdempotenceVerdict.POLICY),
        (-195, IdempotenceVerdict.POLICY),  # _TRANSPORT
    ],
)
def test_verdict_of_each_idempotence_error(code: int, verdict: IdempotenceVerdict) -> None:
    i = idem()
    b = batch(1)
    send(i, b)
    assert i.verdict(b, code) is verdict


@pytest.mark.parametrize("code", [INVALID_PRODUCER_EPOCH, PRODUCER_FENCED])
def test_fenced_without_a_transactional_id_takes_a_fresh_producer_id(code: int) -> None:
    """Issue 13: nobody can fence a producer without a transactional id, so these codes mean the
    broker does not know the id we hold (a mutated InitProducerId answer): a fresh id, not fatal."""
    i = idem()
    b = batch(1)
    send(i, b)
    assert i.verdict(b, code) is IdempotenceVerdict.BUMP_EPOCH
    i.request_bump()
    assert i.needs_init and i.init_ids(5) == (-1, -1)  # a fresh id, not a bump of the bad one
    i.transactional = True
    assert i.verdict(b, code) is IdempotenceVerdict.FATAL


def test_out_of_order_on_a_partitions_only_batch_in_flight_is_fatal() -> None:
    """Nothing of the partition was in flight before it: the broker lost data it acknowledged."""
    i = idem()
    oldest = batch(1)
    send(i, oldest)
    assert i.verdict(oldest, OUT_OF_ORDER_SEQUENCE_NUMBER) is IdempotenceVerdict.FATAL


def test_out_of_order_on_the_oldest_batch_of_a_transactional_producer_costs_the_transaction_only() -> None:
    """KIP-360: a transactional producer fails the batch, aborts, and takes a new epoch."""
    i = idem()
    i.transactional = True
    oldest = batch(1)
    send(i, oldest)
    assert i.verdict(oldest, OUT_OF_ORDER_SEQUENCE_NUMBER) is IdempotenceVerdict.BUMP_EPOCH
    assert i.verdict(oldest, PRODUCER_FENCED) is IdempotenceVerdict.FATAL


def test_out_of_order_while_a_bump_is_due_is_requeued() -> None:
    i = idem()
    b = batch(1)
    send(i, b)
    i.request_bump()  # e.g. an earlier batch timed out after it left: a sequence hole
    assert i.verdict(b, OUT_OF_ORDER_SEQUENCE_NUMBER) is IdempotenceVerdict.REQUEUE


# --- producer id, bumps and restamping ------------------------------------------------------------


def test_bump_asks_with_the_current_id_and_epoch_from_v3_only() -> None:
    i = idem()
    i.request_bump()
    assert i.needs_init
    assert i.init_ids(3) == (PID, EPOCH)
    assert i.init_ids(5) == (PID, EPOCH)
    assert i.init_ids(2) == (-1, -1), "brokers before v3 cannot bump: a fresh id instead"


def test_bumping_says_whether_the_next_init_carries_our_id() -> None:
    i = idem()
    assert not i.bumping
    i.request_bump()
    assert i.bumping
    i.init_answered(UNKNOWN_SERVER_ERROR)  # refused: a fresh id is asked for instead
    assert not i.bumping and i.needs_init


def test_a_bump_before_any_producer_id_is_no_bump() -> None:
    i = Idempotence()
    i.request_bump()
    assert not i.bump_wanted and i.init_ids(5) == (-1, -1)


def test_after_a_bump_unanswered_batches_get_new_sequences_from_0_in_order() -> None:
    i = idem()
    a, b = batch(3), batch(2, first=3)
    old_a, old_b = send(i, a), send(i, b)
    untouched = batch(4, partition=1)
    i.answered(a)
    i.answered(b)
    assert i.verdict(a, UNKNOWN_PRODUCER_ID) is IdempotenceVerdict.BUMP_EPOCH
    i.request_bump()
    assert i.init_answered(0, PID, EPOCH + 1) is InitOutcome.DONE
    assert not i.needs_init
    i.restamp([a, b])
    new_a, new_b = wire(i, a), wire(i, b)
    assert header(new_a) == (PID, EPOCH + 1, 0, 3)
    assert header(new_b) == (PID, EPOCH + 1, 3, 2)
    # Only the header changed: the records are the same bytes (records start at offset 61).
    assert new_a[61:] == old_a[61:] and new_b[61:] == old_b[61:]
    assert header(wire(i, untouched)) == (PID, EPOCH + 1, 0, 4)
    assert header(wire(i, batch(1, first=5)))[2] == 5


@pytest.mark.parametrize("refusal", [UNKNOWN_SERVER_ERROR, INVALID_PRODUCER_ID_MAPPING, UNKNOWN_PRODUCER_ID])
def test_a_refused_bump_falls_back_on_a_fresh_producer_id(refusal: int) -> None:
    i = idem()
    i.request_bump()
    assert i.init_answered(refusal) is InitOutcome.RETRY
    assert i.needs_init and i.init_ids(5) == (-1, -1)
    assert i.init_answered(0, PID + 1, 0) is InitOutcome.DONE
    assert (i.producer_id, i.epoch) == (PID + 1, 0) and not i.needs_init


def test_init_producer_id_errors_retry_or_are_fatal() -> None:
    i = Idempotence()
    assert i.init_answered(COORDINATOR_NOT_AVAILABLE) is InitOutcome.RETRY
    assert i.init_answered(UNKNOWN_SERVER_ERROR) is InitOutcome.RETRY
    assert i.init_ids(5) == (-1, -1)
    assert i.init_answered(CLUSTER_AUTHORIZATION_FAILED) is InitOutcome.FATAL
    assert i.init_answered(PRODUCER_FENCED) is InitOutcome.FATAL
    assert not i.has_producer_id


def test_purged_in_flight_batches_are_forgotten_and_force_a_bump() -> None:
    i = idem()
    a, b = batch(1), batch(1, partition=1)
    send(i, a)
    send(i, b)
    i.forget_in_flight([a, b])
    assert not i.anything_in_flight()
    assert i.bump_wanted and i.needs_init


def test_a_sequence_we_gave_up_on_is_mended_by_a_local_epoch_bump() -> None:
    """Issue 39, as librdkafka's idempotent producer: a batch given up after it left costs an epoch
    bumped here, sequences from 0, without an InitProducerId (which would wait behind whatever the
    broker still holds on that connection)."""
    idem = Idempotence()
    idem.set_producer_id(7, 3)
    idem.stamp(batch(5))
    idem.request_bump(ours=True)
    assert idem.needs_init
    assert idem.bump_locally()
    assert (idem.producer_id, idem.epoch, idem.needs_init) == (7, 4, False)
    assert idem.stamp(batch(1)) == (7, 4, 0)


@pytest.mark.parametrize("case", ["broker forgot us", "transactional", "last epoch"])
def test_a_bump_a_broker_must_grant_is_not_done_locally(case: str) -> None:
    idem = Idempotence()
    idem.set_producer_id(7, MAX_EPOCH if case == "last epoch" else 3)
    idem.transactional = case == "transactional"
    idem.request_bump(ours=True)
    if case == "broker forgot us":
        idem.request_bump()  # UNKNOWN_PRODUCER_ID: the broker must hand out the id
    assert not idem.bump_locally()
    assert idem.needs_init and idem.epoch == (MAX_EPOCH if case == "last epoch" else 3)
