"""The request driver (client/driver.py) and the coordinator cache (client/coordinators.py):
routing, classification by policy, backoff, refresh, re-finding coordinators and deadlines, over
the scripted stand-in client (tests/unit/stand_in.py) (a virtual clock, no sockets)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

import pytest

from kafkawire.client import routers
from kafkawire.client.coordinators import GROUP, TRANSACTION, Coordinators, ToCoordinator
from kafkawire.client.driver import Operation, Router, Tries, whole
from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.core.policy import Action, ErrorPolicy
from kafkawire.core.policy.coordinator import COORDINATOR
from kafkawire.core.policy.offsets import LIST_OFFSETS as LIST_OFFSETS_POLICY
from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import END_TXN, FIND_COORDINATOR, LIST_OFFSETS
from kafkawire.protocol.codec import Struct
from kafkawire.protocol.schema import Api
from tests.unit.stand_in import Call, LeaderStub, StubClient


def run(client: StubClient, fut: Future[Any]) -> Any:
    client.engine.run()
    assert fut.done(), "the operation did not finish once nothing was left to do"
    return fut.result(0)


def failure(client: StubClient, fut: Future[Any]) -> KafkaError:
    with pytest.raises(KafkaException) as exc:  # never a builtin TimeoutError
        run(client, fut)
    return exc.value.args[0]


def end_txn(
    client: StubClient,
    router: Router,
    *,
    policy: ErrorPolicy = COORDINATOR,
    timeout: float = 5.0,
    request_timeout: float | None = None,
) -> Operation[str]:
    return Operation(
        client,  # type: ignore[arg-type]
        ["txn"],
        api=END_TXN,
        router=router,
        body=lambda keys, version: {
            "transactional_id": "txn",
            "producer_id": 1,
            "producer_epoch": 0,
            "committed": True,
        },
        parse=whole,
        policy=policy,
        deadline=client.engine.now() + timeout,
        backoff_ms=(10, 100),
        request_timeout=request_timeout,
    ).start()


def find_answer(call: Call, nodes: Mapping[str, int]) -> dict[str, Any]:
    if call.version >= 4:
        return {
            "coordinators": [
                {"key": k, "node_id": nodes[k], "host": "b", "port": 1, "error_code": 0}
                for k in call.body.coordinator_keys
            ]
        }
    return {"node_id": nodes[call.body.key], "host": "b", "port": 1, "error_code": 0}


def test_coordinator_moves_are_found_again_and_busy_ones_asked_again() -> None:
    client = StubClient(nodes=(1, 2))
    coordinator = {"txn": 1}
    answers = iter([ec.COORDINATOR_LOAD_IN_PROGRESS, ec.NOT_COORDINATOR, 0])

    def handler(call: Call) -> Any:
        if call.api == FIND_COORDINATOR.name:
            return find_answer(call, coordinator)
        code = next(answers)
        if code == ec.NOT_COORDINATOR:
            coordinator["txn"] = 2
        return {"error_code": code}

    client.handler = handler
    op = end_txn(client, ToCoordinator(Coordinators(client), TRANSACTION))  # type: ignore[arg-type]
    assert run(client, op.future("txn")).error_code == 0
    assert [c.api for c in client.calls] == [
        "Metadata",
        "FindCoordinator",
        "EndTxn",  # first metadata, then the coordinator
        "EndTxn",  # busy: the same coordinator again, nothing looked up
        "Metadata",
        "FindCoordinator",
        "EndTxn",  # moved: found again
    ]
    assert [c.node for c in client.requests(END_TXN)] == [1, 1, 2]
    assert [c.body.key_type for c in client.requests(FIND_COORDINATOR)] == [TRANSACTION, TRANSACTION]


def test_the_deadline_fails_with_timed_out_naming_the_last_error() -> None:
    client = StubClient()
    client.handler = lambda call: (
        find_answer(call, {"txn": 1})
        if call.api == FIND_COORDINATOR.name
        else {"error_code": ec.CONCURRENT_TRANSACTIONS}
    )
    op = end_txn(client, ToCoordinator(Coordinators(client), TRANSACTION), timeout=0.5)  # type: ignore[arg-type]
    error = failure(client, op.future("txn"))
    assert error.code() == KafkaError._TIMED_OUT and error.retriable()
    assert "CONCURRENT_TRANSACTIONS" in error.str()
    assert client.engine.clock <= 0.5
    assert len(client.requests(END_TXN)) >= 3


def test_a_broker_that_never_answers_is_bounded_by_the_deadline() -> None:
    client = StubClient()
    client.handler = lambda call: None  # never answers: the client's own timeout fails each request
    op = end_txn(client, routers.ANY_BROKER, timeout=1.0)
    assert failure(client, op.future("txn")).code() == KafkaError._TIMED_OUT
    assert all(c.timeout is not None and c.at + c.timeout <= 1.0 + 1e-9 for c in client.calls)


def test_a_silent_request_is_asked_again_after_the_request_timeout() -> None:
    """With socket.timeout.ms as each request's bound, one unanswered request costs that much,
    not the whole call: the operation asks again and succeeds within its deadline."""
    client = StubClient()
    answers = iter([None, {"error_code": 0}])
    client.handler = lambda call: next(answers)
    op = end_txn(client, routers.ANY_BROKER, timeout=10.0, request_timeout=2.0)
    assert run(client, op.future("txn")).error_code == 0
    assert next(c.timeout for c in client.requests(END_TXN)) == 2.0
    assert client.engine.clock < 3.0


def test_final_errors_fail_at_once_and_success_quirks_succeed() -> None:
    client = StubClient()
    client.handler = lambda call: {"error_code": ec.PRODUCER_FENCED}
    assert failure(client, end_txn(client, routers.ANY_BROKER).future("txn")).code() == ec.PRODUCER_FENCED
    assert len(client.calls) == 1
    started = COORDINATOR.extend("started", {ec.PRODUCER_FENCED: Action.SUCCEED})
    assert run(client, end_txn(client, routers.ANY_BROKER, policy=started).future("txn")) is None


def list_offsets_op(
    client: StubClient, keys: list[tuple[str, int]], timeout: float = 5.0
) -> Operation[tuple[str, int]]:
    def body(tps: list[tuple[str, int]], version: int) -> dict[str, Any]:
        return {
            "replica_id": -1,
            "topics": [{"name": t, "partitions": [{"partition_index": p, "timestamp": -1}]} for t, p in tps],
        }

    def parse(response: Struct, tps: list[tuple[str, int]], node: int | None) -> dict[tuple[str, int], Any]:
        return {
            (t.name, p.partition_index): KafkaError(p.error_code) if p.error_code else p.offset
            for t in response.topics
            for p in t.partitions
        }

    return Operation(
        client,  # type: ignore[arg-type]
        keys,
        api=LIST_OFFSETS,
        router=routers.LEADERS,
        body=body,
        parse=parse,
        policy=LIST_OFFSETS_POLICY,
        deadline=client.engine.now() + timeout,
        backoff_ms=(10, 100),
    ).start()


def test_leaders_are_asked_per_broker_and_a_moved_leader_refreshes_metadata() -> None:
    client = LeaderStub()

    def handler(call: Call) -> Any:
        parts = [(t.name, p.partition_index) for t in call.body.topics for p in t.partitions]
        if call.node == 2 and client.leaders[1] == 2:
            client.leaders[1] = 1  # the leader moves; the broker says so
            return {
                "topics": [
                    {"name": "t", "partitions": [{"partition_index": 1, "error_code": ec.NOT_LEADER_OR_FOLLOWER}]}
                ]
            }
        return {
            "topics": [
                {
                    "name": "t",
                    "partitions": [{"partition_index": p, "error_code": 0, "offset": 10 + p} for _, p in parts],
                }
            ]
        }

    client.handler = handler
    op = list_offsets_op(client, [("t", 0), ("t", 1)])
    assert [run(client, op.future(tp)) for tp in [("t", 0), ("t", 1)]] == [10, 11]
    assert [c.api for c in client.calls] == ["Metadata", "ListOffsets", "ListOffsets", "Metadata", "ListOffsets"]
    assert [c.node for c in client.requests(LIST_OFFSETS)] == [1, 2, 1]


def test_coordinators_are_cached_forgotten_and_batched_when_the_broker_can() -> None:
    client = StubClient()
    client.handler = lambda call: find_answer(call, {"a": 1, "b": 2, "c": 1})
    coordinators = Coordinators(client)  # type: ignore[arg-type]
    found: list[dict[str, Any]] = []
    coordinators.find_io(GROUP, ["a", "b", "c"], 1.0, found.append)
    client.engine.run()
    assert found == [{"a": 1, "b": 2, "c": 1}]
    (request,) = client.requests(FIND_COORDINATOR)  # v4+: one request for every key
    assert request.body.coordinator_keys == ["a", "b", "c"]
    coordinators.find_io(GROUP, ["a", "b"], 1.0, found.append)
    client.engine.run()
    assert len(client.requests(FIND_COORDINATOR)) == 1 and found[1] == {"a": 1, "b": 2}  # cached
    coordinators.forget(GROUP, "b")
    coordinators.find_io(GROUP, ["a", "b"], 1.0, found.append)
    client.engine.run()
    assert client.requests(FIND_COORDINATOR)[-1].body.coordinator_keys == ["b"]
    assert coordinators.cached(TRANSACTION, "a") is None  # key types do not mix


class OldBrokerStub(StubClient):
    """A broker that speaks FindCoordinator up to v3 (one key per request)."""

    def _record(
        self, api: Api, make_body: Any, node: int | None, timeout: float | None, max_version: int | None
    ) -> Call:
        return super()._record(api, make_body, node, timeout, 3 if api is FIND_COORDINATOR else max_version)


def test_coordinators_of_an_old_broker_are_asked_one_by_one() -> None:
    client = OldBrokerStub()
    client.handler = lambda call: find_answer(call, {"a": 1, "b": 2, "c": 1})
    coordinators = Coordinators(client)  # type: ignore[arg-type]
    found: list[dict[str, Any]] = []
    coordinators.find_io(GROUP, ["a", "b", "c"], 1.0, found.append)
    client.engine.run()
    assert found == [{"a": 1, "b": 2, "c": 1}]
    assert sorted(c.body.key for c in client.requests(FIND_COORDINATOR)) == ["a", "b", "c"]


def test_abort_resolves_every_future_and_stops_retrying() -> None:
    client = StubClient()
    client.handler = lambda call: {"error_code": ec.CONCURRENT_TRANSACTIONS}
    op = end_txn(client, routers.ANY_BROKER, timeout=60)
    client.engine.call_later(0.05, lambda: op.abort(KafkaError(KafkaError._DESTROY, "closed")))
    assert failure(client, op.future("txn")).code() == KafkaError._DESTROY
    sent = len(client.calls)
    client.engine.run()
    assert len(client.calls) == sent


def test_tries_make_the_call_again_whole_after_a_deadline_or_a_final_error() -> None:
    """`Tries`: a key the call failed (here: its deadline, busy answers all along) is asked again
    ``apart`` s later with the call's time anew; ``failed`` hears each try made again; the last
    try's failure is the answer."""
    client = StubClient()
    client.handler = lambda call: {"error_code": ec.CONCURRENT_TRANSACTIONS}
    heard: list[tuple[int, int, float]] = []
    op = Operation(
        client,  # type: ignore[arg-type]
        ["txn"],
        api=END_TXN,
        router=routers.ANY_BROKER,
        body=lambda keys, version: {
            "transactional_id": "txn",
            "producer_id": 1,
            "producer_epoch": 0,
            "committed": True,
        },
        parse=whole,
        policy=COORDINATOR,
        deadline=1.0,
        backoff_ms=(100, 100),
        tries=Tries(3, 2.0, lambda attempt, error: heard.append((attempt, error.code(), client.engine.clock))),
    ).start()
    error = failure(client, op.future("txn"))
    assert error.code() == KafkaError._TIMED_OUT and "CONCURRENT_TRANSACTIONS" in error.str()
    assert [(a, code) for a, code, _ in heard] == [(1, KafkaError._TIMED_OUT), (2, KafkaError._TIMED_OUT)]
    sent = [c.at for c in client.requests(END_TXN)]
    # each try starts `apart` after the last one ended, and has the call's second again
    firsts = [at for at in sent if not any(0 < at - other < 0.5 for other in sent)]
    assert len(firsts) == 3 and firsts[0] == 0.0
    assert [b - a for a, b in itertools.pairwise(firsts)] == pytest.approx([3.0, 3.0], abs=0.15)
    assert client.engine.clock <= 3 * 1.0 + 2 * 2.0


