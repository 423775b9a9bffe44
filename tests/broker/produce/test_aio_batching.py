"""confluent-kafka's AIOProducer batching parts (kafkawire.aio.batching), driven by a program of
their own, against confluent-kafka's: the same steps on each library's classes over its own
Producer, on one librdkafka mock cluster, the outcomes compared."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
from collections.abc import Callable
from typing import Any

import pytest

from tests.harness.mock_cluster import MockCluster

pytestmark = pytest.mark.broker

MODULES = {
    "kafkawire": ("kafkawire.aio.batching",) * 4,
    "confluent_kafka": tuple(
        f"confluent_kafka.aio.producer.{m}"
        for m in ("_message_batch", "_kafka_batch_executor", "_producer_batch_processor", "_buffer_timeout_manager")
    ),
}


def _outcome(fut: asyncio.Future[Any], asked: bool = False) -> Any:
    """A future's outcome; the partition only for a record that asked for one (else the
    partitioner chose it)."""
    if fut.cancelled():
        return "cancelled"
    error = fut.exception()
    if error is not None:
        return (type(error).__name__, error.args[0].name())
    msg = fut.result()
    return (msg.topic(), msg.partition() if asked else "any", msg.key(), msg.value())


def _values() -> list[Any]:
    """MessageBatch and create_message_batch, without a broker."""
    out: list[Any] = []
    for lib in MODULES:
        batch_module = importlib.import_module(MODULES[lib][0])
        made = batch_module.create_message_batch("t", [{"value": b"a"}], [], callbacks=object(), partition=2)
        out.append((made.info, made.size, type(made.messages), made.futures, made.partition))
        out.append(batch_module.MessageBatch("u", [{}], [None]).info)
    return out


def test_message_batches_as_confluent_kafkas() -> None:
    values = _values()
    assert values[:2] == values[2:]
    assert values[0] == ("MessageBatch(topic='t', partition=2, size=1)", 1, tuple, (), 2)


async def _steps(lib: str, bootstrap: str, topics: tuple[str, str]) -> list[Any]:
    _, executor_module, manager_module, timeout_module = (importlib.import_module(m) for m in MODULES[lib])
    producer = importlib.import_module(lib).Producer({"bootstrap.servers": bootstrap, "message.max.bytes": 2000})
    pool = concurrent.futures.ThreadPoolExecutor(2)
    loop = asyncio.get_running_loop()
    out: list[Any] = []
    try:
        executor = executor_module.ProducerBatchExecutor(producer, pool)
        manager = manager_module.ProducerBatchManager(executor)
        first, second = topics
        futures = []
        for record in (
            {"topic": first, "key": b"k1", "value": b"v1"},
            {"topic": second, "value": b"w1"},
            {"topic": first, "key": b"k2", "value": b"v2", "partition": 1},
            {"topic": first, "value": b"v3"},
            {"topic": first, "value": b"x" * 5000},  # refused by produce_batch: too large
        ):
            futures.append(loop.create_future())
            manager.add_message(record, futures[-1])
        out.append((manager.get_buffer_size(), manager.is_buffer_empty()))
        batches = manager.create_batches()
        out.append([(b.info.replace(first, "A").replace(second, "B"), b.size) for b in batches])
        out.append([sorted(m) for b in batches for m in b.messages])
        out.append(manager.get_buffer_size())  # create_batches leaves the buffer
        out.append([b.info.replace(first, "A") for b in manager.create_batches(first)])
        await manager.flush_buffer(first)
        out.append(manager.get_buffer_size())
        await manager.flush_buffer()
        out.append(manager.is_buffer_empty())
        out.append(await executor.flush_librdkafka_queue(10))
        await asyncio.wait(futures, timeout=10)
        out.append([_outcome(f, asked=i == 2) for i, f in enumerate(futures)])
        # A batch produce_batch refuses whole: its futures fail, what was taken is buffered again.
        bad = loop.create_future()
        manager.add_message({"topic": first, "value": 123, "headers": [("h", b"1")]}, bad)
        try:
            await manager.flush_buffer()
        except Exception as e:
            out.append(type(e).__name__)
        out.append((type(bad.exception()).__name__, manager.get_buffer_size()))
        manager.clear_buffer()
        # A flush with nothing buffered does nothing; cancelling settles what is still buffered.
        await manager.flush_buffer()
        pending = loop.create_future()
        manager.add_message({"topic": first, "value": b"never"}, pending)
        manager.cancel_pending_futures()
        manager.clear_buffer()
        out.append((_outcome(pending), manager.get_buffer_size()))
        # The timeout manager flushes a buffer left quiet for its timeout.
        late = loop.create_future()
        manager.add_message({"topic": second, "value": b"late"}, late)
        timer = timeout_module.BufferTimeoutManager(manager, executor, 0.2)
        timer.mark_activity()
        timer.start_timeout_monitoring()
        await asyncio.wait([late], timeout=20)
        timer.stop_timeout_monitoring()
        out.append((_outcome(late), manager.is_buffer_empty()))
        off = timeout_module.BufferTimeoutManager(manager, executor, 0)
        off.start_timeout_monitoring()
        out.append(off._timeout_task)
    finally:
        producer.flush(10)
        pool.shutdown()
    return out


@pytest.fixture
def topics(mock_cluster: MockCluster, topic_name: Callable[[str], str]) -> tuple[str, str]:
    names = (topic_name("a"), topic_name("b"))
    for name in names:
        mock_cluster.create_topic(name, partitions=3, replication=3)
    return names


def test_batching_parts_as_confluent_kafkas(mock_cluster: MockCluster, topics: tuple[str, str]) -> None:
    ours = asyncio.run(_steps("kafkawire", mock_cluster.bootstraps, topics))
    theirs = asyncio.run(_steps("confluent_kafka", mock_cluster.bootstraps, topics))
    assert ours == theirs
    delivered = ours[8]
    assert delivered[4] == ("KafkaException", "MSG_SIZE_TOO_LARGE")
    assert delivered[2][:2] == (topics[0], 1)
    assert ours[9:11] == ["TypeError", ("TypeError", 1)]
    assert ours[12][0] == (topics[1], "any", None, b"late")
