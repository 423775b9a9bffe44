"""The metadata owner (client/metadata_owner.py) against librdkafka's mock cluster, which counts
and time-stamps the Metadata requests it receives."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

import pytest

from kafkawire.client.network_client import Client
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.metadata_refresh import Pace
from kafkawire.protocol.apis import METADATA
from kafkawire.protocol.codec import Struct
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

WAIT = 15


def test_many_concurrent_asks_share_one_metadata_request(
    mock_cluster: MockCluster, topic_name: Callable[[str], str]
) -> None:
    topic, other = topic_name("a"), topic_name("b")
    mock_cluster.create_topic(topic, partitions=3)
    mock_cluster.create_topic(other, partitions=1)
    with Client({"bootstrap.servers": mock_cluster.bootstraps}) as client:
        client.refresh_metadata([]).result(WAIT)  # connected: what follows is Metadata alone
        mock_cluster.start_request_tracking()
        answers: list[KafkaError | None] = []
        all_told = threading.Event()
        asks = 40
        holding, all_asked = threading.Event(), threading.Event()

        def teller() -> Callable[[Struct | None, KafkaError | None], None]:
            def told(response: Struct | None, error: KafkaError | None) -> None:
                answers.append(error)
                if len(answers) == asks:
                    all_told.set()

            return told

        def ask_many_then_hold() -> None:
            """Every part of a client asking in the same turn of the IO loop; then that turn waits
            until the application threads asked too. A timer: the loop runs what they queued in
            this same turn, before it reads any answer, so they find the request in flight."""
            for i in range(asks):
                wanted = [[topic], [other], [topic, other], []][i % 4]
                client.metadata_refresh.ask(wanted, teller(), pace=Pace.NOW if i % 2 else Pace.FAST)
            holding.set()
            assert all_asked.wait(WAIT)

        client.engine.call_soon(lambda: client.engine.call_later(0, ask_many_then_hold))
        assert holding.wait(WAIT)
        # Application threads asking while that request is in flight join it.
        futures: list[Future[object]] = []
        threads = [threading.Thread(target=lambda: futures.append(client.refresh_metadata([topic]))) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        all_asked.set()
        for fut in futures:
            md = fut.result(WAIT)
            assert sorted(md.topics[topic].partitions) == [0, 1, 2]  # type: ignore[attr-defined]
        assert all_told.wait(WAIT)
        assert answers == [None] * asks
        assert sorted(client.metadata.topics) == sorted([topic, other])
        assert len(mock_cluster.requests_of(METADATA.key)) == 1


def test_a_fast_refresh_asked_sooner_than_its_interval_waits(
    mock_cluster: MockCluster, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("fast")
    mock_cluster.create_topic(topic, partitions=1)
    fast_ms = 1500
    conf = {"bootstrap.servers": mock_cluster.bootstraps, "topic.metadata.refresh.fast.interval.ms": fast_ms}
    with Client(conf) as client:
        client.refresh_metadata([]).result(WAIT)
        mock_cluster.start_request_tracking()
        client.refresh_metadata([topic]).result(WAIT)  # the last request before the fast ask
        told = threading.Event()
        client.engine.run(
            lambda: client.metadata_refresh.ask([topic], lambda _r, _e: told.set(), pace=Pace.FAST)
        ).result(WAIT)
        assert told.wait(WAIT)
        first, second = mock_cluster.requests_of(METADATA.key)
        # Sent no sooner than the fast interval after the one before (a lower bound: load only adds).
        assert second.timestamp_us - first.timestamp_us >= (fast_ms - 100) * 1000
        # A caller that waits on the answer is not held back by it.
        client.refresh_metadata([topic]).result(WAIT)
        assert len(mock_cluster.requests_of(METADATA.key)) == 3
