"""kafkawire.aio.AIOConsumer on Tansu, judged by confluent-kafka: records consumed on the event
loop, an async on_assign awaited, a synchronous commit awaited, close leaving the group."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

from kafkawire import TopicPartition
from kafkawire.aio import AIOConsumer
from tests.harness.judge import Record, judge_config, produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


def test_aio_consumer_reads_commits_and_closes(tansu: Any, topic_name: Callable[[str], str]) -> None:
    bootstrap = str(tansu.bootstrap() if callable(tansu.bootstrap) else tansu.bootstrap)
    topic, group = topic_name("aio"), unique_name("grp")
    create_topic(bootstrap, topic, 2)
    produce_with_confluent(bootstrap, topic, [Record(value=b"%d" % i, partition=i % 2) for i in range(100)])
    assigned: list[list[tuple[str, int]]] = []

    async def run() -> list[int]:
        async def on_assign(consumer: AIOConsumer, parts: list[TopicPartition]) -> None:
            assert isinstance(consumer, AIOConsumer)
            await asyncio.sleep(0)
            assigned.append([(tp.topic, tp.partition) for tp in parts])

        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": 6000,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
        async with AIOConsumer(conf) as consumer:
            await consumer.subscribe([topic], on_assign=on_assign)
            values: list[int] = []
            first = await consumer.poll(30)
            assert first is not None and first.error() is None
            values.append(int(first.value() or b""))
            while len(values) < 100:
                batch = await asyncio.wait_for(consumer.consume(50, 1.0), 30)
                values.extend(int(m.value() or b"") for m in batch if m.error() is None)
            result = await consumer.commit(asynchronous=False)
            assert result is not None and sorted((tp.partition, tp.offset) for tp in result) == [(0, 50), (1, 50)]
            assert (await consumer.poll(0.2)) is None  # nothing more, and the loop was not blocked
        return values

    values = asyncio.run(run())
    assert sorted(values) == list(range(100))
    assert assigned == [[(topic, 0), (topic, 1)]]
    judge = confluent_kafka.Consumer(judge_config(bootstrap, **{"group.id": group}))
    try:
        got = judge.committed([confluent_kafka.TopicPartition(topic, p) for p in range(2)], timeout=10)
        assert [tp.offset for tp in got] == [50, 50]
    finally:
        judge.close()


def test_aio_consume_arrow_reads_columns_on_the_loop(tansu: Any, topic_name: Callable[[str], str]) -> None:
    pytest.importorskip("pyarrow")
    bootstrap = str(tansu.bootstrap() if callable(tansu.bootstrap) else tansu.bootstrap)
    topic = topic_name("aio-arrow")
    create_topic(bootstrap, topic, 2)
    produce_with_confluent(bootstrap, topic, [Record(value=b"%d" % i, partition=i % 2) for i in range(100)])

    async def run() -> list[tuple[int, int, int]]:
        conf = {"bootstrap.servers": bootstrap, "group.id": unique_name("grp"), "enable.auto.commit": False}
        async with AIOConsumer(conf) as consumer:
            await consumer.assign([TopicPartition(topic, p, -2) for p in range(2)])
            rows: list[tuple[int, int, int]] = []
            while len(rows) < 100:
                batch = await asyncio.wait_for(consumer.consume_arrow(30, 1.0), 30)
                if batch is not None:
                    assert batch.num_rows <= 30
                    values = [int(v) for v in batch.column("value").to_pylist()]
                    rows += zip(
                        batch.column("partition").to_pylist(), batch.column("offset").to_pylist(), values, strict=True
                    )
            assert (await consumer.consume_arrow(30, 0.2)) is None
        return rows

    rows = asyncio.run(run())
    assert sorted(value for _, _, value in rows) == list(range(100))
    assert all(value == 2 * offset + partition for partition, offset, value in rows)
