"""The rest of the fault API, with both clients on both mocks: errors with delays, advertised
version ranges, pinned coordinators; and what requests() records."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.protocol import error_codes as ec
from kafkawire.protocol.apis import JOIN_GROUP, OFFSET_COMMIT, PRODUCE, SYNC_GROUP
from kafkawire.testing import MockCluster

from .mocks import CLIENTS, Mock
from .scenarios import consume_in_group, fresh_topic, produce, read_back
from .test_faults import NOT_IDEMPOTENT, ONE_BATCH, VALUES, delivered_in_order, on_both

pytestmark = pytest.mark.broker


@pytest.mark.parametrize("client", ["confluent", pytest.param("kafkawire", marks=pytest.mark.slow)])
def test_delayed_errors_are_retried(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 1)
        mock.partition_set_leader(topic, 0, 2)
        mock.push_request_errors_rtt(2, PRODUCE.key, [(ec.NOT_ENOUGH_REPLICAS, 100), (0, 100)])
        config = {**NOT_IDEMPOTENT, **ONE_BATCH}
        deliveries = produce(module, mock.bootstrap(), topic, VALUES, partition=lambda i: 0, config=config)
        return deliveries, read_back(mock.bootstrap(), topic, len(VALUES))

    deliveries, records = on_both(step, client)
    assert sorted(deliveries) == delivered_in_order(len(VALUES))
    assert sorted(v for _, _, v in records) == sorted(VALUES)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_narrowed_produce_version_range_still_delivers(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 1)
        mock.set_apiversion(PRODUCE.key, 3, 4)
        return produce(module, mock.bootstrap(), topic, VALUES, partition=lambda i: 0)

    assert on_both(step, client) == delivered_in_order(len(VALUES))
    with MockCluster(1, topics={"narrow": 1}) as cluster:
        cluster.set_apiversion(PRODUCE.key, 3, 4)
        produce(CLIENTS[client], cluster.bootstrap_servers(), "narrow", VALUES[:1])
        assert {r.api_version for r in cluster.requests(PRODUCE.key)} <= {3, 4}


@pytest.mark.parametrize("client", [pytest.param("confluent", marks=pytest.mark.slow), "kafkawire"])
def test_a_pinned_group_coordinator_gets_the_group_requests(client: str) -> None:
    def step(mock: Mock, module: Any) -> Any:
        topic = fresh_topic(mock, 2)
        produce(CLIENTS["confluent"], mock.bootstrap(), topic, VALUES, partition=lambda i: i % 2)
        mock.start_tracking()
        group = f"pinned-{topic}"
        mock.coordinator_set("group", group, 3)
        values, _ = consume_in_group(module, mock.bootstrap(), topic, len(VALUES), members=1, group=group)
        brokers = {b for b, key in mock.requests() if key in (JOIN_GROUP.key, SYNC_GROUP.key, OFFSET_COMMIT.key)}
        return values, brokers

    values, brokers = on_both(step, client)
    assert values == sorted(VALUES)
    assert brokers == {3}
