"""Issue 4, scenario 10: the transactional producer under injected faults.

On librdkafka's mock cluster (which checks transactional sequences and writes COMMIT/ABORT markers),
each fault is injected with the mock's error stacks, broker down/up and pinned coordinators; every
outcome is judged from the raw log and its markers (kafka-python decodes it), not from a
read_committed consumer (neither peer hides aborted data). Offsets of a transaction are judged on
Tansu, which stores them at commit (the mock never stores TxnOffsetCommit offsets).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import confluent_kafka as ck
import pytest

from kafkawire import KafkaError, KafkaException, Producer, TopicPartition
from kafkawire.base.model import ConsumerGroupMetadata
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import (
    ADD_PARTITIONS_TO_TXN,
    END_TXN,
    FIND_COORDINATOR,
    INIT_PRODUCER_ID,
    PRODUCE,
    TXN_OFFSET_COMMIT,
)
from tests.harness.judge import judge_config, unique_name
from tests.harness.mock_cluster import MockCluster
from tests.harness.proxy import KafkaProxy
from tests.harness.raw_log import LogBatch, committed_view, raw_log

pytestmark = pytest.mark.broker

WAIT = 30.0
HANG = 10.0  # a call that should fail fast is given this long: a hang shows as _TIMED_OUT


def error_of(exc: pytest.ExceptionInfo[KafkaException]) -> KafkaError:
    err = exc.value.args[0]
    assert isinstance(err, KafkaError)
    return err


Make = Callable[..., Producer]


@pytest.fixture
def make(mock_cluster: MockCluster) -> Iterator[Make]:
    made: list[Producer] = []

    def producer(transactional_id: str, **conf: object) -> Producer:
        p = Producer(
            {
                "bootstrap.servers": mock_cluster.bootstraps,
                "transactional.id": transactional_id,
                "linger.ms": 5,
                **conf,
            }
        )
        made.append(p)
        return p

    yield producer
    for p in made:
        try:
            p.close(5)
        except KafkaException:
            pass


def topic_on(mock_cluster: MockCluster, name: str, leaders: list[int]) -> str:
    """A topic whose partition ``i`` is led by broker ``leaders[i]``."""
    mock_cluster.create_topic(name, partitions=len(leaders), replication=1)
    for partition, broker in enumerate(leaders):
        mock_cluster.partition_set_leader(name, partition, broker)
    return name


def markers(log: list[LogBatch]) -> list[bool]:
    return [b.commit for b in log if b.control]


def wait_in_flight(p: Producer) -> None:
    while not p._engine.sender.in_flight:  # until a Produce is on the wire
        p.poll(0.005)


# --- (a) EndTxn answers that only mean "ask again" -------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.CONCURRENT_TRANSACTIONS,
    ],
    ids=["COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "CONCURRENT_TRANSACTIONS"],
)
def test_end_txn_retriable_errors_still_commit(mock_cluster: MockCluster, make: Make, code: int) -> None:
    topic = topic_on(mock_cluster, unique_name("endtxn"), [1])
    p = make(unique_name("tid"))
    p.init_transactions(WAIT)
    p.begin_transaction()
    values = [b"v-%d" % i for i in range(5)]
    for v in values:
        p.produce(topic, v, partition=0)
    p.flush(WAIT)
    mock_cluster.start_request_tracking()
    mock_cluster.push_request_errors(END_TXN.key, [code, code])
    p.commit_transaction(WAIT)
    end_txns = mock_cluster.requests_of(END_TXN.key)
    assert len(end_txns) == 3, "two answered with the error, the third committed"
    if code in (KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.NOT_COORDINATOR):
        finds = [r.timestamp_us for r in mock_cluster.requests_of(FIND_COORDINATOR.key)]
        assert any(end_txns[0].timestamp_us < t < end_txns[-1].timestamp_us for t in finds), (
            "coordinator looked up again"
        )
    log = raw_log(mock_cluster.bootstraps, topic)
    assert markers(log) == [True]
    assert committed_view(log) == values
    p.begin_transaction()  # the producer goes on
    p.produce(topic, b"next", partition=0)
    p.commit_transaction(WAIT)
    assert committed_view(raw_log(mock_cluster.bootstraps, topic)) == [*values, b"next"]


# --- (b) abortable errors: abort, then the next transaction commits --------------------------------


@pytest.mark.parametrize(
    "api_key,code",
    [
        (PRODUCE.key, KafkaError.TRANSACTION_ABORTABLE),
        (PRODUCE.key, KafkaError.UNKNOWN_PRODUCER_ID),
        (ADD_PARTITIONS_TO_TXN.key, KafkaError.TRANSACTION_ABORTABLE),
        (ADD_PARTITIONS_TO_TXN.key, KafkaError.UNKNOWN_PRODUCER_ID),
    ],
    ids=[
        "Produce-TRANSACTION_ABORTABLE",
        "Produce-UNKNOWN_PRODUCER_ID",
        "AddPartitions-TRANSACTION_ABORTABLE",
        "AddPartitions-UNKNOWN_PRODUCER_ID",
    ],
)
def test_abortable_error_then_the_next_transaction_commits(
    mock_cluster: MockCluster, make: Make, api_key: int, code: int
) -> None:
    topic = topic_on(mock_cluster, unique_name("abortable"), [1, 2])
    p = make(unique_name("tid"))
    p.init_transactions(WAIT)
    p.begin_transaction()
    p.produce(topic, b"committed-before", partition=1)
    p.commit_transaction(WAIT)

    reports: list[KafkaError | None] = []
    p.begin_transaction()
    p.produce(topic, b"kept-out-1", partition=1)  # a partition already written: no AddPartitions error for it
    p.flush(WAIT)
    mock_cluster.push_request_errors(api_key, [code])
    p.produce(topic, b"failed", partition=0, on_delivery=lambda err, msg: reports.append(err))
    with pytest.raises(KafkaException) as exc:
        p.commit_transaction(HANG)
    err = error_of(exc)
    assert err.code() == code and err.txn_requires_abort() and not err.fatal()
    assert [e.code() if e else None for e in reports] == [code]
    with pytest.raises(KafkaException) as exc:
        p.produce(topic, b"refused", partition=0)
    assert "abort_transaction" in error_of(exc).str()
    p.abort_transaction(WAIT)

    p.begin_transaction()
    p.produce(topic, b"next-0", partition=0)
    p.produce(topic, b"next-1", partition=1)
    p.commit_transaction(WAIT)
    log0, log1 = raw_log(mock_cluster.bootstraps, topic, 0), raw_log(mock_cluster.bootstraps, topic, 1)
    assert committed_view(log0) == [b"next-0"]
    assert committed_view(log1) == [b"committed-before", b"next-1"]
    assert markers(log1) == [True, False, True]
    if code == KafkaError.UNKNOWN_PRODUCER_ID:  # the broker forgot the producer: a new epoch (KIP-360)
        data1 = [b for b in log1 if not b.control]
        assert data1[-1].producer_epoch > data1[0].producer_epoch
        assert data1[-1].base_sequence == 0 and log0[0].base_sequence == 0


# --- (c) fenced: fatal, every later call fails ------------------------------------------------------


@pytest.mark.parametrize(
    "api_key,code",
    [
        (PRODUCE.key, KafkaError.PRODUCER_FENCED),
        (PRODUCE.key, KafkaError.INVALID_PRODUCER_EPOCH),
        (END_TXN.key, KafkaError.PRODUCER_FENCED),
        (END_TXN.key, KafkaError.INVALID_PRODUCER_EPOCH),
    ],
    ids=[
        "Produce-PRODUCER_FENCED",
        "Produce-INVALID_PRODUCER_EPOCH",
        "EndTxn-PRODUCER_FENCED",
        "EndTxn-INVALID_PRODUCER_EPOCH",
    ],
)
def test_fenced_is_fatal(mock_cluster: MockCluster, make: Make, api_key: int, code: int) -> None:
    topic = topic_on(mock_cluster, unique_name("fenced"), [1])
    fatal_reports: list[KafkaError] = []
    p = make(unique_name("tid"), error_cb=fatal_reports.append)
    p.init_transactions(WAIT)
    p.begin_transaction()
    p.produce(topic, b"zombie", partition=0)
    mock_cluster.push_request_errors(api_key, [code])
    with pytest.raises(KafkaException) as exc:
        p.commit_transaction(HANG)
    err = error_of(exc)
    code = KafkaError._FENCED  # either broker code: one code to the application, as librdkafka's
    assert err.fatal() and err.code() == code and not err.txn_requires_abort()
    for call in (
        lambda: p.abort_transaction(HANG),
        p.begin_transaction,
        lambda: p.commit_transaction(HANG),
        lambda: p.init_transactions(HANG),
    ):
        with pytest.raises(KafkaException) as exc:
            call()
        assert error_of(exc).fatal() and error_of(exc).code() == code
    with pytest.raises(KafkaException) as exc:  # librdkafka's producev: _FATAL, the cause in error_cb
        p.produce(topic, b"later", partition=0)
    assert error_of(exc).code() == KafkaError._FATAL
    p.poll(0)
    assert [e.code() for e in fatal_reports if e.fatal()] == [code], "error_cb hears the fatal error, once"
    assert committed_view(raw_log(mock_cluster.bootstraps, topic)) == []


# --- (d) a record times out locally inside a transaction --------------------------------------------


def test_local_message_timeout_makes_commit_fail_and_only_abort_allowed(mock_cluster: MockCluster, make: Make) -> None:
    topic = topic_on(mock_cluster, unique_name("msgtimeout"), [1])
    tid = unique_name("tid")
    mock_cluster.coordinator_set("transaction", tid, 2)  # the coordinator stays up
    # Room for "next" to be delivered on a loaded host once the leader is back: a 3 s timeout, and
    # reconnection attempts that stay 200 ms apart however long the leader was down.
    p = make(tid, **{"message.timeout.ms": 3000, "reconnect.backoff.max.ms": 200})
    p.init_transactions(WAIT)
    p.begin_transaction()
    p.produce(topic, b"first", partition=0)
    p.flush(WAIT)  # in the log, inside the transaction
    reports: list[KafkaError | None] = []
    mock_cluster.broker_set_down(1)  # the partition's leader
    try:
        p.produce(topic, b"lost", partition=0, on_delivery=lambda err, msg: reports.append(err))
        with pytest.raises(KafkaException) as exc:
            p.commit_transaction(WAIT)
        err = error_of(exc)
        assert err.txn_requires_abort() and not err.fatal() and not err.retriable()
        assert err.code() == KafkaError._MSG_TIMED_OUT
        assert [e.code() if e else None for e in reports] == [KafkaError._MSG_TIMED_OUT]
        for call in (
            lambda: p.commit_transaction(HANG),
            p.begin_transaction,
            lambda: p.produce(topic, b"x", partition=0),
        ):
            with pytest.raises(KafkaException) as exc:
                call()
            assert error_of(exc).txn_requires_abort() and "abort_transaction" in error_of(exc).str()
    finally:
        mock_cluster.broker_set_up(1)
    p.abort_transaction(WAIT)
    p.begin_transaction()
    p.produce(topic, b"next", partition=0)
    p.commit_transaction(WAIT)
    log = raw_log(mock_cluster.bootstraps, topic)
    assert committed_view(log) == [b"next"]
    assert markers(log) == [False, True]


# --- (e) the coordinator goes down mid-transaction, then comes back ----------------------------------


@pytest.mark.parametrize("coordinator_leads", [False, True], ids=["coordinator-alone", "coordinator-is-a-leader"])
def test_coordinator_down_then_up_commit_holds_every_message_once(
    mock_cluster: MockCluster, make: Make, coordinator_leads: bool
) -> None:
    coordinator = 3
    topic = topic_on(mock_cluster, unique_name("coorddown"), [1, coordinator if coordinator_leads else 2])
    tid = unique_name("tid")
    mock_cluster.coordinator_set("transaction", tid, coordinator)
    p = make(tid)
    p.init_transactions(WAIT)
    p.begin_transaction()
    before = [b"before-%d" % i for i in range(10)]
    after = [b"after-%d" % i for i in range(10)]
    for v in before:
        p.produce(topic, v, partition=0)
    p.flush(WAIT)
    mock_cluster.broker_set_down(coordinator)
    up = threading.Timer(1.5, mock_cluster.broker_set_up, (coordinator,))
    up.start()
    try:
        for v in after:  # partition 1 is new to the transaction: AddPartitionsToTxn waits for the coordinator
            p.produce(topic, v, partition=1)
        p.commit_transaction(WAIT)
    finally:
        up.join()
    log0, log1 = raw_log(mock_cluster.bootstraps, topic, 0), raw_log(mock_cluster.bootstraps, topic, 1)
    assert committed_view(log0) == before
    assert committed_view(log1) == after
    assert markers(log0) == [True] and markers(log1) == [True]


# --- (f) TxnOffsetCommit ILLEGAL_GENERATION ----------------------------------------------------------


def test_txn_offset_commit_illegal_generation_is_surfaced(mock_cluster: MockCluster, make: Make) -> None:
    topic = topic_on(mock_cluster, unique_name("gen"), [1])
    group = unique_name("group")
    p = make(unique_name("tid"))
    p.init_transactions(WAIT)
    p.begin_transaction()
    p.produce(topic, b"out", partition=0)
    p.flush(WAIT)  # in the log: the abort must hide it
    mock_cluster.start_request_tracking()
    mock_cluster.push_request_errors(TXN_OFFSET_COMMIT.key, [KafkaError.ILLEGAL_GENERATION])
    with pytest.raises(KafkaException) as exc:
        p.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], ConsumerGroupMetadata(group, 3, "member-1"), WAIT)
    err = error_of(exc)
    assert err.code() == KafkaError.ILLEGAL_GENERATION and err.txn_requires_abort() and not err.fatal()
    assert len(mock_cluster.requests_of(TXN_OFFSET_COMMIT.key)) == 1, "not blindly retried"
    with pytest.raises(KafkaException) as exc:
        p.commit_transaction(HANG)
    assert error_of(exc).code() == KafkaError.ILLEGAL_GENERATION and error_of(exc).txn_requires_abort()
    p.abort_transaction(WAIT)
    p.begin_transaction()
    p.produce(topic, b"retried", partition=0)
    p.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], ConsumerGroupMetadata(group, 4, "member-1"), WAIT)
    p.commit_transaction(WAIT)
    log = raw_log(mock_cluster.bootstraps, topic)
    assert committed_view(log) == [b"retried"] and markers(log) == [False, True]


@pytest.mark.parametrize(
    "code",
    [KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.NOT_COORDINATOR, KafkaError.UNKNOWN_TOPIC_OR_PART],
    ids=["COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR", "UNKNOWN_TOPIC_OR_PARTITION"],
)
def test_txn_offset_commit_retriable_errors_are_retried(mock_cluster: MockCluster, make: Make, code: int) -> None:
    topic = topic_on(mock_cluster, unique_name("offretry"), [1])
    p = make(unique_name("tid"))
    p.init_transactions(WAIT)
    p.begin_transaction()
    p.produce(topic, b"out", partition=0)
    mock_cluster.start_request_tracking()
    mock_cluster.push_request_errors(TXN_OFFSET_COMMIT.key, [code, code])
    p.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], ConsumerGroupMetadata(unique_name("group")), WAIT)
    assert len(mock_cluster.requests_of(TXN_OFFSET_COMMIT.key)) == 3
    p.commit_transaction(WAIT)
    assert committed_view(raw_log(mock_cluster.bootstraps, topic)) == [b"out"]


def test_offsets_commit_with_the_transaction_only(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    """On Tansu, which stores a transaction's offsets at its commit: an aborted transaction (what a
    failed send_offsets_to_transaction leads to) leaves the group's offsets as they were."""
    topic, group = topic_name("offs"), unique_name("group")
    p = Producer({"bootstrap.servers": tansu.bootstrap, "transactional.id": unique_name("tid"), "linger.ms": 5})
    judge = ck.Consumer(judge_config(tansu.bootstrap, **{"group.id": group, "enable.auto.commit": False}))
    try:

        def committed() -> int:
            (tp,) = judge.committed([ck.TopicPartition(topic, 0)], timeout=WAIT)
            assert tp.error is None
            return int(tp.offset)

        p.init_transactions(WAIT)
        p.begin_transaction()
        p.produce(topic, b"aborted", partition=0)
        p.send_offsets_to_transaction([TopicPartition(topic, 0, 5)], ConsumerGroupMetadata(group), WAIT)
        p.abort_transaction(WAIT)
        assert committed() == ck.OFFSET_INVALID
        p.begin_transaction()
        p.produce(topic, b"committed", partition=0)
        p.send_offsets_to_transaction([TopicPartition(topic, 0, 9)], ConsumerGroupMetadata(group), WAIT)
        assert committed() == ck.OFFSET_INVALID  # not before the commit
        p.commit_transaction(WAIT)
        assert committed() == 9
        assert committed_view(raw_log(tansu.bootstrap, topic)) == [b"committed"]
    finally:
        judge.close()
        p.close(5)


