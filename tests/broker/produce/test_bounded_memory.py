"""300,000 records of 1 KB through ``produce()`` on Tansu with a bounded buffer: memory stays bounded.

``queue.buffering.max.kbytes`` bounds the values' bytes the producer holds (librdkafka's charge: a
record's value length), so at most 32,768 of these records wait at once; with ``max.block.ms`` set,
``produce()`` waits for room (serving delivery reports itself in poll mode) instead of raising
``BufferError``. The process's resident memory, sampled as reports are served, must stay under
the configured buffer plus a fixed margin for the interpreter's own overhead per record and the
batches' encoded copies; every record gets its report, and confluent-kafka counts them all in the log.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable

import confluent_kafka
import pytest

from kafkawire import KafkaError, Producer
from kafkawire.base.model import Message
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import JudgeError, judge_config, unique_name
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

COUNT = 300_000
VALUE_SIZE = 1_000
PARTITIONS = 4
BUFFER_KBYTES = 32_768
MARGIN_BYTES = 100 * 1024 * 1024  # the interpreter's overhead per buffered record (issue 7's margin)
SAMPLE_EVERY = 5_000


class MemoryBoundExceeded(AssertionError):
    """RSS grew past the configured buffer plus the margin."""


def rss_bytes() -> int:
    """Current resident set size of this process (Linux)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize()


def count_in_log(bootstrap: str, topic: str, expected: int, timeout: float) -> int:
    """Count records with confluent-kafka, in batches, keeping none of them."""
    consumer = confluent_kafka.Consumer(
        judge_config(
            bootstrap,
            **{
                "group.id": unique_name("judge-count"),
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "check.crcs": True,
                "allow.auto.create.topics": False,
            },
        )
    )
    seen = 0
    try:
        consumer.assign(
            [confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(PARTITIONS)]
        )
        deadline = time.monotonic() + timeout
        while seen < expected and time.monotonic() < deadline:
            for m in consumer.consume(10_000, timeout=0.5):
                error = m.error()
                if error is not None and error.code() != confluent_kafka.KafkaError._PARTITION_EOF:
                    raise JudgeError(f"judge consumer error on {topic!r}: {error}")
                if error is None:
                    seen += 1
    finally:
        consumer.close()
    return seen


def test_records_through_produce_with_memory_under_the_buffer_limit(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("million")
    create_topic(tansu.bootstrap, topic, PARTITIONS)

    delivered = 0
    failed: dict[str, int] = {}
    peak = 0

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        nonlocal delivered, peak
        if err is not None:
            failed[err.name()] = failed.get(err.name(), 0) + 1
            return
        delivered += 1
        if delivered % SAMPLE_EVERY == 0:
            peak = max(peak, rss_bytes())

    baseline = rss_bytes()
    producer = Producer(
        {
            "bootstrap.servers": tansu.bootstrap,
            "queue.buffering.max.kbytes": BUFFER_KBYTES,
            "queue.buffering.max.messages": 10_000_000,  # the byte limit is the one under test
            "max.block.ms": 120_000,
            "linger.ms": 5,
            "on_delivery": on_delivery,
        }
    )
    value = b"v" * VALUE_SIZE
    started = time.monotonic()
    try:
        for i in range(COUNT):
            producer.produce(topic, value, partition=i % PARTITIONS)
        assert producer.flush(120) == 0
    finally:
        elapsed = time.monotonic() - started
        producer.close(30)
    peak = max(peak, rss_bytes())
    growth = peak - baseline
    rate = COUNT / elapsed
    print(f"\n{COUNT} records in {elapsed:.1f} s ({rate:,.0f} records/s); RSS growth {growth / 2**20:.1f} MiB")

    assert failed == {}
    assert delivered == COUNT
    assert count_in_log(tansu.bootstrap, topic, COUNT, timeout=120) == COUNT
    if growth >= BUFFER_KBYTES * 1024 + MARGIN_BYTES:
        raise MemoryBoundExceeded(f"RSS grew by {growth / 2**20:.1f} MiB with a {BUFFER_KBYTES // 1024} MiB buffer")
