"""``flush()`` over librdkafka's mock cluster, on confluent-kafka and kafkawire alike (issue 49):
a record produced with a linger far past the flush's bound leaves at once, its report served on
the caller's thread before flush() returns; a record produced while another's answer is awaited
leaves after that answer, within the same flush. No timings are asserted: a flush that waited
for the linger would return the records left (its bound, 20 s, is below the linger)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import kafkawire
from tests.harness.mock_cluster import MockCluster

ck = pytest.importorskip("confluent_kafka")

TOPIC = "flushed"
LIMIT = 20.0
CLIENTS = {"confluent": ck, "kafkawire": kafkawire}


@pytest.fixture
def mock() -> Iterator[MockCluster]:
    with MockCluster(1) as cluster:
        cluster.create_topic(TOPIC, partitions=1)
        yield cluster


@pytest.fixture(params=list(CLIENTS))
def client(request: pytest.FixtureRequest) -> ModuleType:
    module: ModuleType = CLIENTS[request.param]
    return module


def _close(producer: Any) -> None:
    closer = getattr(producer, "close", None)
    if closer is not None:
        closer()


def test_a_ten_second_linger_does_not_delay_flush_and_reports_come_first(client: ModuleType, mock: MockCluster) -> None:
    served: list[tuple[Any, int, str]] = []  # (error, offset, the thread that ran the callback)
    p = client.Producer({"bootstrap.servers": mock.bootstraps, "linger.ms": 10_000})
    try:
        p.list_topics(TOPIC, timeout=LIMIT)
        for i in range(3):
            p.produce(
                TOPIC,
                b"%d" % i,
                on_delivery=lambda err, msg: served.append((err, msg.offset(), threading.current_thread().name)),
            )
            assert p.flush(LIMIT) == 0, "flush() waited for linger.ms"
            assert len(served) == i + 1, "flush() returned before the report was served"
        assert [(err, offset) for err, offset, _ in served] == [(None, 0), (None, 1), (None, 2)]
        assert {name for _, _, name in served} == {threading.current_thread().name}
    finally:
        _close(p)


def test_a_record_produced_while_an_answer_is_awaited_leaves_within_the_same_flush(
    client: ModuleType, mock: MockCluster
) -> None:
    """The broker answers 300 ms late and one request is in flight at a time: the records wait for
    the leader's connection's handshake (its requests count against the limit), then the second
    for the first's answer, and the one flush() reports both. (kafkawire's sender, finding the
    connection at its limit with the handshake's request, used to wait for no answer but its own:
    both records sat until close().)"""
    reports: list[Any] = []
    conf = {"bootstrap.servers": mock.bootstraps, "linger.ms": 0, "max.in.flight.requests.per.connection": 1}
    p = client.Producer(conf)
    try:
        p.list_topics(TOPIC, timeout=LIMIT)
        mock.broker_set_rtt(1, 300)
        p.produce(TOPIC, b"first", on_delivery=lambda err, msg: reports.append((err, msg.offset())))
        p.poll(0)
        p.produce(TOPIC, b"second", on_delivery=lambda err, msg: reports.append((err, msg.offset())))
        assert p.flush(LIMIT) == 0
        assert reports == [(None, 0), (None, 1)]
    finally:
        _close(p)