# --- (g) a lost sequence inside a transaction ------------------------------------------------------


def test_a_lost_sequence_makes_the_transaction_abortable_instead_of_blocking(
    mock_cluster: MockCluster, make: Make
) -> None:
    """A batch fails for good after it left (its sequence is a hole): the batches behind it cannot be
    sent under this epoch. The commit fails with an abortable error (it does not wait for them), the
    abort takes a new epoch, and the next transaction commits."""
    topic = topic_on(mock_cluster, unique_name("seqloss"), [1])
    p = make(unique_name("tid"))
    p.init_transactions(WAIT)
    p.begin_transaction()
    p.produce(topic, b"warm", partition=0)
    p.commit_transaction(WAIT)
    reports: list[tuple[bytes, KafkaError | None]] = []

    def report(err: KafkaError | None, msg: ck.Message) -> None:
        reports.append((msg.value(), err))

    p.begin_transaction()
    # The first batch is refused for good, slowly, so the next ones are queued or in flight behind it.
    mock_cluster.push_request_error_rtts(1, PRODUCE.key, [(KafkaError.MSG_SIZE_TOO_LARGE, 500)])
    p.produce(topic, b"refused", partition=0, on_delivery=report)
    wait_in_flight(p)
    for i in range(3):
        p.produce(topic, b"behind-%d" % i, partition=0, on_delivery=report)
    mock_cluster.start_request_tracking()
    with pytest.raises(KafkaException) as exc:
        p.commit_transaction(HANG)
    err = error_of(exc)
    assert err.txn_requires_abort() and err.code() == KafkaError.MSG_SIZE_TOO_LARGE
    p.poll(0)
    assert [v for v, e in reports if e is None] == [], "nothing of the failed transaction was delivered"
    assert len(reports) == 4
    assert END_TXN.key not in mock_cluster.api_keys_seen(), "no commit was attempted"
    p.abort_transaction(WAIT)
    assert INIT_PRODUCER_ID.key in mock_cluster.api_keys_seen(), "a new epoch after the lost sequence"
    p.begin_transaction()
    p.produce(topic, b"next", partition=0)
    p.commit_transaction(WAIT)
    log = raw_log(mock_cluster.bootstraps, topic)
    assert committed_view(log) == [b"warm", b"next"]
    data = [b for b in log if not b.control]
    assert data[-1].producer_epoch == data[0].producer_epoch + 1 and data[-1].base_sequence == 0


