"""Every wait wakes on its event (issue 37): a call that waits for something returns when that
something happened, never at the end of a time slice.

No test here measures time (bench/flush_latency.py does). Each checks the mechanism: the waits
of the client's callback queue count those that ended at their timeout
(`CallbackExecutor.timed_out`); a wait released by what it waited for leaves that count alone,
while the 100 ms slices of old ended there once or more per call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire import AIOProducer, Producer
from kafkawire.local_broker import TansuBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

LIMIT = 30.0  # every wait below has this bound; none should come near it


@pytest.fixture
def topic(tansu: TansuBroker, topic_name: Any) -> str:
    name: str = topic_name("waits")
    create_topic(tansu.bootstrap, name, 1)
    return name


def _producer(tansu: TansuBroker, **conf: Any) -> Producer:
    return Producer({"bootstrap.servers": tansu.bootstrap, **conf})


@pytest.mark.parametrize("mode", ["poll", "background"])
@pytest.mark.parametrize("with_callback", [False, True], ids=["no-callback", "on_delivery"])
def test_flush_is_released_by_the_last_report(tansu: TansuBroker, topic: str, mode: str, with_callback: bool) -> None:
    reports: list[Any] = []
    p = _producer(tansu, **{"delivery.reports": mode})
    try:
        kwargs = {"on_delivery": lambda err, msg: reports.append(err)} if with_callback else {}
        for i in range(5):
            p.produce(topic, b"v%d" % i, **kwargs)
            assert p.flush(LIMIT) == 0
        assert p._reports.timed_out == 0
        assert reports == ([None] * 5 if with_callback else [])
    finally:
        p.close()
    assert p._reports.timed_out == 0  # close() waited on the same event


def test_close_with_records_in_flight_is_released_by_their_reports(tansu: TansuBroker, topic: str) -> None:
    p = _producer(tansu, **{"linger.ms": 50})
    for i in range(20):
        p.produce(topic, b"v%d" % i)
    assert p.close(LIMIT)
    assert len(p) == 0
    assert p._reports.timed_out == 0


def test_aio_flush_is_released_by_the_last_report(tansu: TansuBroker, topic: str) -> None:
    async def main() -> int:
        p = AIOProducer({"bootstrap.servers": tansu.bootstrap})
        try:
            for i in range(5):
                fut = await p.produce(topic, b"v%d" % i)
                assert await p.flush(LIMIT) == 0
                assert (await fut).error() is None
            return p._reports.timed_out
        finally:
            await p.close()

    assert asyncio.run(main()) == 0


@pytest.mark.parametrize("mode", ["poll", "background"])
def test_produce_waiting_for_room_is_released_when_a_record_is_answered(
    tansu: TansuBroker, topic: str, mode: str
) -> None:
    """max.block.ms: with room for one record, each produce() waits for the one before to be
    reported; records without a callback free their room with no event to serve."""
    p = _producer(tansu, **{"delivery.reports": mode, "queue.buffering.max.messages": 1, "max.block.ms": 30_000})
    try:
        for i in range(5):
            p.produce(topic, b"v%d" % i)
        assert p.flush(LIMIT) == 0
        assert p._reports.timed_out == 0
    finally:
        p.close()


class _Watching:
    """An interceptor: the producer takes its checked path, not the lane's."""

    def on_send(self, record: Any) -> Any:
        return record


@pytest.mark.parametrize("path", ["lane", "checked"])
def test_produce_arrow_waiting_for_room_is_released_when_records_are_answered(
    tansu: TansuBroker, topic: str, path: str
) -> None:
    from kafkawire.producer.arrow import produce_arrow

    pa = pytest.importorskip("pyarrow")
    extra = {"interceptor.classes": [_Watching]} if path == "checked" else {}
    p = _producer(tansu, **{"queue.buffering.max.messages": 2, **extra})
    try:
        table = pa.record_batch({"value": pa.array([b"v%d" % i for i in range(10)], pa.binary())})
        produce_arrow(p, table, topic)
        assert p.flush(LIMIT) == 0
        assert p._reports.timed_out == 0
    finally:
        p.close()


def test_aio_produce_awaiting_room_is_woken_by_the_reports(tansu: TansuBroker, topic: str) -> None:
    """No max.block.ms: the wait for room has no timer, so only the reports' serving can end it."""

    async def main() -> int:
        p = AIOProducer({"bootstrap.servers": tansu.bootstrap, "queue.buffering.max.messages": 1})
        try:
            futures = [await p.produce(topic, b"v%d" % i) for i in range(5)]
            for fut in futures:
                assert (await fut).error() is None
            batch = await p.produce_batch(topic, [{"value": b"b%d" % i} for i in range(5)])
            assert (await batch).delivered == 5
            return p._reports.timed_out
        finally:
            await p.close()

    assert asyncio.run(asyncio.wait_for(main(), LIMIT)) == 0
