"""consumer/fetch_answer.py's AnswerReader on real Fetch answers, without the fetch engine around it.

librdkafka's mock cluster (in this process) holds what confluent-kafka produced; our `Client` sends
it the Fetch a fetch table plans, and the answer goes through the reader on the IO thread, as the
engine hands it over: records reach the table in order, a partition repositioned meanwhile keeps
its new place, an offset past the log resets per auto.offset.reset, a moved leader is forgotten
and backed off, and records whose checksum fails are an event, read again from the same offset."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import confluent_kafka
import pytest

from kafkawire.client.network_client import Client
from kafkawire.consumer.decode import offset_at
from kafkawire.consumer.fetch_answer import AnswerReader, Wanted
from kafkawire.core.fetch_positions import FetchTable
from kafkawire.core.fetch_rows import AWAITING_OFFSET, OFFSET_BEGINNING, FetchEvent, FetchLimits
from kafkawire.core.fetch_session import FetchSession, answered_partitions, partition_share, session_fields
from kafkawire.core.kafka_error import KafkaError
from kafkawire.protocol.apis import FETCH
from kafkawire.protocol.codec import Struct
from tests.harness.mock_cluster import MockCluster

TOPIC = "answers"
# Partition 0 gets two batches (one flush each), partition 1 one.
BATCHES = {0: [[b"a0", b"a1", b"a2"], [b"a3", b"a4"]], 1: [[b"b0", b"b1"]]}
NOT_LEADER_OR_FOLLOWER = 6


@pytest.fixture(scope="module")
def peer() -> Iterator[tuple[MockCluster, Client]]:
    with MockCluster(1) as mock:
        mock.create_topic(TOPIC, partitions=len(BATCHES))
        # (a long linger: each batch leaves whole at its flush; with none, a loaded host split them)
        producer = confluent_kafka.Producer({"bootstrap.servers": mock.bootstraps, "linger.ms": 10_000})
        for partition, batches in BATCHES.items():
            for batch in batches:
                for value in batch:
                    producer.produce(TOPIC, value, partition=partition)
                assert producer.flush(10) == 0
        with Client({"bootstrap.servers": mock.bootstraps}) as client:
            client.refresh_metadata([TOPIC], timeout=10).result(15)
            yield mock, client


class Reading:
    """A fetch table and its reader, fetching as the engine does: plan, ask, read the answer on the IO thread."""

    def __init__(self, client: Client, reader: dict[str, Any] | None = None, **limits: Any) -> None:
        self.client = client
        self.table = FetchTable(FetchLimits(**limits), offset_at)
        self.lock = threading.Lock()
        self.reader = AnswerReader(
            client, self.table, self.lock, check_crcs=True, preferred_ttl=300.0, **(reader or {})
        )

    def plan(self) -> list[tuple[int, int, list[Wanted]]]:
        def leader_of(key: tuple[str, int]) -> int | None:
            broker = self.client.metadata.leader_for(*key)
            return None if broker is None else broker.node_id

        with self.lock:
            plan, leaderless = self.table.fetch_plan(self.client.engine.now(), leader_of, ())
        assert not leaderless
        return [
            (
                node,
                max_bytes,
                [(p, p.generation, p.fetch_offset, partition_share(max_bytes, len(parts))) for p in parts],
            )
            for node, (max_bytes, parts) in plan.items()
        ]

    def fetch(self, node: int, max_bytes: int, wanted: list[Wanted], damage: bool = False) -> tuple[bool, bool]:
        """One Fetch of ``wanted`` to ``node`` and its answer through the reader: (new, stale).
        With ``damage``, one byte of each partition's records is changed before the reader sees them."""
        outcome: Future[tuple[bool, bool]] = Future()
        session = FetchSession()

        def body(version: int) -> dict[str, Any]:
            sent = session.request([(p.key, offset, size) for p, _g, offset, size in wanted], version)
            fields = session_fields(sent, lambda _name: None)
            return {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes, "isolation_level": 0, **fields}

        def done(response: Struct | None, error: KafkaError | None) -> None:
            try:
                assert error is None and response is not None, error
                answers = answered_partitions(response, {})
                if damage:
                    for data in answers.values():
                        if data.records:
                            records = bytearray(data.records)
                            records[-1] ^= 0xFF  # the last record's last byte: under the batch's CRC
                            data.records = bytes(records)
                outcome.set_result(self.reader.answered(node, max_bytes, wanted, answers, None, False, None))
            except BaseException as exc:  # (raised on the IO thread: handed to the test)
                outcome.set_exception(exc)

        self.client.request_io(FETCH, body, done, node=node, timeout=10, max_version=12)
        return outcome.result(20)

    def fetch_all(self, **kw: Any) -> tuple[bool, bool]:
        (node, max_bytes, wanted), *more = self.plan()
        assert not more  # one broker
        return self.fetch(node, max_bytes, wanted, **kw)

    def taken(self) -> list[Any]:
        with self.lock:
            return [item for _part, _batch, items in self.table.take(1000) for item in _listed(items)]


def _listed(items: Any) -> list[Any]:
    return [items] if isinstance(items, FetchEvent) else list(items)


