"""The transactional producer's coordinator conversations (producer/transactions.py) over the
scripted stand-in client (tests/unit/stand_in.py): which requests go where, what is asked again, and
what an answer does to the transaction. Real brokers judge the behaviour (tests/broker)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.client.group_transactions import GROUP_TRANSACTIONS
from kafkawire.core.idempotence import Idempotence
from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.core.transactions import TxnState
from kafkawire.producer.transactions import TransactionManager
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import (
    ADD_OFFSETS_TO_TXN,
    ADD_PARTITIONS_TO_TXN,
    END_TXN,
    FIND_COORDINATOR,
    INIT_PRODUCER_ID,
    TXN_OFFSET_COMMIT,
)
from tests.unit.stand_in import Call, StubClient


def manager(client: StubClient) -> TransactionManager:
    return TransactionManager(client, Idempotence(), "tx", 60_000, 10, 100)  # type: ignore[arg-type]


def coordinator_at(node: int) -> dict[str, Any]:
    return {"coordinators": [{"key": "tx", "node_id": node, "host": "b", "port": 1, "error_code": 0}]}


def test_init_finds_the_coordinator_and_asks_again_while_it_loads() -> None:
    client = StubClient(nodes=(1, 2))
    answers = iter([ec.COORDINATOR_LOAD_IN_PROGRESS, 0])

    def handler(call: Call) -> Any:
        if call.api == FIND_COORDINATOR.name:
            return coordinator_at(2)
        return {"error_code": next(answers), "producer_id": 7, "producer_epoch": 3}

    client.handler = handler
    txn = manager(client)
    fut = txn.init(client.engine.now() + 5)
    client.engine.run()
    assert fut.result(0) is None
    assert (txn.idem.producer_id, txn.idem.epoch) == (7, 3)
    assert [c.node for c in client.requests(INIT_PRODUCER_ID)] == [2, 2]
    assert len(client.requests(FIND_COORDINATOR)) == 1  # busy is not moved: the cache holds
    assert client.requests(FIND_COORDINATOR)[0].body.key_type == 1  # a transactional id


def test_partitions_are_added_once_retried_while_busy_and_the_sender_woken() -> None:
    client = StubClient()
    busy = iter([True, False])

    def handler(call: Call) -> Any:
        if call.api == FIND_COORDINATOR.name:
            return coordinator_at(1)
        code = ec.CONCURRENT_TRANSACTIONS if next(busy) else 0
        return {
            "results_by_topic_v3_and_below": [
                {
                    "name": t.name,
                    "results_by_partition": [
                        {"partition_index": p, "partition_error_code": code} for p in t.partitions
                    ],
                }
                for t in call.body.v3_and_below_topics
            ]
        }

    client.handler = handler
    txn = manager(client)
    woken: list[bool] = []
    txn.on_added = lambda: woken.append(True)
    assert not txn.partition_ready(("t", 0)) and not txn.partition_ready(("t", 1))
    assert not txn.partition_ready(("t", 0))  # asked once
    client.engine.run()
    assert txn.partition_ready(("t", 0)) and txn.partition_ready(("t", 1))
    adds = client.requests(ADD_PARTITIONS_TO_TXN)
    assert len(adds) == 2 and all(c.version <= 3 for c in adds)
    assert [(t.name, list(t.partitions)) for t in adds[0].body.v3_and_below_topics] == [("t", [0, 1])]
    assert woken == [True]


def test_a_fenced_producer_is_fatal_and_told_once() -> None:
    client = StubClient()
    client.handler = lambda call: (
        coordinator_at(1) if call.api == FIND_COORDINATOR.name else {"error_code": ec.PRODUCER_FENCED}
    )
    txn = manager(client)
    txn.idem.set_producer_id(7, 3)
    txn.added.add(("t", 0))
    fatal: list[KafkaError] = []
    txn.on_fatal = fatal.append
    fut = txn.end(True, client.engine.now() + 5)
    client.engine.run()
    with pytest.raises(KafkaException) as exc:
        fut.result(0)
    error = exc.value.args[0]
    # librdkafka's form: fencing is _FENCED, and the text says what failed
    assert (error.code(), error.str(), error.fatal()) == (
        KafkaError._FENCED,
        "Failed to end transaction: Local: This instance has been fenced by a newer instance",
        True,
    )
    assert len(client.requests(END_TXN)) == 1  # final: not asked again
    txn.fail(error)
    txn.fail(error)
    assert txn.state.state is TxnState.FATAL_ERROR and len(fatal) == 1


def test_a_forgotten_producer_makes_the_transaction_abortable_with_a_new_epoch() -> None:
    txn = manager(StubClient())
    txn.idem.set_producer_id(7, 3)
    txn.fail(KafkaError(ec.UNKNOWN_PRODUCER_ID))
    assert txn.state.state is TxnState.ABORTABLE_ERROR and txn.idem.bump_wanted
    txn.fail(KafkaError(KafkaError._PURGE_QUEUE))  # purged records are not the transaction's fault
    assert txn.state.last_error is not None and txn.state.last_error.code() == ec.UNKNOWN_PRODUCER_ID


# --- a commit whose group member lost its partitions (issue 53) ---------------------------------------


class Kafka23(StubClient):
    """Takes TxnOffsetCommit below v3, as a broker without KIP-447 (Kafka < 2.5): no member check."""

    def _record(self, api: Any, make_body: Any, node: Any, timeout: Any, max_version: Any) -> Call:
        return super()._record(api, make_body, node, timeout, 2 if api is TXN_OFFSET_COMMIT else max_version)


def commit_while_the_member_is_lost(client: StubClient, group: str, answers: list[int]) -> tuple[Any, list[bool]]:
    """A transaction carrying ``group``'s offsets commits; its first EndTxn is never answered (a
    dead connection) and the member loses its partitions meanwhile; the next EndTxns are answered
    ``answers``. The commit's future, and what each EndTxn asked for (True: commit)."""
    answered = iter(answers)
    asked: list[bool] = []

    def handler(call: Call) -> Any:
        if call.api == FIND_COORDINATOR.name:
            entry = {"node_id": 1, "host": "b", "port": 1, "error_code": 0}
            return {"coordinators": [{**entry, "key": key} for key in call.body.coordinator_keys]}
        if call.api == ADD_OFFSETS_TO_TXN.name:
            return {"error_code": 0}
        if call.api == TXN_OFFSET_COMMIT.name:
            return {"topics": [{"name": "src", "partitions": [{"partition_index": 0, "error_code": 0}]}]}
        asked.append(call.body.committed)
        if len(asked) == 1:
            GROUP_TRANSACTIONS.lost(group, "m")
            return None
        return {"error_code": next(answered)}

    client.handler = handler
    txn = TransactionManager(client, Idempotence(), "tx", 60_000, 10, 100, request_timeout_ms=5_000)  # type: ignore[arg-type]
    txn.idem.set_producer_id(7, 3)
    txn.state.state = TxnState.IN_TRANSACTION
    sent = txn.send_offsets(group, 5, "m", None, {"src": [(0, 100, -1)]}, client.engine.now() + 5)
    client.engine.run()
    assert sent.result(0) is None
    txn.state.state = TxnState.COMMITTING
    fut = txn.end(True, client.engine.now() + 60)
    client.engine.run()
    return fut, asked


