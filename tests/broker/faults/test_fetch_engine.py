"""The fetch engine where it gets hard: read_committed over interleaved transactions on Kafka 2.3
(a real transaction coordinator; judged by confluent-kafka's read_committed consumer), and leader
moves, fetch errors and a broker down on librdkafka's mock cluster."""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka
import pytest

from kafkawire.base.model import OFFSET_BEGINNING
from kafkawire.protocol import error_codes as ec
from tests.harness.fetching import settings, taker
from tests.harness.judge import consume_all, judge_config, produce_with_confluent
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.mock_cluster import MockCluster
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

FETCH_KEY = 1


def _transactional(bootstrap: str, tid: str) -> confluent_kafka.Producer:
    p = confluent_kafka.Producer(judge_config(bootstrap, **{"transactional.id": tid, "linger.ms": 1}))
    p.init_transactions(30)
    p.begin_transaction()
    return p


def _send(p: confluent_kafka.Producer, topic: str, values: list[bytes]) -> None:
    for v in values:
        p.produce(topic, v, partition=0)
    assert p.flush(30) == 0


def test_read_committed_over_interleaved_transactions_on_kafka23(
    kafka23: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    bootstrap = kafka23.bootstrap()
    topic = topic_name("txn")
    create_topic(bootstrap, topic, 1)
    keep = _transactional(bootstrap, topic_name("keep"))
    drop = _transactional(bootstrap, topic_name("drop"))
    key = (topic, 0)
    with taker(bootstrap, settings(read_committed=True, fetch_wait_max_ms=100)) as t:
        t.engine.assign([(key, OFFSET_BEGINNING, None)])
        _send(keep, topic, [b"k0", b"k1"])
        _send(drop, topic, [b"d0"])
        produce_with_confluent(bootstrap, topic, [b"plain0"])
        _send(keep, topic, [b"k2"])
        _send(drop, topic, [b"d1", b"d2"])
        # Both transactions open: nothing may be handed over, not even the plain record behind them.
        assert t.quiet(1.0) == []
        drop.abort_transaction(30)
        assert t.quiet(0.5) == []  # "keep" is still open, and it came first
        keep.commit_transaction(30)
        got = [m.value() for m in t.take(4)]
        assert got == [b"k0", b"k1", b"plain0", b"k2"]
        # A second round: an abort between two commits; positions end past the markers.
        keep.begin_transaction()
        _send(keep, topic, [b"k3"])
        keep.commit_transaction(30)
        drop.begin_transaction()
        _send(drop, topic, [b"d3"])
        drop.abort_transaction(30)
        produce_with_confluent(bootstrap, topic, [b"plain1"])
        assert [m.value() for m in t.take(2)] == [b"k3", b"plain1"]
        assert t.quiet(0.5) == []
        judge = [m.value() for m in consume_all(bootstrap, topic, 6, settle=0.5)]
        assert judge == [b"k0", b"k1", b"plain0", b"k2", b"k3", b"plain1"]
        ends = t.engine.watermarks(key)
        assert ends is not None and t.engine.position(key) == ends[1]
    keep.flush(10)
    drop.flush(10)


def test_a_moved_leader_is_followed(mock_cluster: MockCluster, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("move")
    mock_cluster.create_topic(topic, partitions=2)
    produce_with_confluent(
        mock_cluster.bootstraps, topic, [b"a%d" % i for i in range(100)], config={"partitioner": "random"}
    )
    with taker(mock_cluster.bootstraps, settings(fetch_error_backoff_ms=50)) as t:
        t.engine.assign([((topic, p), 0, None) for p in range(2)])
        first = t.take(100)
        moved = {}
        for p in range(2):
            leader = t.client.metadata.leader_for(topic, p)
            assert leader is not None
            other = next(b for b in mock_cluster.broker_ids if b != leader.node_id)
            mock_cluster.partition_set_leader(topic, p, other)
            moved[p] = other
        produce_with_confluent(
            mock_cluster.bootstraps, topic, [b"b%d" % i for i in range(100)], config={"partitioner": "random"}
        )
        second = t.take(100)
        assert sorted(m.value() for m in first + second) == sorted(
            [b"a%d" % i for i in range(100)] + [b"b%d" % i for i in range(100)]
        )
        for p in range(2):  # the engine followed the moves (NOT_LEADER_OR_FOLLOWER, fresh metadata)
            leader = t.client.metadata.leader_for(topic, p)
            assert leader is not None and leader.node_id == moved[p]
        assert t.quiet(0.3) == []


def test_fetch_errors_are_retried_without_loss_or_duplicates(
    mock_cluster: MockCluster, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("ferr")
    mock_cluster.create_topic(topic, partitions=1)
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"r%d" % i for i in range(50)])
    with taker(mock_cluster.bootstraps, settings(fetch_error_backoff_ms=20, max_partition_fetch_bytes=200)) as t:
        mock_cluster.push_request_errors(
            FETCH_KEY,
            [ec.NOT_LEADER_OR_FOLLOWER, ec.UNKNOWN_TOPIC_OR_PARTITION, ec.REQUEST_TIMED_OUT, ec.NOT_LEADER_OR_FOLLOWER],
        )
        t.engine.assign([((topic, 0), 0, None)])
        got = t.take(50)
        assert [m.value() for m in got] == [b"r%d" % i for i in range(50)]
        assert t.quiet(0.3) == []


def test_a_broker_down_and_back(mock_cluster: MockCluster, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("down")
    mock_cluster.create_topic(topic, partitions=1)
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"x%d" % i for i in range(10)])
    with taker(mock_cluster.bootstraps, settings(fetch_error_backoff_ms=50)) as t:
        t.engine.assign([((topic, 0), 0, None)])
        assert len(t.take(10)) == 10
        leader = t.client.metadata.leader_for(topic, 0)
        assert leader is not None
        mock_cluster.broker_set_down(leader.node_id)
        assert t.quiet(1.0) == []
        mock_cluster.broker_set_up(leader.node_id)
        produce_with_confluent(mock_cluster.bootstraps, topic, [b"y%d" % i for i in range(10)])
        assert [m.value() for m in t.take(10)] == [b"y%d" % i for i in range(10)]


