"""asyncio faces and an admin call on Kafka 2.3, confluent-kafka's behaviour the reference: the
same steps on both clients, the outcomes compared.

An async on_assign that assigns itself (no "already assigned"), AIOProducer's constructor
arguments and transactional calls, and delete_records' futures keyed with the offsets asked for."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import confluent_kafka.aio
import pytest

import kafkawire
import kafkawire.admin
import kafkawire.aio
from tests.harness.judge import Record, consume_all, produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

CLIENTS = {"theirs": confluent_kafka, "ours": kafkawire}
AIO = {"theirs": confluent_kafka.aio, "ours": kafkawire.aio}
ADMIN = {"theirs": confluent_kafka.admin, "ours": kafkawire.admin}


def _bootstrap(kafka23: Any) -> str:
    return str(kafka23.bootstrap() if callable(kafka23.bootstrap) else kafka23.bootstrap)


async def _assigning_itself(aio: Any, lib: Any, bootstrap: str, topic: str, assignor: str) -> list[Any]:
    seen: list[Any] = []

    async def on_assign(consumer: Any, parts: list[Any]) -> None:
        seen.append(("on_assign", sorted(tp.partition for tp in parts)))
        await asyncio.sleep(0.01)  # the callback really suspends before it assigns
        starts = [lib.TopicPartition(tp.topic, tp.partition, 1) for tp in parts]  # from offset 1
        try:
            if assignor == "cooperative-sticky":
                await consumer.incremental_assign(starts)
            else:
                await consumer.assign(starts)
        except Exception as exc:
            seen.append(("assign raised", repr(exc)))

    consumer = aio.AIOConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("grp"),
            "auto.offset.reset": "earliest",
            "partition.assignment.strategy": assignor,
        }
    )
    try:
        await consumer.subscribe([topic], on_assign=on_assign)
        deadline = time.monotonic() + 60
        while len(seen) < 3 and time.monotonic() < deadline:
            m = await consumer.poll(0.5)
            if m is not None and m.error() is None:
                seen.append(("record", m.partition(), m.offset()))
        seen.append(("assignment", sorted(tp.partition for tp in await consumer.assignment())))
    finally:
        await consumer.close()
    return seen


@pytest.mark.parametrize("assignor", ["cooperative-sticky", "range"])
def test_async_on_assign_that_assigns_itself_gets_no_default(
    kafka23: Any, topic_name: Callable[[str], str], assignor: str
) -> None:
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("aioassign")
    create_topic(bootstrap, topic, 1)
    produce_with_confluent(bootstrap, topic, [b"a", b"b", b"c"])
    seen = {
        name: asyncio.run(_assigning_itself(AIO[name], lib, bootstrap, topic, assignor))
        for name, lib in CLIENTS.items()
    }
    expected = [("on_assign", [0]), ("record", 0, 1), ("record", 0, 2), ("assignment", [0])]
    assert seen["ours"] == seen["theirs"] == expected


def test_aio_producer_takes_confluents_constructor_arguments(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    """max_workers and executor as confluent-kafka's; batch_size and buffer_timeout are accepted and
    mean nothing here (README, "differs on purpose"): a record is queued in the producer at once and
    delivered without a flush, where confluent-kafka holds it in its own buffer for buffer_timeout."""
    bootstrap = _bootstrap(kafka23)
    topic = topic_name("aioctor")
    create_topic(bootstrap, topic, 1)
    conf = {"bootstrap.servers": bootstrap, "linger.ms": 5}

    async def run(aio: Any) -> list[int]:
        pool = concurrent.futures.ThreadPoolExecutor(2)
        offsets = []
        for args in ({"max_workers": 5, "executor": None}, {"executor": pool}, {"max_workers": 1, "batch_size": 10}):
            producer = aio.AIOProducer(dict(conf), **args)
            delivered = await producer.produce(topic, value=b"x")
            await producer.flush()
            offsets.append((await delivered).offset())
            await producer.close()
        pool.shutdown()
        return offsets

    assert asyncio.run(run(confluent_kafka.aio)) == [0, 1, 2]
    assert asyncio.run(run(kafkawire.aio)) == [3, 4, 5]

    async def unbuffered() -> int:
        async with kafkawire.aio.AIOProducer(dict(conf), batch_size=1_000_000, buffer_timeout=3600.0) as producer:
            delivered = await producer.produce(topic, value=b"y")
            return (await asyncio.wait_for(delivered, 60)).offset()  # no flush: nothing held back

    assert asyncio.run(unbuffered()) == 6


async def _transactions(aio: Any, lib: Any, bootstrap: str, topic: str, group: str) -> None:
    producer = aio.AIOProducer({"bootstrap.servers": bootstrap, "transactional.id": unique_name("txn")})
    member = lib.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        await producer.init_transactions(30)
        await producer.begin_transaction()
        for v in (b"kept-1", b"kept-2"):
            await producer.produce(topic, value=v)
        await producer.send_offsets_to_transaction(
            [lib.TopicPartition(topic, 0, 7)], member.consumer_group_metadata(), 30
        )
        await producer.commit_transaction(30)
        await producer.begin_transaction()
        await producer.produce(topic, value=b"aborted")
        await producer.abort_transaction(30)
        await producer.begin_transaction()
        await producer.produce(topic, value=b"kept-3")
        await producer.commit_transaction(30)
    finally:
        member.close()
        await producer.close()


def test_aio_producer_transactions(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = _bootstrap(kafka23)
    seen = {}
    for name, lib in CLIENTS.items():
        topic, group = topic_name(f"aiotxn-{name}"), unique_name("grp")
        create_topic(bootstrap, topic, 1)
        asyncio.run(_transactions(AIO[name], lib, bootstrap, topic, group))
        values = [m.value() for m in consume_all(bootstrap, topic, 3, timeout=30, settle=1.0)]  # read_committed
        judge = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        try:
            deadline = time.monotonic() + 30  # Kafka 2.3: visible once the COMMIT marker is written
            committed = -1
            while committed != 7 and time.monotonic() < deadline:
                committed = judge.committed([confluent_kafka.TopicPartition(topic, 0)], timeout=10)[0].offset
        finally:
            judge.close()
        seen[name] = (values, committed)
    assert seen["ours"] == seen["theirs"] == ([b"kept-1", b"kept-2", b"kept-3"], 7)


def test_delete_records_futures_keyed_with_the_offsets_asked(kafka23: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = _bootstrap(kafka23)
    seen = {}
    for name, lib in CLIENTS.items():
        topic = topic_name(f"delrec-{name}")
        create_topic(bootstrap, topic, 2)
        produce_with_confluent(bootstrap, topic, [Record(value=b"%d" % i, partition=i % 2) for i in range(6)])
        admin = ADMIN[name].AdminClient({"bootstrap.servers": bootstrap})
        try:
            futures = admin.delete_records([lib.TopicPartition(topic, 0, 2), lib.TopicPartition(topic, 1, -1)])
            seen[name] = sorted(
                (tp.partition, tp.offset, tp.error, fut.result(30).low_watermark) for tp, fut in futures.items()
            )
            assert futures[lib.TopicPartition(topic, 0)] is futures[lib.TopicPartition(topic, 0, 2)]  # by partition too
        finally:
            if name == "ours":
                admin.close()
    assert seen["ours"] == seen["theirs"] == [(0, 2, None, 2), (1, -1, None, 3)]
