"""A program that switches its import keeps its keys where confluent-kafka put them (issue 37).

The same keyed records, produced with each client's default configuration (no ``partitioner``, no
``enable.idempotence``) to two topics of the same partition count on a real broker, land on the same
partitions: per-key order holds across the switch, and a consumer that computes a key's partition
(CRC-32, librdkafka's ``consistent_random``) finds it. Records with an empty key go along (librdkafka's
keyless case under ``consistent_random``: a sticky partition, random, so not compared). confluent-kafka
reads both topics back.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire import Producer
from tests.harness.judge import Record, consume_all, produce_with_confluent
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 7
WAIT = 60.0


def _bootstrap(broker: Any) -> str:
    return broker.bootstrap() if callable(broker.bootstrap) else str(broker.bootstrap)


@pytest.mark.parametrize("broker_fixture", ["tansu", "kafka23"])
def test_default_configuration_places_keys_as_confluent_kafka(
    request: pytest.FixtureRequest, broker_fixture: str, topic_name: Callable[[str], str]
) -> None:
    bootstrap = _bootstrap(request.getfixturevalue(broker_fixture))
    ours, theirs = topic_name("ours"), topic_name("theirs")
    for topic in (ours, theirs):
        create_topic(bootstrap, topic, PARTITIONS)
    rng = random.Random(37)
    keys = [rng.randbytes(rng.randint(1, 64)) for _ in range(400)] + [f"customer-{i}".encode() for i in range(100)]
    records = [(b"v-%d" % i, k) for i, k in enumerate(keys)] + [(b"empty-%d" % i, b"") for i in range(20)]

    placed = produce_with_confluent(bootstrap, theirs, [Record(v, k) for v, k in records], timeout=WAIT)
    their_partition = {k: p for (_, k), (p, _) in zip(records, placed, strict=True) if k}

    reports: list[Any] = []
    p = Producer({"bootstrap.servers": bootstrap})
    try:
        for value, key in records:
            p.produce(ours, value, key, on_delivery=lambda err, msg: reports.append((err, msg)))
        assert p.flush(WAIT) == 0
    finally:
        p.close(10)
    assert [err for err, _ in reports if err is not None] == []
    our_partition = {m.key(): m.partition() for _, m in reports if m.key()}

    assert our_partition == their_partition
    assert our_partition == {k: zlib.crc32(k) % PARTITIONS for k in keys}  # what a consumer computes
    assert len(set(our_partition.values())) == PARTITIONS
    # The log agrees, as confluent-kafka reads it.
    for topic, expected in ((ours, our_partition), (theirs, their_partition)):
        read = consume_all(bootstrap, topic, len(records), timeout=WAIT)
        assert len(read) == len(records)
        assert {m.key(): m.partition() for m in read if m.key()} == expected
