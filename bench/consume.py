"""The consume scenario's clients: read a topic already holding the records, from the beginning.

Each client assigns every partition at OFFSET_BEGINNING (no group membership: the same work for
all) and reads until it has every record; the clock runs from the assign to the last record in
hand, so each client's prefetch starts inside it. A run is verified by its own count and the sum
of its value lengths (what it read must be what was written), then by the driver's read-back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench.scenarios import Scenario
from bench.workload import Workload, fill, measure

MAX_RECORDS = 1000  # consume(1000), getmany(max_records=1000), consume_arrow(1000)
OFFSET_BEGINNING = -2


def _conf(bootstrap: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }


def _confluent(bootstrap: str) -> tuple[Any, Any]:
    import confluent_kafka

    conf = _conf(bootstrap)
    conf.update({"enable.metrics.push": False, "broker.address.family": "v4", "log_level": 3})
    return confluent_kafka.Consumer(conf), confluent_kafka.TopicPartition


def _kafkawire(bootstrap: str) -> tuple[Any, Any]:
    import kafkawire

    return kafkawire.Consumer(_conf(bootstrap)), kafkawire.TopicPartition


def _read(
    make: Callable[[str], tuple[Any, Any]],
    how: str,
    sc: Scenario,
    bootstrap: str,
    topic: str,
    records: int,
    value_size: int,
) -> dict[str, Any]:

    consumer, topic_partition = make(bootstrap)
    partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    counted = [0, 0, 0]  # records, value bytes, error events

    def work() -> None:
        consumer.assign([topic_partition(topic, p, OFFSET_BEGINNING) for p in partitions])
        n = value_bytes = errors = 0
        if how == "poll":
            poll = consumer.poll
            while n < records:
                m = poll(1.0)
                if m is None:
                    continue
                if m.error() is not None:
                    errors += 1
                    continue
                n += 1
                value_bytes += len(m.value())
        elif how == "consume":
            consume = consumer.consume
            while n < records:
                for m in consume(MAX_RECORDS, 1.0):
                    if m.error() is not None:
                        errors += 1
                        continue
                    n += 1
                    value_bytes += len(m.value())
        else:  # arrow: the columnar hand-over, value lengths summed by Arrow
            import pyarrow.compute as pc

            take = consumer.consume_arrow
            while n < records:
                batch = take(MAX_RECORDS, 1.0)
                if batch is None or batch.num_rows == 0:
                    continue
                n += batch.num_rows
                value_bytes += pc.sum(pc.binary_length(batch.column("value"))).as_py() or 0
        counted[:] = [n, value_bytes, errors]

    result = measure(work)
    consumer.close()
    return _outcome(result, counted, value_size)


def _outcome(result: dict[str, Any], counted: list[int], value_size: int) -> dict[str, Any]:
    n, value_bytes, errors = counted
    error = None
    if value_bytes != n * value_size:
        error = f"value bytes {value_bytes:,} for {n:,} records"
    elif errors:
        error = f"{errors} error events"
    return {**result, "acked": n, "failed": 0 if error is None else n, "error": error}


def _aio_poll(library: str, sc: Scenario, bootstrap: str, topic: str, records: int, value_size: int) -> dict[str, Any]:
    """``await consumer.poll(1.0)`` per record on an event loop: confluent-kafka's AIOConsumer
    (each call on its thread pool) or kafkawire's (buffered records handed over on the loop)."""

    if library == "confluent":
        from confluent_kafka import TopicPartition
        from confluent_kafka.aio import AIOConsumer

        conf = _conf(bootstrap)
        conf.update({"enable.metrics.push": False, "broker.address.family": "v4", "log_level": 3})
    else:
        from kafkawire import TopicPartition  # type: ignore[assignment]
        from kafkawire.aio import AIOConsumer  # type: ignore[assignment]

        conf = _conf(bootstrap)
    loop = asyncio.new_event_loop()
    consumer = loop.run_until_complete(_made(AIOConsumer, conf))
    meta = loop.run_until_complete(consumer.list_topics(topic, timeout=10))
    partitions = sorted(meta.topics[topic].partitions)
    counted = [0, 0, 0]

    async def read() -> None:
        await consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        n = value_bytes = errors = 0
        poll = consumer.poll
        while n < records:
            m = await poll(1.0)
            if m is None:
                continue
            if m.error() is not None:
                errors += 1
                continue
            n += 1
            value_bytes += len(m.value())
        counted[:] = [n, value_bytes, errors]

    result = measure(lambda: loop.run_until_complete(read()))
    loop.run_until_complete(consumer.close())
    loop.close()
    return _outcome(result, counted, value_size)


