"""The admin calls both mocks serve, by both clients, with the same outcome; and
``test.mock.num.brokers``: a client that starts its own cluster, as librdkafka's clients do."""

from __future__ import annotations

import importlib
import time
from types import ModuleType
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import unique_name

from .mocks import CLIENTS, MOCKS, mock_cluster
from .scenarios import client_config, consume_in_group, produce

pytestmark = pytest.mark.broker


def admin_of(module: ModuleType, bootstrap: str) -> Any:
    return importlib.import_module(f"{module.__name__}.admin").AdminClient(client_config(module, bootstrap))


def topic_calls(module: ModuleType, bootstrap: str) -> list[Any]:
    """Create (twice), grow, describe and delete a topic."""
    admin_module = importlib.import_module(f"{module.__name__}.admin")
    admin = admin_of(module, bootstrap)
    topic = unique_name("admin")
    outcome: list[Any] = []
    new_topic = admin_module.NewTopic(topic, num_partitions=2, replication_factor=1, config={"retention.ms": "1000"})
    admin.create_topics([new_topic])[topic].result(10)
    outcome.append(sorted(admin.list_topics(topic, timeout=10).topics[topic].partitions))
    try:
        admin.create_topics([new_topic])[topic].result(10)
    except module.KafkaException as exc:
        outcome.append(exc.args[0].code())
    admin.create_partitions([admin_module.NewPartitions(topic, 5)])[topic].result(10)
    outcome.append(sorted(admin.list_topics(topic, timeout=10).topics[topic].partitions))
    resource = admin_module.ConfigResource("topic", topic)
    configs = admin.describe_configs([resource])[resource].result(10)
    outcome.append((configs["retention.ms"].value, configs["cleanup.policy"].value))
    change = admin_module.ConfigResource("topic", topic)
    change.add_incremental_config(
        admin_module.ConfigEntry("retention.ms", "2000", incremental_operation=admin_module.AlterConfigOpType.SET)
    )
    admin.incremental_alter_configs([change])[change].result(10)
    outcome.append(admin.describe_configs([resource])[resource].result(10)["retention.ms"].value)
    group = unique_name("gone")
    moved = module.ConsumerGroupTopicPartitions(group, [module.TopicPartition(topic, 0, 1)])
    admin.alter_consumer_group_offsets([moved])[group].result(10)
    admin.delete_consumer_groups([group])[group].result(10)
    try:
        admin.delete_consumer_groups([group])[group].result(10)
    except module.KafkaException as exc:
        outcome.append(exc.args[0].code())
    admin.delete_topics([topic])[topic].result(10)
    outcome.append(topic in admin.list_topics(timeout=10).topics)
    if module is kafkawire:
        admin.close()
    return outcome


def test_admin_topic_calls_give_both_clients_the_same_answers() -> None:
    """librdkafka's mock serves none of these (no CreateTopics, DeleteTopics, CreatePartitions,
    DescribeConfigs, IncrementalAlterConfigs or DeleteGroups): confluent-kafka's answers on kafkawire's
    mock are the reference."""
    with kafkawire.testing.MockCluster(3) as cluster:
        outcomes = {name: topic_calls(module, cluster.bootstrap_servers()) for name, module in CLIENTS.items()}
    assert outcomes["confluent"] == [
        [0, 1],
        confluent_kafka.KafkaError.TOPIC_ALREADY_EXISTS,
        [0, 1, 2, 3, 4],
        ("1000", "delete"),
        "2000",
        confluent_kafka.KafkaError.GROUP_ID_NOT_FOUND,
        False,
    ]
    assert outcomes["kafkawire"] == outcomes["confluent"]


