"""Request timeouts on librdkafka's clock (issue 49): with ``socket.timeout.ms`` 10, as a workflow
scheduler's Kafka provider sets it for its test connection, 100 synchronous commits on a busy
machine fail on neither client. librdkafka judges request deadlines in a scan its broker thread runs
about once a second, after reading the socket, so a loopback broker's 30 ms answer is never late;
kafkawire judged them to the millisecond and failed 1-5 commits in 100 (23 in 50 on a loaded host,
FindCoordinator timing out). Both clients run the same steps on the same Tansu broker, every core
kept busy meanwhile (tests/harness/load.py)."""

from __future__ import annotations

from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import unique_name
from tests.harness.load import BusyLoops
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

COMMITS = 100


def failed_commits(module: Any, bootstrap: str, topic: str) -> list[str]:
    """The errors of COMMITS synchronous commits of partition 0's offsets 1..COMMITS (none: [])."""
    consumer = module.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("scan"),
            "enable.auto.commit": False,
            "socket.timeout.ms": 10,
        }
    )
    errors = []
    try:
        consumer.assign([module.TopicPartition(topic, 0, 0)])
        for offset in range(1, COMMITS + 1):
            try:
                consumer.commit(offsets=[module.TopicPartition(topic, 0, offset)], asynchronous=False)
            except module.KafkaException as exc:
                errors.append(f"{exc.args[0].name()}: {exc.args[0].str()}")
        committed = consumer.committed([module.TopicPartition(topic, 0)], timeout=30)
        assert committed[0].offset == COMMITS or errors
    finally:
        consumer.close()
    return errors


def test_a_10_ms_socket_timeout_fails_no_synchronous_commit_on_either_client(tansu: TansuBroker) -> None:
    topic = unique_name("timeout-scan")
    create_topic(tansu.bootstrap, topic, 1)
    with BusyLoops():
        outcomes = {
            name: failed_commits(module, tansu.bootstrap, topic)
            for name, module in (("confluent-kafka", confluent_kafka), ("kafkawire", kafkawire))
        }
    assert outcomes == {"confluent-kafka": [], "kafkawire": []}