def test_a_commit_whose_member_was_lost_on_a_broker_without_kip_447_aborts_instead() -> None:
    """Kafka 2.3 would take the commit after the member's successor read the offsets it replaces
    (the records copied twice): the EndTxn sent again asks for an abort, and the commit fails as
    abortable, the member's partitions lost."""
    fut, asked = commit_while_the_member_is_lost(Kafka23(), "g-aborted", [0])
    assert asked == [True, False]
    with pytest.raises(KafkaException) as exc:
        fut.result(0)
    error = exc.value.args[0]
    assert error.code() == ec.ILLEGAL_GENERATION and error.txn_requires_abort() and not error.fatal()


def test_a_commit_that_reached_the_coordinator_first_is_committed_when_its_abort_is_refused() -> None:
    """The lost EndTxn had arrived: the coordinator refuses the abort (busy while it writes the
    markers, then INVALID_TXN_STATE) and the commit stands."""
    fut, asked = commit_while_the_member_is_lost(
        Kafka23(), "g-committed", [ec.CONCURRENT_TRANSACTIONS, ec.INVALID_TXN_STATE]
    )
    assert asked == [True, False, False]
    assert fut.result(0) is None


def test_a_broker_with_kip_447_keeps_the_commit() -> None:
    """It checked the member's generation with the offsets, and holds its successor's offset fetch
    until the transaction ends: the commit is asked again, as librdkafka's."""
    fut, asked = commit_while_the_member_is_lost(StubClient(), "g-kip447", [0])
    assert asked == [True, True]
    assert fut.result(0) is None
