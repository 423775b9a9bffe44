"""The producer's accumulator and error policy: sans-IO decisions, driven with explicit ``now``.

No broker, no threads, no clocks: every decision the accumulator makes (when a batch is ready,
when the sender must wake, what a retry or an expiry takes out) is checked against times we
pass in.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.core.accumulator import Accumulator, ProducerBatch
from kafkawire.core.kafka_error import LOCAL_ERRORS, KafkaError
from kafkawire.core.policy import Action
from kafkawire.core.policy.produce import PRODUCE
from kafkawire.producer.pending import PendingMessage
from kafkawire.protocol.error_table import BY_CODE
from kafkawire.records import HEADER_SIZE, LZ4, NONE, decode_batches

TP = ("orders", 0)
TP1 = ("orders", 1)


def acc(
    *,
    linger: float = 0.05,
    batch_size: int = 1_000_000,
    batch_num_messages: int = 10_000,
    compression: int = NONE,
) -> Accumulator:
    return Accumulator(
        batch_size=batch_size,
        batch_num_messages=batch_num_messages,
        linger=linger,
        compression=compression,
        compression_level=None,
    )


def msg(value: bytes = b"v", *, partition: int = 0, enqueued: float = 0.0, key: bytes | None = None) -> PendingMessage:
    return PendingMessage("orders", partition, key, value, None, 1_700_000_000_000, None, None, enqueued)


def values(batch: ProducerBatch, compression: int = NONE) -> list[bytes | None]:
    payload = batch.close(compression, None)
    [decoded] = decode_batches(payload)
    return [r.value for r in decoded.records]


# --- linger and readiness -------------------------------------------------------------------------


def test_first_record_of_a_partition_wakes_the_sender_and_later_ones_do_not() -> None:
    a = acc()
    assert a.append(msg(b"1"), 0.0) is True  # the linger clock starts: the sender must set a timer
    assert a.append(msg(b"2"), 0.001) is False
    assert a.append(msg(b"3", partition=1), 0.002) is True  # another partition, its own clock
    assert len(a) == 3


def test_batch_waits_for_linger_then_is_ready() -> None:
    a = acc(linger=0.05)
    a.append(msg(), 10.0)
    assert a.ready(10.0) == ([], pytest.approx(10.05))
    assert a.ready(10.049) == ([], pytest.approx(10.05))
    ready, wake = a.ready(10.05)
    assert ready == [TP]
    assert wake is None


def test_linger_zero_is_ready_at_once() -> None:
    a = acc(linger=0.0)
    a.append(msg(), 3.0)
    assert a.ready(3.0) == ([TP], None)


def test_next_wake_is_the_earliest_linger_deadline_across_partitions() -> None:
    a = acc(linger=1.0)
    a.append(msg(partition=1), 5.0)
    a.append(msg(partition=0), 4.5)
    assert a.ready(4.6) == ([], pytest.approx(5.5))
    ready, wake = a.ready(5.7)
    assert ready == [TP]
    assert wake == pytest.approx(6.0)


def test_batch_num_messages_fills_a_batch_before_linger() -> None:
    a = acc(linger=100.0, batch_num_messages=3)
    assert [a.append(msg(bytes([i])), 0.0) for i in range(3)] == [True, False, True]
    assert a.ready(0.0) == ([TP], None)
    a.append(msg(b"next"), 0.0)  # opens a second batch
    first = a.pop(TP)
    assert first is not None and len(first.messages) == 3
    assert values(first) == [b"\x00", b"\x01", b"\x02"]
    second = a.pop(TP)
    assert second is not None and [m.value for m in second.messages] == [b"next"]
    assert a.pop(TP) is None
    assert len(a) == 0


def test_batch_size_closes_a_batch_before_it_overflows() -> None:
    value = b"x" * 100
    a = acc(linger=100.0, batch_size=1000)
    wakes = [a.append(msg(value), 0.0) for _ in range(20)]
    batches = []
    while (b := a.pop(TP)) is not None:
        batches.append(b)
    assert len(batches) > 1
    assert sum(len(b.messages) for b in batches) == 20
    for b in batches[:-1]:
        assert b.builder.size <= 1000, "a batch grew past batch.size"
        assert len(b.close(NONE, None)) <= 1000
    assert sum(wakes) >= len(batches) - 1  # every batch that filled up woke the sender
    # Records stay in order across batches.
    assert [v for b in batches for v in values(b)] == [value] * 20


def test_a_full_batch_is_ready_before_linger_and_the_rest_waits() -> None:
    a = acc(linger=100.0, batch_num_messages=2)
    a.append(msg(b"1"), 0.0)
    a.append(msg(b"2"), 0.0)
    a.append(msg(b"3", partition=1), 0.0)
    ready, wake = a.ready(1.0)
    assert ready == [TP]
    assert wake == pytest.approx(100.0)


def test_a_record_larger_than_batch_size_travels_alone_and_at_once() -> None:
    a = acc(linger=100.0, batch_size=500)
    assert a.append(msg(b"y" * 2000), 0.0) is True
    assert a.ready(0.0) == ([TP], None), "no other record can join it: waiting for linger is pointless"
    a.append(msg(b"small"), 0.0)
    big = a.pop(TP)
    assert big is not None and [m.value for m in big.messages] == [b"y" * 2000]


def test_a_waiting_second_batch_makes_the_first_ready() -> None:
    a = acc(linger=100.0, batch_num_messages=1000, batch_size=300)
    for _ in range(4):
        a.append(msg(b"z" * 100), 0.0)
    ready, _ = a.ready(0.0)
    assert ready == [TP]


def test_flushing_makes_lingering_batches_ready_now() -> None:
    a = acc(linger=100.0)
    a.append(msg(), 0.0)
    assert a.ready(0.0)[0] == []
    a.flush_started()
    assert a.ready(0.0) == ([TP], None)
    a.flush_ended()
    assert a.ready(0.0)[0] == []


# --- retries ------------------------------------------------------------------------------------


def test_requeue_puts_the_batch_back_at_the_head_with_its_backoff() -> None:
    a = acc(linger=0.0)
    a.append(msg(b"first"), 0.0)
    sent = a.pop(TP)
    assert sent is not None
    payload = sent.close(LZ4, None)
    sent.attempts = 1
    a.append(msg(b"second"), 0.1)  # arrived while the first batch was in flight
    a.requeue(sent, 0.5)
    assert len(a) == 2
    # The retried batch blocks its partition until its backoff has passed.
    assert a.ready(0.2) == ([], pytest.approx(0.5))
    assert a.ready(0.5) == ([TP], None)
    again = a.pop(TP)
    assert again is sent
    assert again.close(LZ4, None) is payload, "a retried batch must be re-sent as the same bytes"
    assert values(again, LZ4) == [b"first"]
    later = a.pop(TP)
    assert later is not None and [m.value for m in later.messages] == [b"second"]


def test_records_never_join_a_closed_or_retried_batch() -> None:
    a = acc(linger=0.0)
    a.append(msg(b"a"), 0.0)
    sent = a.pop(TP)
    assert sent is not None
    sent.close(NONE, None)
    sent.attempts = 1
    a.requeue(sent, 0.0)
    a.append(msg(b"b"), 0.0)
    assert [m.value for m in sent.messages] == [b"a"]
    assert values(sent) == [b"a"]
    assert a.pop(TP) is sent
    nxt = a.pop(TP)
    assert nxt is not None and values(nxt) == [b"b"]


def test_flushing_does_not_skip_a_retry_backoff() -> None:
    a = acc(linger=0.0)
    a.append(msg(), 0.0)
    batch = a.pop(TP)
    assert batch is not None
    a.requeue(batch, 2.0)
    a.flush_started()
    assert a.ready(1.0) == ([], pytest.approx(2.0))


# --- expiry, purge ----------------------------------------------------------------------------


def test_take_expired_removes_only_batches_past_the_timeout() -> None:
    a = acc(linger=100.0, batch_num_messages=2)
    a.append(msg(b"old1", enqueued=0.0), 0.0)
    a.append(msg(b"old2", enqueued=0.0), 0.0)
    a.append(msg(b"new", enqueued=4.0), 4.0)
    a.append(msg(b"other", partition=1, enqueued=1.0), 1.0)
    assert a.oldest() == 0.0
    assert a.take_expired(4.9, 5.0) == []
    expired = a.take_expired(5.0, 5.0)
    assert [[m.value for m in b.messages] for b in expired] == [[b"old1", b"old2"]]
    assert len(a) == 2
    assert a.oldest() == 1.0
    expired = a.take_expired(9.0, 5.0)
    assert sorted(m.value or b"" for b in expired for m in b.messages) == [b"new", b"other"]
    assert len(a) == 0
    assert a.oldest() is None
    assert a.ready(9.0) == ([], None)


def test_records_of_a_batch_that_never_left_expire_one_by_one() -> None:
    """Issue 39: a partition stalled behind a dead leader gathers its records in one batch; each
    record expires on its own timeout (as librdkafka's), so those still in time go once it moves."""
    a = acc(linger=100.0)
    for t in (0.0, 1.0, 2.0, 3.0):
        a.append(msg(str(t).encode(), enqueued=t), t)
    assert a.take_expired(4.9, 5.0) == []
    [expired] = a.take_expired(6.5, 5.0)
    assert [m.value for m in expired.messages] == [b"0.0", b"1.0"]
    assert expired.attempts == 0 and expired.base_sequence == -1
    assert len(a) == 2
    assert a.oldest() == 2.0
    a.append(msg(b"4.0", enqueued=4.0), 4.0)  # the batch stays open: later records still join it
    batch = a.pop(TP)
    assert batch is not None
    assert values(batch) == [b"2.0", b"3.0", b"4.0"]
    assert batch.bytes == HEADER_SIZE + sum(m.size for m in batch.messages)


def test_a_backlog_that_never_left_goes_in_slices_of_its_span() -> None:
    """A request is given up at its oldest record's timeout: a batch gathered over a stall leaves
    with the records within ``span`` of its oldest only, the rest next."""
    a = acc(linger=100.0)
    for t in (0.0, 0.2, 0.5, 0.9, 1.4):
        a.append(msg(str(t).encode(), enqueued=t), t)
    first = a.pop(TP, span=0.5)
    assert first is not None and [m.value for m in first.messages] == [b"0.0", b"0.2", b"0.5"]
    assert len(a) == 2
    second = a.pop(TP, span=0.5)
    assert second is not None and [m.value for m in second.messages] == [b"0.9", b"1.4"]
    assert len(a) == 0 and a.pop(TP) is None


@pytest.mark.parametrize("seed", range(20))
def test_a_slice_holds_exactly_the_records_enqueued_by_its_end(seed: int) -> None:
    """Whatever the times (repeated ones too: a produce_batch() call enqueues its records at one
    instant), the slice is the records enqueued at or before the oldest's time plus ``span``."""
    rng = random.Random(seed)
    times = sorted(rng.choice([0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0]) for _ in range(rng.randint(1, 30)))
    span = rng.choice([0.0, 0.1, 0.3, 1.0, 5.0])
    a = acc(linger=100.0)
    for i, t in enumerate(times):
        a.append(msg(b"%d" % i, enqueued=t), t)
    first = a.pop(TP, span=span)
    assert first is not None
    assert [m.value for m in first.messages] == [b"%d" % i for i, t in enumerate(times) if t <= times[0] + span]


def test_a_batch_that_left_before_expires_whole() -> None:
    """A batch sent once carries a sequence and a payload: its records stay together."""
    a = acc(linger=100.0)
    for t in (0.0, 1.0, 2.0):
        a.append(msg(str(t).encode(), enqueued=t), t)
    batch = a.pop(TP)
    assert batch is not None
    batch.attempts = 1
    a.requeue(batch, 0.0)
    [expired] = a.take_expired(5.5, 5.0)
    assert expired is batch and len(expired.messages) == 3
    assert len(a) == 0


def test_take_if_removes_only_the_picked_waiting_batches() -> None:
    """After a new epoch the sender takes out the retried batches that may be in the log already."""
    a = acc(linger=100.0, batch_num_messages=1)
    for i in range(3):
        a.append(msg(b"%d" % i, enqueued=float(i)), float(i))
    a.append(msg(b"other", partition=1), 0.0)
    doubtful = a.take_if(lambda b: b.messages[0].value in (b"0", b"2"))
    assert [b.messages[0].value for b in doubtful] == [b"0", b"2"]
    assert len(a) == 2
    head = a.pop(TP)
    assert head is not None and head.messages[0].value == b"1"


def test_batches_put_back_without_sequences_go_again_oldest_first() -> None:
    """Three requests of one partition fail in turn at a leader change (acks=1, no idempotence):
    their batches go again in their first order, ahead of the newer ones (as librdkafka; putting
    each at the head sent them newest first: issue 53's acks=1 scenario wrote 34 records out of order)."""
    a = acc(linger=0.0, batch_num_messages=1)
    for i in range(5):
        a.append(msg(b"%d" % i, enqueued=float(i)), float(i))
    sent = [a.pop(TP) for _ in range(3)]
    for batch in sent:
        assert batch is not None
        a.requeue(batch, 0.0)
    order = []
    while (batch := a.pop(TP)) is not None:
        order.append(batch.messages[0].value)
    assert order == [b"0", b"1", b"2", b"3", b"4"]


def test_take_all_empties_everything() -> None:
    a = acc(linger=100.0)
    a.append(msg(b"1"), 0.0)
    a.append(msg(b"2", partition=1), 0.0)
    retried = ProducerBatch("orders", 2, 0.0)
    retried.messages.append(msg(b"3", partition=2))
    a.requeue(retried, 50.0)
    taken = a.take_all()
    assert sorted(m.value or b"" for b in taken for m in b.messages) == [b"1", b"2", b"3"]
    assert len(a) == 0
    assert a.ready(0.0) == ([], None)
    assert a.pop(TP) is None and a.pop(TP1) is None


# --- the error policy table -----------------------------------------------------------------------


LOCAL_CODES = {code for code, _, _ in LOCAL_ERRORS}


def retries(code: int) -> bool:
    return PRODUCE.action(code) in (Action.RETRY, Action.REFRESH_METADATA)


@pytest.mark.parametrize("code", sorted(PRODUCE.table))
def test_every_policy_code_is_a_known_broker_or_local_code(code: int) -> None:
    assert code in BY_CODE or code in LOCAL_CODES, f"{code} is neither a broker error nor a librdkafka local code"


def test_broker_codes_in_the_table_agree_with_the_broker_table_on_retrying() -> None:
    for code in PRODUCE.table:
        if code in BY_CODE:
            assert retries(code) == BY_CODE[code].retriable, BY_CODE[code].name


def test_the_policy_for_the_injected_errors_of_the_fault_tests() -> None:
    assert PRODUCE.action(KafkaError.NOT_LEADER_OR_FOLLOWER) is Action.REFRESH_METADATA
    assert retries(KafkaError.REQUEST_TIMED_OUT)
    assert retries(KafkaError.NOT_ENOUGH_REPLICAS)
    for permanent in (KafkaError.MESSAGE_TOO_LARGE, KafkaError.TOPIC_AUTHORIZATION_FAILED):
        assert not retries(permanent)
    for local in (KafkaError._TRANSPORT, KafkaError._TIMED_OUT):
        assert PRODUCE.action(local) is Action.REFRESH_METADATA
    for final in (KafkaError._MSG_TIMED_OUT, KafkaError._DESTROY, KafkaError._INVALID_ARG):
        assert not retries(final)


def test_codes_missing_from_the_table_follow_the_broker_table() -> None:
    missing_retriable = [e.code for e in BY_CODE.values() if e.retriable and e.code not in PRODUCE.table]
    missing_fatal = [e.code for e in BY_CODE.values() if not e.retriable and e.code not in PRODUCE.table]
    assert missing_retriable and missing_fatal
    assert all(retries(c) for c in missing_retriable)
    assert not any(retries(c) for c in missing_fatal)
    assert not retries(9999)  # a code from a newer broker
    assert not retries(KafkaError._PURGE_QUEUE)


# --- extend: append for a run of records ----------------------------------------------------------


def _layout(a: Accumulator) -> dict[tuple[str, int], list[tuple[list[int], int, bool]]]:
    return {tp: [([id(m) for m in b.messages], b.bytes, b.full) for b in q] for tp, q in a._queues.items()}


@settings(max_examples=300, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.integers(0, 2), st.lists(st.integers(0, 300), max_size=30)),  # (partition, value sizes)
        max_size=12,
    ),
    batch_size=st.integers(1, 2_000),
    batch_num_messages=st.integers(1, 12),
    pops=st.lists(st.integers(0, 2), max_size=3),
)
def test_extend_makes_the_batches_appending_one_by_one_makes(
    runs: list[tuple[int, list[int]]], batch_size: int, batch_num_messages: int, pops: list[int]
) -> None:
    one, many = (
        acc(batch_size=batch_size, batch_num_messages=batch_num_messages),
        acc(batch_size=batch_size, batch_num_messages=batch_num_messages),
    )
    for step, (partition, sizes) in enumerate(runs):
        msgs = [msg(b"x" * size, partition=partition) for size in sizes]
        woken = False
        for m in msgs:
            woken = one.append(m, float(step)) or woken
        assert many.extend("orders", partition, msgs, float(step)) is woken
        if step < len(pops):  # a batch leaves between runs: the next run must start a new one
            one.pop(("orders", pops[step]))
            many.pop(("orders", pops[step]))
        assert _layout(one) == _layout(many)
        assert len(one) == len(many)


# --- buffers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [NONE, LZ4])
def test_a_compressed_batch_gives_its_records_buffer_back_when_built(compression: int) -> None:
    """Compressed, a batch in flight needs its compressed bytes alone: the buffer its records were
    written in goes to the spares at once (the next batch writes over it; retries resend the same
    bytes). Uncompressed, that buffer is the batch itself, given back once delivered."""
    a = acc(compression=compression)
    for _ in range(200):
        a.append(msg(b"x" * 400), 0.0)
    batch = a.pop(TP)
    assert batch is not None
    batch.encode(a.spares)
    payload = batch.close(compression, None, spares=a.spares)
    if compression == NONE:
        assert len(a.spares) == 0
    else:
        spare = a.spares.take()
        assert spare is not None and spare is not payload and len(spare) >= 200 * 400
        spare[:] = b"\xee" * len(spare)  # the next batch writing over it changes nothing sent
        assert batch.close(compression, None, spares=a.spares) is payload  # a retry: the same bytes
    [decoded] = decode_batches(payload)
    assert [r.value for r in decoded.records] == [b"x" * 400] * 200
