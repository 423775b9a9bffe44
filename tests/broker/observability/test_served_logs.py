"""A producer's ``logger`` hears the client's records from poll() and flush(), on the application's
thread, as confluent-kafka's (issue 49; its docs: the logs are forwarded to be served by poll()):
given a logger, confluent-kafka turns on librdkafka's ``log.queue`` and forwards that queue to the
one poll() drains. Both clients, the same steps against librdkafka's mock: every record the logger
gets arrives on the thread that called poll() or flush(), none on the client's own threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

WAIT = 60.0


class Heard:
    """Confluent-kafka's logger shape (an object with ``log``), noting each record's thread."""

    def __init__(self) -> None:
        self.records: list[tuple[str, int, str]] = []

    def log(self, level: int, msg: str, *args: Any) -> None:
        self.records.append((threading.current_thread().name, level, msg % args if args else msg))


@pytest.mark.parametrize("module", [confluent_kafka, kafkawire], ids=["confluent-kafka", "kafkawire"])
def test_log_records_are_served_by_poll_and_flush(
    mock_cluster: MockCluster, topic_name: Callable[[str], str], module: Any
) -> None:
    topic = topic_name("logs")
    mock_cluster.create_topic(topic, 1)
    heard = Heard()
    p = module.Producer({"bootstrap.servers": mock_cluster.bootstraps, "debug": "broker,topic", "logger": heard})
    try:
        p.produce(topic, b"one")
        assert p.flush(WAIT) == 0
        deadline = time.monotonic() + WAIT
        while not heard.records:
            assert time.monotonic() < deadline, "no log record served"
            p.poll(0.1)
        p.produce(topic, b"two")
        assert p.flush(WAIT) == 0
        p.poll(0)
    finally:
        close = getattr(p, "close", None)
        if close is not None:
            close(10)
    here = threading.current_thread().name
    threads = {thread for thread, _, _ in heard.records}
    assert threads == {here}, (threads, heard.records[:5])