def test_a_call_tried_once_fails_at_its_first_final_error() -> None:
    client = StubClient()
    client.handler = lambda call: {"error_code": ec.PRODUCER_FENCED}
    op = end_txn(client, routers.ANY_BROKER)
    assert failure(client, op.future("txn")).code() == ec.PRODUCER_FENCED
    assert len(client.requests(END_TXN)) == 1


def test_abort_ends_a_call_with_tries_left() -> None:
    client = StubClient()
    client.handler = lambda call: {"error_code": ec.PRODUCER_FENCED}
    op = Operation(
        client,  # type: ignore[arg-type]
        ["txn"],
        api=END_TXN,
        router=routers.ANY_BROKER,
        body=lambda keys, version: {
            "transactional_id": "txn",
            "producer_id": 1,
            "producer_epoch": 0,
            "committed": True,
        },
        parse=whole,
        policy=COORDINATOR,
        deadline=1.0,
        backoff_ms=(100, 100),
        tries=Tries(5, 1.0),
    ).start()
    client.engine.call_later(0.5, lambda: op.abort(KafkaError(KafkaError._DESTROY, "closed")))
    assert failure(client, op.future("txn")).code() == KafkaError._DESTROY
    assert len(client.requests(END_TXN)) == 1


def test_a_members_lookup_asks_until_found_whatever_the_answer() -> None:
    """`Coordinators.locate_io`: not there yet, not authorized, no answer at all: each asked again
    after the backoff (doubling from retry.backoff.ms to retry.backoff.max.ms), no deadline; found,
    the node is cached and ``found`` runs once; ``heard`` hears every answer."""
    client = StubClient()
    answers = iter(
        [
            {"node_id": -1, "host": "", "port": -1, "error_code": ec.COORDINATOR_NOT_AVAILABLE},
            {"node_id": -1, "host": "", "port": -1, "error_code": ec.GROUP_AUTHORIZATION_FAILED},
            None,  # a lost request: its request timeout
            {"node_id": 2, "host": "b", "port": 1, "error_code": 0},
        ]
    )

    def handler(call: Call) -> Any:
        answer = next(answers)
        if answer is None or call.version < 4:
            return answer
        return {"coordinators": [{**answer, "key": "g"}]}

    client.handler = handler
    coordinators = Coordinators(client)  # type: ignore[arg-type]
    found: list[int] = []
    heard: list[Any] = []
    coordinators.locate_io(GROUP, "g", found.append, request_timeout=5.0, backoff_ms=(100, 1000), heard=heard.append)
    client.engine.run()
    assert found == [2] and coordinators.cached(GROUP, "g") == 2
    assert [h if isinstance(h, int) else h.code() for h in heard] == [
        ec.COORDINATOR_NOT_AVAILABLE,
        ec.GROUP_AUTHORIZATION_FAILED,
        KafkaError._TIMED_OUT,
        2,
    ]
    sent = [c.at for c in client.requests(FIND_COORDINATOR)]
    gaps = [b - a for a, b in itertools.pairwise(sent)]
    assert gaps[0] == pytest.approx(0.1, rel=0.21) and gaps[1] == pytest.approx(0.2, rel=0.21)
    assert gaps[2] == pytest.approx(5.0 + 0.4, abs=0.1)  # the lost one's timeout, then the backoff
    assert all(c.timeout == 5.0 for c in client.requests(FIND_COORDINATOR))
    # known now: a lookup is answered from the cache, no request
    coordinators.locate_io(GROUP, "g", found.append, request_timeout=5.0, backoff_ms=(100, 1000))
    assert found == [2, 2] and len(client.requests(FIND_COORDINATOR)) == 4


