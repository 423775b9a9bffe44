"""The pipeline's sink topic on a broker before 2.4, which cannot apply its own default replication
factor (KIP-464): the run reads the broker's ``default.replication.factor`` and asks for it.
Judged by confluent-kafka's view of the created topic."""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka.admin as ck

from kafkawire.pipeline import verify
from tests.harness.kafka_broker import KafkaBroker


def test_default_replication_on_kafka23(kafka23: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("pipeline-sink")
    assert verify.ensure_topic(kafka23.bootstrap(), topic, 3, -1, 30) is True
    assert verify.ensure_topic(kafka23.bootstrap(), topic, 3, -1, 30) is False
    described = ck.AdminClient({"bootstrap.servers": kafka23.bootstrap()}).list_topics(topic, timeout=30).topics[topic]
    assert described.error is None
    assert sorted(described.partitions) == [0, 1, 2]
    assert all(len(p.replicas) == 1 for p in described.partitions.values())
