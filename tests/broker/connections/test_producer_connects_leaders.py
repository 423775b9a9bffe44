"""A producer asked about a topic connects to its partitions' leaders before the first record, as
librdkafka does (its ``list_topics(topic)`` makes a topic handle, whose partitions are delegated
to their leaders' broker threads, which connect). Without it, the first batch waited for the
connection, its handshake steps each waiting for the GIL while the application produced in a loop.
Judged against confluent-kafka on the same Tansu broker, through each client's ``debug=broker`` lines."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.broker.observability.test_debug_logs import LINE, _logger
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

# The last step of a connection coming up: librdkafka's state name, then ours.
UP = {"confluent-kafka": "UP", "kafkawire": "READY"}


@pytest.mark.parametrize("client", ["confluent-kafka", "kafkawire"])
def test_list_topics_of_a_topic_connects_the_producer_to_its_leaders(tansu: Any, topic_name: Any, client: str) -> None:
    bootstrap = tansu.bootstrap
    topic = topic_name("conn")
    create_topic(bootstrap, topic, 2)
    module: Any = confluent_kafka if client == "confluent-kafka" else kafkawire
    logger, capture = _logger(f"conn-{client}")
    producer = module.Producer({"bootstrap.servers": bootstrap, "debug": "broker", "logger": logger})
    try:
        leaders = {p.leader for p in producer.list_topics(topic, timeout=10).topics[topic].partitions.values()}
        assert leaders and all(leader >= 0 for leader in leaders)
        names = {f"{bootstrap}/{leader}" for leader in leaders}

        def up() -> set[str]:
            seen = set()
            for line in list(capture.lines):
                m = LINE.match(line)
                if m and m["fac"] == "STATE" and m["msg"].endswith(f"-> {UP[client]}"):
                    seen |= {n for n in names if m["msg"].startswith(f"{n}: Broker changed state")}
            return seen

        deadline = time.monotonic() + 60
        while up() != names and time.monotonic() < deadline:
            producer.poll(0.05)
        assert up() == names, [line for line in capture.lines if "STATE" in line]
        assert len(producer) == 0  # nothing was produced: the connections came from list_topics alone
    finally:
        producer.flush(5)