def test_abort_after_purging_retried_batches_takes_a_new_epoch(mock_cluster: MockCluster, make: Make) -> None:
    """Batches waiting for a retry already carry sequences: purging them at abort leaves a hole, so
    the abort takes a new epoch and the next transaction commits (no OUT_OF_ORDER_SEQUENCE)."""
    topic = topic_on(mock_cluster, unique_name("purgeretry"), [1])
    p = make(unique_name("tid"), **{"retry.backoff.ms": 2000, "retry.backoff.max.ms": 2000})
    p.init_transactions(WAIT)
    p.begin_transaction()
    p.produce(topic, b"warm", partition=0)
    p.commit_transaction(WAIT)
    p.begin_transaction()
    mock_cluster.push_request_errors(PRODUCE.key, [KafkaError.NOT_ENOUGH_REPLICAS])  # retriable: waits 2 s
    mock_cluster.start_request_tracking()
    p.produce(topic, b"purged", partition=0)
    while not mock_cluster.requests_of(PRODUCE.key) or p._engine.sender.in_flight:  # answered: queued for its retry
        p.poll(0.005)
    with p._engine.lock:
        assert [b.base_sequence for b in p._engine.acc.stamped_batches()] == [1], "waiting for its retry, sequence kept"
    p.abort_transaction(WAIT)
    p.begin_transaction()
    p.produce(topic, b"next", partition=0)
    p.commit_transaction(WAIT)
    assert committed_view(raw_log(mock_cluster.bootstraps, topic)) == [b"warm", b"next"]


