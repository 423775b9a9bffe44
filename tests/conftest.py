"""Shared fixtures: a real broker (Tansu), librdkafka's mock cluster, names."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kafkawire.local_broker import LocalBrokerUnavailable, TansuBroker
from tests.harness.judge import unique_name
from tests.harness.kafka_broker import KafkaBroker, KafkaUnavailable
from tests.harness.mock_cluster import MockCluster


@pytest.fixture(scope="session")
def tansu() -> Iterator[TansuBroker]:
    """One memory-only Tansu broker on 127.0.0.1 for the whole session.

    Tests share it, so they must use fresh topic names (``topic_name``).
    """
    try:
        broker = TansuBroker()
        broker.start()
    except LocalBrokerUnavailable as exc:
        pytest.fail(f"Tansu is not available: {exc}")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka23() -> Iterator[KafkaBroker]:
    """One real Apache Kafka 2.3 broker (JVM + ZooKeeper) on 127.0.0.1 for the whole session.

    Shared like ``tansu``: tests use fresh topic and group names.
    """
    try:
        broker = KafkaBroker().start()
    except KafkaUnavailable as exc:
        pytest.fail(f"Kafka 2.3 is not available: {exc}")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def mock_cluster() -> Iterator[MockCluster]:
    """A fresh 3-broker librdkafka mock cluster for one test."""
    with MockCluster(broker_count=3) as cluster:
        yield cluster


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Factory of unique topic names: ``topic_name("orders")``."""
    base = "".join(ch if ch.isalnum() else "-" for ch in request.node.name)[:40]

    def make(prefix: str = "") -> str:
        return unique_name(f"{prefix or 't'}-{base}".strip("-"))

    return make