def test_a_fresh_lookup_asks_the_cluster_while_the_cache_keeps_serving_the_coordinator_known() -> None:
    """A member's periodic query: until its answer (on a one-broker cluster, behind the member's
    Fetch long-poll), a rejoin or a commit finds the coordinator it had at once; the answer then
    replaces it."""
    client = StubClient(nodes=(1, 2))
    where = {"g": 1}
    client.handler = lambda call: find_answer(call, where)
    coordinators = Coordinators(client)  # type: ignore[arg-type]
    found: list[int] = []
    coordinators.locate_io(GROUP, "g", found.append, request_timeout=5.0, backoff_ms=(100, 1000))
    client.engine.run()
    where["g"] = 2  # moved
    asked: list[int] = []
    coordinators.locate_io(GROUP, "g", asked.append, request_timeout=5.0, backoff_ms=(100, 100), fresh=True)
    assert coordinators.cached(GROUP, "g") == 1  # meanwhile: the coordinator we had
    joined: list[int] = []
    coordinators.locate_io(GROUP, "g", joined.append, request_timeout=5.0, backoff_ms=(100, 1000))
    assert joined == [1]  # at once, from the cache: no request
    client.engine.run()
    assert (found, asked, coordinators.cached(GROUP, "g")) == ([1], [2], 2)
    assert len(client.requests(FIND_COORDINATOR)) == 2


def test_an_aborted_lookup_asks_no_more() -> None:
    client = StubClient()
    client.handler = lambda call: {
        "coordinators": [
            {"key": "g", "node_id": -1, "host": "", "port": -1, "error_code": ec.COORDINATOR_NOT_AVAILABLE}
        ]
    }
    found: list[int] = []
    op = Coordinators(client).locate_io(GROUP, "g", found.append, request_timeout=5.0, backoff_ms=(100, 100))  # type: ignore[arg-type]
    client.engine.call_later(1.0, lambda: op.abort(KafkaError(KafkaError._DESTROY, "left")))
    client.engine.run()
    asked = len(client.requests(FIND_COORDINATOR))
    assert found == [] and 5 <= asked <= 13 and client.engine.clock < 1.2