def test_fetches_go_to_the_preferred_read_replica(mock_cluster: MockCluster, topic_name: Callable[[str], str]) -> None:
    """KIP-392: with client.rack set, the leader names a follower to fetch from; the engine follows."""
    topic = topic_name("rack")
    mock_cluster.create_topic(topic, partitions=1)
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"r%d" % i for i in range(20)])
    with taker(mock_cluster.bootstraps, settings(client_rack="rack-b", fetch_wait_max_ms=50)) as t:
        t.client.refresh_metadata([topic]).result(10)
        leader = t.client.metadata.leader_for(topic, 0)
        assert leader is not None
        follower = next(b for b in mock_cluster.broker_ids if b != leader.node_id)
        mock_cluster.partition_set_follower(topic, 0, follower)
        mock_cluster.start_request_tracking()
        t.engine.assign([((topic, 0), 0, None)])
        assert [m.value() for m in t.take(20)] == [b"r%d" % i for i in range(20)]
        fetched_at = {r.broker_id for r in mock_cluster.requests_of(FETCH_KEY)}
        assert follower in fetched_at


def test_a_final_fetch_error_is_one_event_then_reading_goes_on(
    mock_cluster: MockCluster, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("denied")
    mock_cluster.create_topic(topic, partitions=1)
    produce_with_confluent(mock_cluster.bootstraps, topic, [b"a", b"b"])
    with taker(mock_cluster.bootstraps, settings(fetch_error_backoff_ms=20)) as t:
        mock_cluster.push_request_errors(FETCH_KEY, [ec.TOPIC_AUTHORIZATION_FAILED] * 3)
        t.engine.assign([((topic, 0), 0, None)])
        got = t.take(3, errors=True)
        assert [m.error().code() for m in got if m.error() is not None] == [ec.TOPIC_AUTHORIZATION_FAILED]
        assert [m.value() for m in got if m.error() is None] == [b"a", b"b"]
