"""Shared fixtures: a real broker (Tansu), librdkafka's mock cluster, names."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kafkawire.local_broker import LocalBrokerUnavailable, TansuBroker
from tests.harness.judge import unique_name
from tests.harness.kafka_broker import KafkaBroker, KafkaUnavailable
from tests.harness.load import BusyLoops
from tests.harness.mock_cluster import MockCluster
from tests.harness.share import rotating_share


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafkawire")
    group.addoption(
        "--busy-loops", action="store_true", help="run each test with a busy loop on every core (tests/harness/load.py)"
    )
    group.addoption("--repeat", type=int, default=1, metavar="N", help="run each test N times")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    repeat = metafunc.config.getoption("repeat")
    if repeat > 1:
        metafunc.fixturenames.append("_repetition")
        metafunc.parametrize("_repetition", range(repeat), ids=lambda i: f"run{i + 1}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``rotating`` (heavy slow ones) run one part per commit when KAFKAWIRE_SHARE is
    set (CI), every one otherwise (`make test-all`): tests/harness/share.py picks the part."""
    rotating = [item for item in items if item.get_closest_marker("rotating") is not None]
    kept = {id(item) for item in rotating_share(rotating)}
    left_out = [item for item in rotating if id(item) not in kept]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        gone = {id(item) for item in left_out}
        items[:] = [item for item in items if id(item) not in gone]


@pytest.fixture(autouse=True)
def _under_load(request: pytest.FixtureRequest) -> Iterator[None]:
    """With ``--busy-loops`` (`make test-slow`), every core is kept busy while the test runs."""
    if not request.config.getoption("busy_loops"):
        yield
        return
    with BusyLoops():
        yield


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