def test_records_reach_the_table_in_order_and_an_answer_at_the_end_adds_none(peer: tuple[MockCluster, Client]) -> None:
    _mock, client = peer
    reading = Reading(client)
    reading.table.assign((TOPIC, 0), 0)
    reading.table.assign((TOPIC, 1), 1)
    assert reading.fetch_all() == (True, False)
    got = [(m.partition(), m.offset(), m.value()) for m in reading.taken()]
    # (librdkafka's mock answers one batch per partition per Fetch: partition 0's second comes next)
    assert sorted(got) == [(0, 0, b"a0"), (0, 1, b"a1"), (0, 2, b"a2"), (1, 1, b"b1")]
    assert reading.table.position((TOPIC, 0)) == 3 and reading.table.position((TOPIC, 1)) == 2
    assert reading.fetch_all() == (True, False)
    assert [(m.partition(), m.offset(), m.value()) for m in reading.taken()] == [(0, 3, b"a3"), (0, 4, b"a4")]
    reading.fetch_all()  # at the end of both logs
    assert reading.taken() == []
    assert reading.table.position((TOPIC, 0)) == 5 and reading.table.position((TOPIC, 1)) == 2


def test_the_first_partitions_can_be_taken_while_the_rest_of_the_answer_is_decoded(
    peer: tuple[MockCluster, Client],
) -> None:
    _mock, client = peer
    pieces: list[list[tuple[int, int, bytes]]] = []
    # (a piece of at least 3 records: partition 0's first batch is one, partition 1's record the last)
    reading = Reading(client, {"handover": 3, "on_piece": lambda: pieces.append(_seen(reading.taken()))})
    reading.table.assign((TOPIC, 0), 0)
    reading.table.assign((TOPIC, 1), 1)
    assert reading.fetch_all() == (True, False)
    assert pieces == [[(0, 0, b"a0"), (0, 1, b"a1"), (0, 2, b"a2")]]  # taken before partition 1 was decoded
    assert _seen(reading.taken()) == [(1, 1, b"b1")]
    assert reading.fetch_all() == (True, False)  # partition 0's second batch: 2 records, one piece, untold
    assert pieces == [[(0, 0, b"a0"), (0, 1, b"a1"), (0, 2, b"a2")]]
    assert _seen(reading.taken()) == [(0, 3, b"a3"), (0, 4, b"a4")]


def _seen(messages: list[Any]) -> list[tuple[int, int, bytes]]:
    return [(m.partition(), m.offset(), m.value()) for m in messages]


def test_a_partition_repositioned_before_its_answer_keeps_its_new_place(peer: tuple[MockCluster, Client]) -> None:
    _mock, client = peer
    reading = Reading(client)
    reading.table.assign((TOPIC, 0), 0)
    [(node, max_bytes, wanted)] = reading.plan()
    reading.table.seek((TOPIC, 0), 3)  # (the application's seek while the Fetch at 0 is out)
    assert reading.fetch(node, max_bytes, wanted) == (False, False)
    assert reading.taken() == []  # the answer for offset 0 is not handed over
    assert reading.table.position((TOPIC, 0)) == 3
    reading.fetch_all()
    assert [m.offset() for m in reading.taken()] == [3, 4]  # (the second batch, whole)


def test_an_offset_past_the_log_resets_per_auto_offset_reset(peer: tuple[MockCluster, Client]) -> None:
    _mock, client = peer
    reading = Reading(client, auto_offset_reset="earliest")
    reading.table.assign((TOPIC, 0), 100)
    assert reading.fetch_all() == (True, False)
    part = reading.table.parts[(TOPIC, 0)]
    assert (part.state, part.logical) == (AWAITING_OFFSET, OFFSET_BEGINNING)  # the log start is looked up next
    assert reading.taken() == []


def test_a_moved_leader_is_forgotten_and_the_partition_backs_off(peer: tuple[MockCluster, Client]) -> None:
    mock, client = peer
    reading = Reading(client, error_backoff=0.5)
    reading.table.assign((TOPIC, 1), 0)
    mock.push_request_errors(FETCH.key, [NOT_LEADER_OR_FOLLOWER])
    try:
        before = client.engine.now()
        assert reading.fetch_all() == (False, True)  # nothing to hand over; metadata is stale
        assert client.metadata.leader_for(TOPIC, 1) is None
        part = reading.table.parts[(TOPIC, 1)]
        assert part.retry_at >= before + 0.5 and part.fetch_offset == 0
        assert reading.taken() == []  # a moved leader is no event for the application
    finally:
        client.refresh_metadata([TOPIC], timeout=10).result(15)  # (the leader back for the other tests)


def test_records_failing_their_checksum_are_one_event_and_read_again(peer: tuple[MockCluster, Client]) -> None:
    _mock, client = peer
    reading = Reading(client)
    reading.table.assign((TOPIC, 1), 0)
    assert reading.fetch_all(damage=True) == (True, False)
    [event] = reading.taken()
    assert isinstance(event, FetchEvent) and event.error.code() == KafkaError._BAD_MSG
    assert reading.table.position((TOPIC, 1)) == 0
    reading.table.parts[(TOPIC, 1)].retry_at = 0.0  # (the backoff over)
    reading.fetch_all()
    assert [m.value() for m in reading.taken()] == [b"b0", b"b1"]