def test_abort_with_a_lost_response_takes_a_new_epoch_on_tansu() -> None:
    """On Tansu, which refuses KIP-360 bumps (UNKNOWN_SERVER_ERROR): the abort of a transaction whose
    Produce response was lost (its batch purged in flight, its sequence spent) gets a new epoch by
    asking without our id, and the next transaction commits; the lost batch, appended by the broker,
    stays hidden behind the ABORT marker."""
    with KafkaProxy() as proxy, TansuBroker(advertised_port=proxy.port) as broker:
        proxy.start(broker.host, broker.port)
        topic = unique_name("lostresp")
        p = Producer({"bootstrap.servers": proxy.address, "transactional.id": unique_name("tid"), "linger.ms": 5})
        try:
            p.init_transactions(WAIT)
            p.begin_transaction()
            p.produce(topic, b"warm", partition=0)
            p.commit_transaction(WAIT)
            p.begin_transaction()
            proxy.drop_response(PRODUCE.key)
            p.produce(topic, b"purged", partition=0)
            while not proxy.dropped:  # the broker appended it; the answer is lost
                p.poll(0.005)
            p.abort_transaction(WAIT)
            p.begin_transaction()
            p.produce(topic, b"next", partition=0)
            p.commit_transaction(WAIT)
        finally:
            p.close(5)
        log = raw_log(broker.bootstrap, topic)
        assert committed_view(log) == [b"warm", b"next"]
        assert b"purged" in [v for b in log for v in b.values], "the broker did append the purged batch"
        data = [b for b in log if not b.control]
        assert data[-1].base_sequence == 0 and (data[-1].producer_id, data[-1].producer_epoch) != (
            data[0].producer_id,
            data[0].producer_epoch,
        )
