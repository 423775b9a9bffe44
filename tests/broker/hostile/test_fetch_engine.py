"""The fetch engine against a hostile peer (tests/harness/hostile.py in front of Tansu): damaged,
cut and unanswered Fetch answers cost a retry (and one event where the application must know),
never a record, a duplicate or the IO thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkawire import KafkaError, Producer
from kafkawire.local_broker import TansuBroker
from kafkawire.protocol.apis import FETCH
from tests.broker.hostile.test_range_reads import _corrupt_crc
from tests.harness.fetching import settings, taker
from tests.harness.hostile import Fault, HostileProxy, cut_body, rewrite, silent, truncated
from tests.harness.hostile_checks import FAST, hostile_tansu
from tests.harness.judge import unique_name

pytestmark = pytest.mark.broker

VALUES = [b"engine-%03d" % i for i in range(40)]


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[TansuBroker, HostileProxy]]:
    yield from hostile_tansu()


@pytest.fixture(scope="module")
def topic(hostile: tuple[TansuBroker, HostileProxy]) -> str:
    _, proxy = hostile
    name = unique_name("hostile-engine")
    producer = Producer({"bootstrap.servers": proxy.address, **FAST})
    try:
        producer.list_topics(name, timeout=10)
        for value in VALUES:
            producer.produce(name, value=value, partition=0)
        assert producer.flush(15) == 0
    finally:
        producer.close(10)
    return name


@pytest.fixture(autouse=True)
def good_peer_after(hostile: tuple[TansuBroker, HostileProxy]) -> Iterator[None]:
    yield
    hostile[1].clear()


def test_a_corrupt_batch_is_fetched_again_and_told_once_under_check_crcs(
    hostile: tuple[TansuBroker, HostileProxy], topic: str
) -> None:
    _, proxy = hostile
    proxy.on(FETCH, rewrite(_corrupt_crc), times=3)
    with taker(proxy.address, settings(check_crcs=True, fetch_error_backoff_ms=50), **FAST) as t:
        t.engine.assign([((topic, 0), 0, None)])
        got = t.take(len(VALUES) + 1, errors=True)
    events = [m for m in got if m.error() is not None]
    assert [e.error().code() for e in events] == [KafkaError._BAD_MSG]
    assert [m.value() for m in got if m.error() is None] == VALUES


@pytest.mark.parametrize("fault", [cut_body(0.5), truncated(0.5), silent], ids=["cut-body", "truncated", "silent"])
def test_lost_fetch_answers_cost_a_retry_not_a_record(
    hostile: tuple[TansuBroker, HostileProxy], topic: str, fault: Fault
) -> None:
    _, proxy = hostile
    proxy.on(FETCH, fault, times=2)
    with taker(proxy.address, settings(fetch_error_backoff_ms=50), **FAST) as t:
        t.engine.assign([((topic, 0), 0, None)])
        assert [m.value() for m in t.take(len(VALUES), timeout=60)] == VALUES
        assert t.quiet(0.3) == []