def offset_calls(module: ModuleType, bootstrap: str, topic: str) -> list[Any]:
    """The admin calls librdkafka's mock serves: metadata, offsets of partitions and of groups."""
    admin_module = importlib.import_module(f"{module.__name__}.admin")
    admin = admin_of(module, bootstrap)
    outcome: list[Any] = [sorted(admin.list_topics(topic, timeout=10).topics[topic].partitions)]
    tps = [module.TopicPartition(topic, p) for p in range(3)]
    for spec in (admin_module.OffsetSpec.earliest(), admin_module.OffsetSpec.latest()):
        answers = admin.list_offsets(dict.fromkeys(tps, spec))
        outcome.append(sorted((tp.partition, future.result(10).offset) for tp, future in answers.items()))
    group = unique_name("admin-group")
    moved = [module.TopicPartition(topic, p, 1 + p % 2) for p in range(3)]
    request = module.ConsumerGroupTopicPartitions(group, moved)
    admin.alter_consumer_group_offsets([request])[group].result(10)
    listed = admin.list_consumer_group_offsets([module.ConsumerGroupTopicPartitions(group, tps)])[group].result(10)
    outcome.append(sorted((tp.partition, tp.offset) for tp in listed.topic_partitions))
    if module is kafkawire:
        admin.close()
    return outcome


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_admin_offset_calls_give_the_same_answers_on_both_mocks(client: str) -> None:
    outcomes = {}
    for kind in MOCKS:
        with mock_cluster(kind) as mock:
            topic = unique_name("offsets")
            mock.create_topic(topic, 3)
            produce(CLIENTS["confluent"], mock.bootstrap(), topic, [b"a", b"b", b"c"] * 2, partition=lambda i: i % 3)
            outcomes[kind] = offset_calls(CLIENTS[client], mock.bootstrap(), topic)
    assert outcomes["kafkawire"] == [
        [0, 1, 2],
        [(0, 0), (1, 0), (2, 0)],
        [(0, 2), (1, 2), (2, 2)],
        [(0, 1), (1, 2), (2, 1)],
    ]
    assert outcomes["kafkawire"] == outcomes["librdkafka"]


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_test_mock_num_brokers_starts_a_cluster_in_the_client(client: str) -> None:
    """Both clients ignore bootstrap.servers then; a second client reaches the cluster through the
    brokers the first one's metadata names."""
    module = CLIENTS[client]
    conf = client_config(module, "127.0.0.2:1", **{"test.mock.num.brokers": 3, "test.mock.broker.rtt": 5})
    producer = module.Producer(conf)
    reports: list[Any] = []
    for i in range(6):
        producer.produce("hooked", value=b"%d" % i, partition=i % 2, on_delivery=lambda e, m: reports.append(e))
    assert producer.flush(15) == 0
    assert reports == [None] * 6
    metadata = producer.list_topics(timeout=10)
    assert len(metadata.brokers) == 3
    bootstrap = ",".join(f"{b.host}:{b.port}" for b in metadata.brokers.values())
    assert all(b.host == "127.0.0.1" for b in metadata.brokers.values())
    values, committed = consume_in_group(CLIENTS["confluent"], bootstrap, "hooked", 6, members=1)
    assert values == [b"%d" % i for i in range(6)]
    assert sum(o for o in committed.values() if o > 0) == 6
    if module is kafkawire:
        producer.close()


def test_kafkawire_mock_serves_librdkafka_and_kafkawire_in_one_group() -> None:
    with kafkawire.testing.MockCluster(3, topics={"shared": 4}) as cluster:
        bootstrap = cluster.bootstrap_servers()
        produce(kafkawire, bootstrap, "shared", [b"%d" % i for i in range(16)], partition=lambda i: i % 4)
        group = unique_name("mixed")
        conf: dict[str, Any] = {"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
        ours = kafkawire.Consumer({"bootstrap.servers": bootstrap, **conf})
        theirs = confluent_kafka.Consumer(client_config(confluent_kafka, bootstrap, **conf))
        seen: dict[str, set[bytes]] = {"ours": set(), "theirs": set()}
        for consumer in (ours, theirs):
            consumer.subscribe(["shared"])
        deadline = time.monotonic() + 30
        while len(seen["ours"] | seen["theirs"]) < 16 and time.monotonic() < deadline:
            for name, consumer in (("ours", ours), ("theirs", theirs)):
                message = consumer.poll(0.1)
                if message is not None and message.error() is None:
                    seen[name].add(message.value())
        owned = [sorted(tp.partition for tp in c.assignment()) for c in (ours, theirs)]
        ours.close()
        theirs.close()
    assert seen["ours"] | seen["theirs"] == {b"%d" % i for i in range(16)}
    assert sorted(owned[0] + owned[1]) == [0, 1, 2, 3]
    assert owned[0] and owned[1]
