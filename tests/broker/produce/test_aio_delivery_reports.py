"""`AIOProducer`'s delivery reports are served on the event loop (no report thread), against real brokers.

Each test runs on Tansu and on librdkafka's mock cluster (3 brokers). What matters: every record
ends in exactly one report, futures and callbacks are touched only on their loop's thread, and
a full buffer, flush(), close(), purge(), cancelled futures, raising callbacks and several loops
all keep working without a thread of their own.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire import AIOProducer, KafkaError, KafkaException, Message
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import consume_all
from tests.harness.mock_cluster import MockCluster
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 3
UNREACHABLE = "127.0.0.1:1"


@pytest.fixture(params=["tansu", "mock"])
def bootstrap(request: pytest.FixtureRequest) -> str:
    if request.param == "tansu":
        broker: TansuBroker = request.getfixturevalue("tansu")
        return broker.bootstrap
    cluster: MockCluster = request.getfixturevalue("mock_cluster")
    return cluster.bootstraps


@pytest.fixture
def topic(request: pytest.FixtureRequest, bootstrap: str, topic_name: Callable[[str], str]) -> str:
    name = topic_name("aio")
    if "mock_cluster" in request.fixturenames:
        cluster: MockCluster = request.getfixturevalue("mock_cluster")
        cluster.create_topic(name, partitions=PARTITIONS, replication=3)
    else:
        create_topic(bootstrap, name, PARTITIONS)
    return name


def report_threads() -> set[threading.Thread]:
    """Report threads alive now (other tests' producers may have left some: compare with before)."""
    return {t for t in threading.enumerate() if "reports" in t.name}


class Reports:
    """on_delivery calls: (thread, err, msg), plus whether the record's future was settled first."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, KafkaError | None, Message]] = []
        self.futures: dict[bytes, asyncio.Future[Message]] = {}
        self.settled_first = True

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        self.calls.append((threading.get_ident(), err, msg))
        value = msg.value()
        assert value is not None
        self.settled_first &= self.futures[value].done()

    def threads(self) -> set[int]:
        return {t for t, _, _ in self.calls}


def test_every_record_reported_once_on_the_loop_thread(bootstrap: str, topic: str) -> None:
    count = 20_000
    reports = Reports()

    before = report_threads()

    async def main() -> tuple[int, list[Message], set[threading.Thread]]:
        async with AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 5}) as p:
            for i in range(count):
                value = b"%d" % i
                reports.futures[value] = await p.produce(topic, value, on_delivery=reports)
                if i == count // 2:
                    await asyncio.sleep(0.05)  # some reports are served while producing
            threads = report_threads() - before
            delivered = await asyncio.wait_for(asyncio.gather(*reports.futures.values()), 60)
        return threading.get_ident(), delivered, threads

    loop_thread, delivered, threads = asyncio.run(main())
    assert threads == set(), "no report thread for an AIOProducer"
    assert reports.threads() == {loop_thread}
    assert reports.settled_first, "each future settles (on the loop) before its on_delivery runs"
    values = collections.Counter(msg.value() for _, _, msg in reports.calls)
    assert len(values) == count and set(values.values()) == {1}, "exactly one report per record"
    assert all(err is None for _, err, _ in reports.calls)
    positions = {(m.partition(), m.offset()) for m in delivered}
    assert len(positions) == count and all(offset is not None and offset >= 0 for _, offset in positions)
    assert [m.value() for m in delivered] == [b"%d" % i for i in range(count)]
    stored = consume_all(bootstrap, topic, count, timeout=30)
    assert {(m.partition(), m.offset()) for m in stored} == positions


def test_reports_queued_while_the_loop_serves_are_served_too(bootstrap: str, topic: str) -> None:
    """A slow on_delivery keeps the loop serving while the IO thread queues more: those come with no
    wake-up (the queue never went empty), so the loop must look again by itself."""
    reports = Reports()

    def slow(err: KafkaError | None, msg: Message) -> None:
        reports(err, msg)
        time.sleep(0.001)

    async def main() -> list[Message]:
        # Many small batches, so that several are queued at once and more arrive while serving.
        p = AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 5})
        for i in range(1_000):
            value = b"%d" % i
            reports.futures[value] = await p.produce(topic, value, partition=i % PARTITIONS, on_delivery=slow)
            if i % 20 == 0:
                await asyncio.sleep(0.001)
        delivered = await asyncio.wait_for(asyncio.gather(*reports.futures.values()), 30)
        await p.close()  # (not on failure: close() would wait for the reports missing)
        return delivered

    delivered = asyncio.run(main())
    assert len(delivered) == len(reports.calls) == 1_000


def test_full_buffer_awaits_room_served_on_the_loop(bootstrap: str, topic: str) -> None:
    count = 3_000
    reports = Reports()

    async def main() -> tuple[int, int, list[Message]]:
        conf = {"bootstrap.servers": bootstrap, "linger.ms": 1, "queue.buffering.max.messages": 50}
        async with AIOProducer(conf) as p:
            most = 0
            for i in range(count):
                value = b"%d" % i
                reports.futures[value] = await p.produce(topic, value, on_delivery=reports)
                most = max(most, len(p))
            delivered = await asyncio.wait_for(asyncio.gather(*reports.futures.values()), 60)
        return threading.get_ident(), most, delivered

    loop_thread, most, delivered = asyncio.run(main())
    assert most == 50, "the buffer filled up and produce() waited for room"
    assert len({(m.partition(), m.offset()) for m in delivered}) == count
    assert len(reports.calls) == count and reports.threads() == {loop_thread}


def test_full_buffer_raises_after_max_block_ms_without_blocking_the_loop() -> None:
    async def main() -> tuple[float, int]:
        conf = {"bootstrap.servers": UNREACHABLE, "queue.buffering.max.messages": 5, "max.block.ms": 300}
        p = AIOProducer(conf)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        tick = asyncio.create_task(ticker())
        try:
            for _ in range(5):
                await p.produce("t", b"x")
            start = time.monotonic()
            with pytest.raises(BufferError):
                await p.produce("t", b"x")
            return time.monotonic() - start, ticks
        finally:
            tick.cancel()
            await p.purge()
            await p.close()

    waited, ticks = asyncio.run(main())
    assert 0.25 <= waited < 5
    assert ticks >= 10, "the loop kept running while produce() awaited room"


def test_flush_sends_at_once_and_serves_every_report_on_the_loop(bootstrap: str, topic: str) -> None:
    reports = Reports()

    async def main() -> tuple[int, int, bool]:
        # A linger far past flush()'s own bound: only flush() makes these go now.
        async with AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 120_000}) as p:
            for i in range(1_000):
                value = b"%d" % i
                reports.futures[value] = await p.produce(topic, value, on_delivery=reports)
            remaining = await p.flush(30)
            all_done = all(f.done() for f in reports.futures.values())
        return threading.get_ident(), remaining, all_done

    loop_thread, remaining, all_done = asyncio.run(main())
    assert remaining == 0 and all_done, "flush() waited for linger.ms"
    assert len(reports.calls) == 1_000 and reports.threads() == {loop_thread}
    assert all(f.exception() is None for f in reports.futures.values())


def test_cancelled_futures_and_raising_callbacks_lose_no_report(bootstrap: str, topic: str) -> None:
    calls: list[int] = []
    errors: list[dict[str, Any]] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        calls.append(int(msg.value() or b""))
        if int(msg.value() or b"") % 7 == 0:
            raise RuntimeError("user callback failed")

    async def main() -> list[asyncio.Future[Message]]:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
        # Reports in order per partition need the idempotent producer: without it (librdkafka's
        # default) a retried batch may land behind the next, on both clients (docs/producing.md).
        config = {"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True}
        async with AIOProducer(config) as p:
            futures = []
            for i in range(300):
                fut = await p.produce(topic, b"%d" % i, partition=i % PARTITIONS, on_delivery=on_delivery)
                if i % 5 == 0:
                    fut.cancel()
                futures.append(fut)
            await asyncio.wait_for(p.flush(), 30)
        return futures

    futures = asyncio.run(main())
    assert sorted(calls) == list(range(300)), "on_delivery ran once per record, cancelled ones too"
    assert len(errors) == len(range(0, 300, 7))
    assert all(isinstance(e["exception"], RuntimeError) for e in errors)
    for i, fut in enumerate(futures):
        assert fut.cancelled() if i % 5 == 0 else fut.result().value() == b"%d" % i
    per_partition: dict[int, list[int]] = collections.defaultdict(list)
    for value in calls:
        per_partition[value % PARTITIONS].append(value)
    assert all(values == sorted(values) for values in per_partition.values()), "reports in order per partition"


def test_failures_settle_on_the_loop_purge_and_close(bootstrap: str, topic: str) -> None:
    async def main() -> tuple[int, set[int], list[str | None], list[bool]]:
        p = AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 10_000})
        threads: set[int] = set()

        def seen_on(err: KafkaError | None, msg: Message) -> None:
            threads.add(threading.get_ident())

        await p.list_topics(topic, 10)
        purged = [await p.produce(topic, b"%d" % i, on_delivery=seen_on) for i in range(50)]
        await p.purge()
        codes = []
        for fut in purged:
            with pytest.raises(KafkaException) as exc:
                await asyncio.wait_for(fut, 10)
            codes.append(exc.value.args[0].name())
        # close() flushes what is left (here at once, despite the linger) and reports all of it.
        left = [await p.produce(topic, b"%d" % i, on_delivery=seen_on) for i in range(50)]
        await p.close()
        return threading.get_ident(), threads, sorted(set(codes)), [f.done() and f.exception() is None for f in left]

    loop_thread, threads, codes, closed_ok = asyncio.run(main())
    assert codes == ["_PURGE_QUEUE"]
    assert all(closed_ok)
    assert threads == {loop_thread}


def test_callbacks_of_the_configuration_run_on_the_loop(bootstrap: str) -> None:
    async def main() -> tuple[int, set[int]]:
        threads: set[int] = set()
        got = asyncio.Event()

        def stats_cb(_json: str) -> None:
            threads.add(threading.get_ident())
            got.set()  # an asyncio.Event: only safe on the loop's thread

        conf = {"bootstrap.servers": bootstrap, "statistics.interval.ms": 50, "stats_cb": stats_cb}
        async with AIOProducer(conf) as p:
            await p.list_topics(None, 10)
            await asyncio.wait_for(got.wait(), 10)
        return threading.get_ident(), threads

    loop_thread, threads = asyncio.run(main())
    assert threads == {loop_thread}


def test_a_loop_awaiting_reports_is_served_when_the_last_loop_to_produce_has_ended(bootstrap: str, topic: str) -> None:
    """Loop C awaits its record's report while loop D produces after it and ends at once, before
    any report (linger.ms holds them): C's future settles. (Reports used to wake the last loop
    alone: D was closed, the wake-up dropped, and C waited for good.)"""
    p = AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 500})
    produced = threading.Event()
    got: list[bytes | None] = []

    async def awaiting() -> None:
        fut = await p.produce(topic, b"c")
        produced.set()
        got.append((await asyncio.wait_for(fut, 20)).value())

    waiter = threading.Thread(target=asyncio.run, args=(awaiting(),))
    waiter.start()
    assert produced.wait(20)

    async def last() -> None:
        await p.produce(topic, b"d")

    asyncio.run(last())
    waiter.join(30)
    assert got == [b"c"]

    async def close() -> None:
        await p.close()

    asyncio.run(close())


def test_several_loops_share_one_producer(bootstrap: str, topic: str) -> None:
    """One loop after another, then two at once on two threads: each record's future settles and
    its on_delivery runs on the thread of the loop that produced it."""
    before = report_threads()
    p = AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 2})
    seen: list[tuple[int, int, bytes]] = []  # (producing loop's thread, serving thread, value)

    async def produce_some(tag: bytes, count: int) -> int:
        me = threading.get_ident()

        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            seen.append((me, threading.get_ident(), msg.value() or b""))

        futures = [await p.produce(topic, tag + b"%d" % i, on_delivery=on_delivery) for i in range(count)]
        delivered = await asyncio.wait_for(asyncio.gather(*futures), 30)
        assert all(m.error() is None for m in delivered)
        return len(delivered)

    assert asyncio.run(produce_some(b"a", 200)) == 200
    assert asyncio.run(produce_some(b"b", 200)) == 200
    results: list[int] = []

    def run(tag: bytes) -> None:
        results.append(asyncio.run(produce_some(tag, 1_000)))

    workers = [threading.Thread(target=run, args=(tag,)) for tag in (b"c", b"d")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert results == [1_000, 1_000]

    async def close() -> None:
        await p.close()

    asyncio.run(close())
    assert len(seen) == 2_400 and len({v for _, _, v in seen}) == 2_400
    assert all(producing == serving for producing, serving, _ in seen)
    assert report_threads() <= before
