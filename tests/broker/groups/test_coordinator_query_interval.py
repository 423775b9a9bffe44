"""coordinator.query.interval.ms on a real broker (Tansu), confluent-kafka the reference: a group
member asks FindCoordinator again and again while it stays in the group, seen in debug=protocol."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest

import kafkawire
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import unique_name

pytestmark = pytest.mark.broker

QUERIES = 3  # FindCoordinator requests to see: the join's lookup, then the periodic ones


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _find_coordinator_requests(module: Any, bootstrap: str, topic: str, interval_ms: int) -> int:
    """A member that joins and stays: how many FindCoordinator requests it sent (up to QUERIES more
    than the join needed, or until 60 s have passed)."""
    handler = _Lines()
    logger = logging.getLogger(unique_name("cq"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    consumer = module.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("g"),
            "debug": "protocol",
            "coordinator.query.interval.ms": interval_ms,
            "logger": logger,
        }
    )

    def sent() -> int:
        return sum("Sent FindCoordinatorRequest" in line for line in handler.lines)

    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert consumer.assignment(), "the member never joined"
        while sent() < QUERIES and time.monotonic() < deadline:
            consumer.poll(0.2)
        return sent()
    finally:
        consumer.close()


@pytest.mark.slow  # (make test's time: CI runs it in test-slow)
def test_the_coordinator_is_queried_again_each_interval(tansu: TansuBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("cq")
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": tansu.bootstrap})
    admin.create_topics([confluent_kafka.admin.NewTopic(topic, 1, 1)])[topic].result(30)
    assert _find_coordinator_requests(confluent_kafka, tansu.bootstrap, topic, 500) >= QUERIES
    assert _find_coordinator_requests(kafkawire, tansu.bootstrap, topic, 500) >= QUERIES
