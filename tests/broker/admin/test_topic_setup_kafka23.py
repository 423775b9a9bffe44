"""Set-up topics (the pipeline's sink, the exactly-once control topic) on a broker before 2.4, which
cannot apply its own default replication factor (KIP-464): `create_topic_if_missing` reads the
broker's ``default.replication.factor`` and asks for it. Judged by confluent-kafka's view of the
created topic."""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka.admin as ck

from kafkawire.admin import NewTopic, create_topic_if_missing
from tests.harness.kafka_broker import KafkaBroker


def test_default_replication_on_kafka23(kafka23: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("setup")
    conf = {"bootstrap.servers": kafka23.bootstrap()}
    new = NewTopic(topic, 3, -1, config={"cleanup.policy": "compact"})
    assert create_topic_if_missing(conf, new, 30) is True
    assert create_topic_if_missing(conf, new, 30) is False
    admin = ck.AdminClient(conf)
    described = admin.list_topics(topic, timeout=30).topics[topic]
    assert described.error is None
    assert sorted(described.partitions) == [0, 1, 2]
    assert all(len(p.replicas) == 1 for p in described.partitions.values())
    resource = ck.ConfigResource(ck.ResourceType.TOPIC, topic)
    assert admin.describe_configs([resource])[resource].result(30)["cleanup.policy"].value == "compact"


def test_default_replication_without_config_on_kafka23(kafka23: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    """A topic given no config (the pipeline's sink): the topic asked again with the broker's
    replication factor has no config either (the second NewTopic once refused a None config)."""
    topic = topic_name("setup-plain")
    conf = {"bootstrap.servers": kafka23.bootstrap()}
    assert create_topic_if_missing(conf, NewTopic(topic, 2), 30) is True
    described = ck.AdminClient(conf).list_topics(topic, timeout=30).topics[topic]
    assert described.error is None and sorted(described.partitions) == [0, 1]
