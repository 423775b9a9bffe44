"""A record whose Produce timed out is reported with ``_MSG_TIMED_OUT`` (issue 53), on both clients
against librdkafka's mock with a slow leader.

librdkafka turns a Produce's request-level timeout into the message-level code in every record it
fails (``rd_kafka_handle_Produce_error``), so a program checks ``err.code() ==
KafkaError._MSG_TIMED_OUT`` alone. Two records of two partitions of one leader leave in one request
(flush), the first queued well before the second: the request times out at the first one's
message timeout (or at ``request.timeout.ms``) while the second still has time. With no
retries, or with idempotence (a batch that may be in the log is not sent again under a new epoch),
the second fails then too: with ``_MSG_TIMED_OUT``, as librdkafka's, not ``_TIMED_OUT``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire import KafkaError
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

WAIT = 60.0
AGE = 1.5  # seconds the first record waits before the second is produced
CASES = {
    "given up, no retries": {"retries": 0, "message.timeout.ms": 3000},
    "given up, idempotent": {"enable.idempotence": True, "message.timeout.ms": 3000},
    "request timeout, no retries": {"retries": 0, "message.timeout.ms": 6000, "request.timeout.ms": 2500},
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("module", [confluent_kafka, kafkawire], ids=["confluent-kafka", "kafkawire"])
def test_a_produce_that_times_out_reports_msg_timed_out(
    mock_cluster: MockCluster, topic_name: Callable[[str], str], module: Any, case: str
) -> None:
    topic = topic_name("slow")
    mock_cluster.create_topic(topic, 2)
    for partition in (0, 1):
        mock_cluster.partition_set_leader(topic, partition, 1)
    conf = {"bootstrap.servers": mock_cluster.bootstraps, "linger.ms": 2000, **CASES[case]}
    p = module.Producer(conf)
    reports: list[tuple[bytes, Any]] = []
    try:
        for partition in (0, 1):
            p.produce(topic, b"warm-up", partition=partition)
        assert p.flush(WAIT) == 0
        mock_cluster.broker_set_rtt(1, 20_000)
        p.produce(topic, b"old", partition=0, on_delivery=lambda err, msg: reports.append((msg.value(), err)))
        time.sleep(AGE)
        p.produce(topic, b"young", partition=1, on_delivery=lambda err, msg: reports.append((msg.value(), err)))
        assert p.flush(WAIT) == 0
    finally:
        mock_cluster.broker_set_rtt(1, 0)
        close = getattr(p, "close", None)
        if close is not None:
            close(10)
    assert sorted(value for value, _ in reports) == [b"old", b"young"]
    codes = {value: None if err is None else err.code() for value, err in reports}
    assert codes == {b"old": KafkaError._MSG_TIMED_OUT, b"young": KafkaError._MSG_TIMED_OUT}, [
        (value, err and err.str()) for value, err in reports
    ]