async def _made(cls: Any, conf: dict[str, Any]) -> Any:
    return cls(conf)  # made on the loop: an AIOConsumer binds to the running loop


def aiokafka_getmany(sc: Scenario, bootstrap: str, topic: str, records: int, value_size: int) -> dict[str, Any]:
    try:
        from aiokafka import AIOKafkaConsumer, TopicPartition
    except ImportError as exc:
        return {"skipped": f"aiokafka is not installed ({exc})"}

    counted = [0, 0, 0]
    loop = asyncio.new_event_loop()

    async def start() -> tuple[Any, list[int]]:
        made = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest")
        await made.start()
        # partitions_for_topic() answers for the topics the client tracks: partition 0 assigned
        # makes it track this one (on Kafka 2.3 topics() alone never did; contributing/judges.md).
        made.assign([TopicPartition(topic, 0)])
        deadline = loop.time() + 30
        while not made.partitions_for_topic(topic) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        return made, sorted(made.partitions_for_topic(topic) or ())

    consumer, partitions = loop.run_until_complete(start())

    async def read() -> None:
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        n = value_bytes = 0
        while n < records:
            got = await consumer.getmany(timeout_ms=1000, max_records=MAX_RECORDS)
            for messages in got.values():
                n += len(messages)
                value_bytes += sum(len(m.value) for m in messages)
        counted[:] = [n, value_bytes, 0]

    result = measure(lambda: loop.run_until_complete(read()))
    with contextlib.suppress(asyncio.CancelledError):  # aiokafka's stop() without a group raises it
        loop.run_until_complete(consumer.stop())
    loop.close()
    return _outcome(result, counted, value_size)


CONSUME: dict[str, Callable[[Scenario, str, str, int, int], dict[str, Any]]] = {
    "confluent-poll": lambda sc, b, t, n, size: _read(_confluent, "poll", sc, b, t, n, size),
    "confluent-consume": lambda sc, b, t, n, size: _read(_confluent, "consume", sc, b, t, n, size),
    "kafkawire-poll": lambda sc, b, t, n, size: _read(_kafkawire, "poll", sc, b, t, n, size),
    "kafkawire-consume": lambda sc, b, t, n, size: _read(_kafkawire, "consume", sc, b, t, n, size),
    "kafkawire-arrow-read": lambda sc, b, t, n, size: _read(_kafkawire, "arrow", sc, b, t, n, size),
    "aiokafka-getmany": aiokafka_getmany,
    "confluent-aiopoll": lambda sc, b, t, n, size: _aio_poll("confluent", sc, b, t, n, size),
    "kafkawire-aiopoll": lambda sc, b, t, n, size: _aio_poll("kafkawire", sc, b, t, n, size),
}


def consume_worker(client: str) -> Callable[..., dict[str, Any]]:
    """The worker of a consume client: fills the topic (outside the clock), then reads it."""

    def run(sc: Scenario, bootstrap: str, topic: str, w: Workload) -> dict[str, Any]:
        fill(bootstrap, topic, w)
        time.sleep(0.5)  # let the broker settle after the writes
        return CONSUME[client](sc, bootstrap, topic, w.records, len(w.values[0]))

    return run
