"""acks=0 follows a moved leader (issues 49 and 53), on both clients against librdkafka's mock.

With acks=0 no answer comes back, so a partition error cannot reach the producer in one: the
broker closes the connection instead, so that the client refreshes its metadata (the seeds'
producer concepts page). librdkafka asks for the known topics' metadata whenever a broker's
connection goes down. Here the partition's leader moves from broker 1 to broker 2 and broker 1
closes the connection on every Produce: each client must ask for metadata after the close and send
its next records to broker 2, where they are written. The records sent before the answer are lost
on both clients (reported delivered: acks=0 knows no more).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire import KafkaError
from kafkawire.protocol.apis import METADATA, PRODUCE
from tests.harness.judge import consume_all, judge_config
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

WAIT = 60.0
AFTER = 5  # records produced once the new leader took a Produce: all must be in the log


@pytest.mark.parametrize("module", [confluent_kafka, kafkawire], ids=["confluent-kafka", "kafkawire"])
def test_acks_zero_asks_metadata_after_a_close_and_follows_the_leader(
    mock_cluster: MockCluster, topic_name: Callable[[str], str], module: Any
) -> None:
    topic = topic_name("acks0")
    mock_cluster.create_topic(topic, 1)
    mock_cluster.partition_set_leader(topic, 0, 1)
    reports: list[Any] = []
    p = module.Producer({"bootstrap.servers": mock_cluster.bootstraps, "acks": 0, "linger.ms": 0})
    try:
        p.produce(topic, b"warm-up", on_delivery=lambda err, msg: reports.append(err))
        assert p.flush(WAIT) == 0  # (written: acks=0 knows no more, so the log is asked)
        assert [m.value() for m in consume_all(mock_cluster.bootstraps, topic, 1, timeout=WAIT)] == [b"warm-up"]
        mock_cluster.start_request_tracking()
        mock_cluster.partition_set_leader(topic, 0, 2)
        mock_cluster.push_request_error_rtts(1, PRODUCE.key, [(KafkaError._TRANSPORT, 0)] * 50)

        def produce_to(broker: int) -> bool:
            return any(r.broker_id == broker for r in mock_cluster.requests_of(PRODUCE.key))

        # The records sent before the answer still go to the old leader (lost, on both clients):
        # librdkafka asks when the connection comes back up (no other broker is connected then).
        sent = 0
        deadline = time.monotonic() + WAIT
        while not produce_to(2):
            assert time.monotonic() < deadline, "no Produce ever reached the new leader"
            p.produce(topic, b"before-%d" % sent, on_delivery=lambda err, msg: reports.append(err))
            assert p.flush(WAIT) == 0
            sent += 1
            time.sleep(0.01)
        tracked = mock_cluster.get_requests()
        closed = min(r.timestamp_us for r in tracked if r.api_key == PRODUCE.key and r.broker_id == 1)
        moved = min(r.timestamp_us for r in tracked if r.api_key == PRODUCE.key and r.broker_id == 2)
        assert any(r.api_key == METADATA.key and closed < r.timestamp_us < moved for r in tracked)
        kept = [b"kept-%d" % i for i in range(AFTER)]
        for value in kept:
            p.produce(topic, value, on_delivery=lambda err, msg: reports.append(err))
        assert p.flush(WAIT) == 0
    finally:
        close = getattr(p, "close", None)
        if close is not None:
            close(10)
    assert reports == [None] * (1 + sent + AFTER)  # acks=0: every record is reported delivered
    judge = confluent_kafka.Consumer(judge_config(mock_cluster.bootstraps, **{"group.id": topic}))
    try:
        _, high = judge.get_watermark_offsets(confluent_kafka.TopicPartition(topic, 0), timeout=WAIT)
    finally:
        judge.close()
    read = consume_all(mock_cluster.bootstraps, topic, high, timeout=WAIT)
    in_log = [m.value() for m in sorted(read, key=lambda m: m.offset())]
    # The warm-up, then what reached the new leader: the last records produced before it was
    # seen taking one (which are the first that reached it), and every later one.
    assert len(in_log) == high
    assert in_log[0] == b"warm-up"
    assert in_log[-AFTER:] == kept, in_log
    assert all(v.startswith(b"before-") for v in in_log[1:-AFTER]), in_log
