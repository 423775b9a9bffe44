"""Consumer.consume_arrow on Tansu, judged by confluent-kafka: what its producer wrote comes back as
Arrow columns, record for record; the offsets handed over are what commit() commits; error events
are raised; poll() after it still works."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import kafkawire
from kafkawire import KafkaError, KafkaException, TopicPartition
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import Record, produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

BASE_MS = 1_700_000_000_000


def test_consume_arrow_reads_what_confluent_wrote_and_commits_it(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    pa = pytest.importorskip("pyarrow")
    topic = topic_name("arrow-face")
    create_topic(tansu.bootstrap, topic, 2)
    written = [
        Record(
            b"v%d" % i,
            key=None if i % 4 == 0 else b"k%d" % i,
            partition=i % 2,
            timestamp_ms=BASE_MS + i,
            headers=[("n", b"%d" % i)] * (i % 3),
        )
        for i in range(400)
    ]
    produce_with_confluent(
        tansu.bootstrap, topic, written, config={"compression.type": "lz4", "batch.num.messages": 30}
    )
    expected = {(r.partition, i // 2): r for i, r in enumerate(written)}
    consumer = kafkawire.Consumer(
        {
            "bootstrap.servers": tansu.bootstrap,
            "group.id": unique_name("g"),
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, -2) for p in range(2)])
        with pytest.raises(ValueError, match="max_records"):
            consumer.consume_arrow(0)
        assert consumer.poll(10) is not None  # one Message first: the rest comes as columns
        rows: list[dict[str, Any]] = []
        eofs = 0  # one per partition, raised one per call
        while len(rows) < 399 or eofs < 2:
            try:
                batch = consumer.consume_arrow(64, 10)
            except KafkaException as exc:
                assert exc.args[0].code() == KafkaError._PARTITION_EOF
                eofs += 1
                continue
            assert batch is not None and batch.num_rows <= 64
            assert batch.schema.names == [
                "key",
                "value",
                "topic",
                "partition",
                "offset",
                "timestamp",
                "timestampType",
                "headers",
            ]
            rows += batch.to_pylist()
        assert len(rows) == 399
        for row in rows:
            record = expected.pop((row["partition"], row["offset"]))
            assert (row["key"], row["value"], row["topic"]) == (record.key, record.value, topic)
            assert row["headers"] == ([{"key": k, "value": v} for k, v in record.headers] or None)
            assert row["timestamp"] == pa.scalar(record.timestamp_ms, pa.timestamp("ms", tz="UTC")).as_py()
            assert row["timestampType"] == 0
        assert len(expected) == 1  # the one poll() returned
        assert consumer.consume_arrow(64, 0.2) is None
        committed = consumer.commit(asynchronous=False)
        assert committed is not None
        assert sorted((tp.partition, tp.offset) for tp in committed) == [(0, 200), (1, 200)]
        assert [tp.offset for tp in consumer.position([TopicPartition(topic, p) for p in range(2)])] == [200, 200]
    finally:
        consumer.close()
