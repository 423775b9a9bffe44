"""What confluent-kafka-python's integration suite checks of the consumer (its ``verify_consumer``
and ``test_consumer_topicpartition_metadata``), as our own differential tests: the same steps on
confluent-kafka and on kafkawire against the same Kafka 2.3 broker, the outcomes compared."""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest

import kafkawire
import kafkawire.admin
from tests.harness.judge import Record, judge_config, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

CLIENTS: dict[str, ModuleType] = {"confluent": confluent_kafka, "kafkawire": kafkawire}


def _consumer(client: str, bootstrap: str, **conf: Any) -> Any:
    conf = {"bootstrap.servers": bootstrap, "session.timeout.ms": 6000, **conf}
    if client == "confluent":
        return confluent_kafka.Consumer(judge_config(bootstrap, **conf))
    return kafkawire.Consumer(conf)


def _metadata_round_trips(client: str, bootstrap: str, topic: str) -> list[Any]:
    """Commit offset 1 with each metadata value, read it back with committed()."""
    m = CLIENTS[client]
    c = _consumer(client, bootstrap, **{"group.id": unique_name("meta")})
    out: list[Any] = []
    try:
        for metadata in (None, "hello world", "नमस्ते दुनिया", "", "x" * 4096, "xyz\x00abc"):
            try:
                tp = m.TopicPartition(topic, 0, 1) if metadata is None else m.TopicPartition(topic, 0, 1, metadata)
                c.commit(offsets=[tp], asynchronous=False)
                out.append(("kept", c.committed([m.TopicPartition(topic, 0)], timeout=30)[0].metadata))
            except m.KafkaException as exc:
                out.append(("KafkaException", exc.args[0].code()))
            except ValueError as exc:
                out.append(("ValueError", str(exc)))
    finally:
        c.close()
    return out


def test_committed_metadata_comes_back_as_confluent_kafka_keeps_it(kafka23: KafkaBroker) -> None:
    """None stays None, '' stays '', non-ASCII and 4 KB come back whole (past the broker's 4,096
    byte bound: OFFSET_METADATA_TOO_LARGE on both), and a NUL inside is refused before anything
    is sent rather than cut short by the broker."""
    bootstrap = kafka23.bootstrap()
    topic = unique_name("meta")
    create_topic(bootstrap, topic, 1)
    ours = _metadata_round_trips("kafkawire", bootstrap, topic)
    assert ours == _metadata_round_trips("confluent", bootstrap, topic)
    assert ours[:4] == [("kept", None), ("kept", "hello world"), ("kept", "नमस्ते दुनिया"), ("kept", "")]
    assert ours[5] == ("ValueError", "embedded null character")


def _lookups_at_the_end(client: str, bootstrap: str, topic: str) -> dict[str, Any]:
    """verify_consumer's steps: watermarks from on_assign, read to _PARTITION_EOF, then (a Fetch
    long-polling at the end) cached and queried watermarks and offsets_for_times with a 1 s
    timeout, partitions the topic lacks included."""
    m = CLIENTS[client]
    seen: dict[str, Any] = {"on_assign": []}

    def on_assign(consumer: Any, parts: list[Any]) -> None:
        for _ in parts:
            seen["on_assign"].append(consumer.get_watermark_offsets(parts[0]))

    c = _consumer(
        client,
        bootstrap,
        **{
            "group.id": unique_name("wm"),
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        },
    )
    try:
        c.subscribe([topic], on_assign=on_assign)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            msg = c.poll(1)
            if msg is not None and msg.error() is not None:
                assert msg.error().code() == m.KafkaError._PARTITION_EOF
                break
        part = c.assignment()[0]
        seen["cached"] = c.get_watermark_offsets(part, cached=True)[1]
        seen["queried"] = c.get_watermark_offsets(part, timeout=1.0)
        found = c.offsets_for_times([m.TopicPartition(topic, p, 123456789001) for p in range(3)], timeout=1.0)
        seen["times"] = [(tp.partition, tp.offset, tp.error.code() if tp.error else None) for tp in found]
    finally:
        c.close()
    return seen


def test_lookups_from_on_assign_and_while_fetching_answer_in_time(kafka23: KafkaBroker) -> None:
    """Each look-up answers (none times out) and says what confluent-kafka's says: the partitions
    the topic lacks carry _UNKNOWN_PARTITION, the timestamp before every record finds offset 0."""
    bootstrap = kafka23.bootstrap()
    topic = unique_name("wm")
    create_topic(bootstrap, topic, 1)
    produce_with_confluent(bootstrap, topic, [Record(b"v%d" % i, partition=0) for i in range(18)])
    ours = _lookups_at_the_end("kafkawire", bootstrap, topic)
    assert ours == _lookups_at_the_end("confluent", bootstrap, topic)
    assert ours["queried"] == (0, 18)
    assert ours["times"] == [
        (0, 0, None),
        (1, 123456789001, kafkawire.KafkaError._UNKNOWN_PARTITION),
        (2, 123456789001, kafkawire.KafkaError._UNKNOWN_PARTITION),
    ]


def test_admin_lists_committed_metadata_as_confluent_kafka_reads_it(kafka23: KafkaBroker) -> None:
    """confluent-kafka commits metadata with librdkafka's trailing NUL and reads it back up to
    the NUL: the admin listing of the group's offsets shows 'note' on both clients."""
    bootstrap = kafka23.bootstrap()
    topic = unique_name("meta-admin")
    create_topic(bootstrap, topic, 1)
    c = _consumer("confluent", bootstrap, **{"group.id": topic})
    c.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, 3, "note")], asynchronous=False)
    c.close()
    listed = {}
    for client, admin in (
        ("confluent", confluent_kafka.admin.AdminClient(judge_config(bootstrap))),
        ("kafkawire", kafkawire.admin.AdminClient({"bootstrap.servers": bootstrap})),
    ):
        m = CLIENTS[client]
        found = admin.list_consumer_group_offsets([m.ConsumerGroupTopicPartitions(topic)])[topic].result(30)
        listed[client] = [(tp.partition, tp.offset, tp.metadata) for tp in found.topic_partitions]
    assert listed["kafkawire"] == listed["confluent"] == [(0, 3, "note")]
