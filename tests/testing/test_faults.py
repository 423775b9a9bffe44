"""Fault scenarios (injected request errors, a broker down, a leader move, round-trip delays), each
run by both clients on both mocks: kafkawire's mock must give the outcome librdkafka's gives."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import FETCH, FIND_COORDINATOR, PRODUCE

from .mocks import CLIENTS, MOCKS, Mock, mock_cluster
from .scenarios import consume_in_group, fresh_topic, produce, read_across_a_leader_move, read_back

pytestmark = pytest.mark.broker

VALUES = [b"v%d" % i for i in range(6)]
NOT_IDEMPOTENT = {"enable.idempotence": False, "retry.backoff.ms": 50}
# All of VALUES in one batch, sent when it is full: without idempotence, which offset each record
# gets after a retried error depends on how the records were cut into requests, and a loaded host
# cuts six records produced 5 ms apart differently from run to run (and from mock to mock).
ONE_BATCH = {"linger.ms": 2000, "batch.num.messages": len(VALUES)}


def on_both(step: Callable[[Mock, Any], Any], client: str) -> Any:
    """Run ``step`` on each mock; both must give one outcome, which is returned."""
    outcomes = {}
    for kind in MOCKS:
        with mock_cluster(kind) as mock:
            outcomes[kind] = step(mock, CLIENTS[client])
    assert outcomes["kafkawire"] == outcomes["librdkafka"]
    return outcomes["kafkawire"]


def delivered_in_order(count: int, partition: int = 0) -> list[tuple[int | None, int | None, int | None]]:
    return [(None, partition, i) for i in range(count)]


@pytest.mark.parametrize(
    ("client", "idempotent"),
    [
        ("confluent", False),
        ("kafkawire", True),
        pytest.param("kafkawire", False, marks=pytest.mark.slow),
        pytest.param("confluent", True, marks=pytest.mark.slow),
    ],
)
def test_retriable_produce_errors_are_retried_and_written_once(client: str, idempotent: bool) -> None:
    config = {"enable.idempotence": True} if idempotent else {**NOT_IDEMPOTENT, **ONE_BATCH}

    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 1)
        mock.push_request_errors(PRODUCE.key, ec.NOT_LEADER_OR_FOLLOWER, ec.REQUEST_TIMED_OUT)
        deliveries = produce(module, mock.bootstrap(), topic, VALUES, partition=lambda i: 0, config=config)
        return deliveries, read_back(mock.bootstrap(), topic, len(VALUES))

    deliveries, records = on_both(step, client)
    assert sorted(deliveries) == delivered_in_order(len(VALUES))
    assert sorted(v for _, _, v in records) == sorted(VALUES)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_non_retriable_produce_error_fails_the_delivery(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 1)
        mock.push_request_errors(PRODUCE.key, ec.TOPIC_AUTHORIZATION_FAILED)
        failed = produce(module, mock.bootstrap(), topic, VALUES[:1], partition=lambda i: 0, config=NOT_IDEMPOTENT)
        later = produce(module, mock.bootstrap(), topic, VALUES[1:2], partition=lambda i: 0, config=NOT_IDEMPOTENT)
        return [code for code, _, _ in failed], later

    codes, later = on_both(step, client)
    assert codes == [ec.TOPIC_AUTHORIZATION_FAILED]
    assert later == [(None, 0, 0)]


@pytest.mark.parametrize("client", ["confluent", pytest.param("kafkawire", marks=pytest.mark.slow)])
def test_records_wait_for_a_leader_that_is_down(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 1)
        mock.partition_set_leader(topic, 0, 2)

        def outage(i: int) -> None:
            if i == 0:
                mock.broker_set_down(2)
            if i == len(VALUES) - 1:
                time.sleep(0.5)
                mock.broker_set_up(2)

        deliveries = produce(module, mock.bootstrap(), topic, VALUES, partition=lambda i: 0, between=outage)
        return deliveries, read_back(mock.bootstrap(), topic, len(VALUES))

    deliveries, records = on_both(step, client)
    assert deliveries == delivered_in_order(len(VALUES))
    assert [v for _, _, v in records] == VALUES


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_leader_move_is_followed(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 1)
        mock.partition_set_leader(topic, 0, 1)
        first = produce(module, mock.bootstrap(), topic, VALUES[:3], partition=lambda i: 0)
        mock.partition_set_leader(topic, 0, 3)
        mock.start_tracking()
        second = produce(module, mock.bootstrap(), topic, VALUES[3:], partition=lambda i: 0)
        produce_brokers = {broker for broker, key in mock.requests() if key == PRODUCE.key}
        return first + second, read_back(mock.bootstrap(), topic, len(VALUES)), produce_brokers

    deliveries, records, brokers = on_both(step, client)
    assert deliveries == delivered_in_order(len(VALUES))
    assert [v for _, _, v in records] == VALUES
    assert brokers == {3}


@pytest.mark.parametrize("client", [pytest.param("confluent", marks=pytest.mark.slow), "kafkawire"])
def test_round_trip_delays_slow_but_do_not_fail(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 2)
        mock.broker_set_rtt(-1, 50)
        deliveries = produce(module, mock.bootstrap(), topic, VALUES, partition=lambda i: i % 2)
        return deliveries, read_back(mock.bootstrap(), topic, len(VALUES))

    deliveries, records = on_both(step, client)
    assert [code for code, _, _ in deliveries] == [None] * len(VALUES)
    assert sorted(v for _, _, v in records) == sorted(VALUES)


@pytest.mark.slow
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_group_finds_its_coordinator_after_errors(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 2)
        produce(CLIENTS["confluent"], mock.bootstrap(), topic, VALUES, partition=lambda i: i % 2)
        mock.push_request_errors(FIND_COORDINATOR.key, ec.COORDINATOR_NOT_AVAILABLE, ec.COORDINATOR_LOAD_IN_PROGRESS)
        return consume_in_group(module, mock.bootstrap(), topic, len(VALUES), members=1)

    values, committed = on_both(step, client)
    assert values == sorted(VALUES)
    assert committed == {0: 3, 1: 3}


@pytest.mark.parametrize("client", ["confluent", pytest.param("kafkawire", marks=pytest.mark.slow)])
def test_fetch_errors_are_retried_and_nothing_is_lost(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 2)
        produce(CLIENTS["confluent"], mock.bootstrap(), topic, VALUES, partition=lambda i: i % 2)
        mock.push_request_errors(FETCH.key, ec.NOT_LEADER_OR_FOLLOWER, ec.UNKNOWN_TOPIC_OR_PARTITION)
        return consume_in_group(module, mock.bootstrap(), topic, len(VALUES), members=1)

    values, committed = on_both(step, client)
    assert values == sorted(VALUES)
    assert committed == {0: 3, 1: 3}


@pytest.mark.parametrize("client", [pytest.param("confluent", marks=pytest.mark.slow), "kafkawire"])
def test_a_reader_follows_a_leader_move(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        return read_across_a_leader_move(module, mock, fresh_topic(mock, 1), VALUES)

    assert on_both(step, client) == VALUES
