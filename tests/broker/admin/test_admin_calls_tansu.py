"""AdminClient against Tansu, judged by confluent-kafka's AdminClient (ours writes, theirs reads, and back)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import confluent_kafka.admin as ck
import pytest

from kafkawire.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    KafkaError,
    KafkaException,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    TopicPartition,
)
from kafkawire.app.cli import main as cli_main
from kafkawire.local_broker import TansuBroker
from tests.harness.judge import Record, described_groups, judge_config, produce_with_confluent, unique_name

pytestmark = pytest.mark.broker
TopicName = Callable[[str], str]


@pytest.fixture
def admin(tansu: TansuBroker) -> Iterator[AdminClient]:
    with AdminClient({"bootstrap.servers": tansu.bootstrap}) as a:
        yield a


@pytest.fixture
def judge(tansu: TansuBroker) -> ck.AdminClient:
    return ck.AdminClient(judge_config(tansu.bootstrap))


def error_of(fut: Any) -> KafkaError:
    with pytest.raises(KafkaException) as exc:
        fut.result(10)
    err = exc.value.args[0]
    assert isinstance(err, KafkaError)
    return err


def test_create_with_ours_describe_with_theirs(
    admin: AdminClient, judge: ck.AdminClient, topic_name: TopicName
) -> None:
    a, b = topic_name("a"), topic_name("b")
    futures = admin.create_topics([NewTopic(a, 3, 1, config={"retention.ms": "86400000"}), NewTopic(b, 1)])
    assert sorted(futures) == sorted([a, b])
    assert [f.result(10) for f in futures.values()] == [None, None]
    md = judge.list_topics(timeout=10)
    assert sorted(md.topics[a].partitions) == [0, 1, 2] and sorted(md.topics[b].partitions) == [0]
    resource = ck.ConfigResource("topic", a)
    assert judge.describe_configs([resource])[resource].result(10)["retention.ms"].value == "86400000"


def test_create_with_theirs_describe_with_ours(
    admin: AdminClient, judge: ck.AdminClient, topic_name: TopicName
) -> None:
    topic = topic_name("theirs")
    judge.create_topics([ck.NewTopic(topic, 2, 1, config={"cleanup.policy": "compact"})])[topic].result(10)
    md = admin.list_topics(topic, timeout=10)
    assert list(md.topics) == [topic]
    assert sorted(md.topics[topic].partitions) == [0, 1]
    theirs = judge.list_topics(topic, timeout=10)
    assert (md.cluster_id, md.controller_id, sorted(md.brokers)) == (
        theirs.cluster_id,
        theirs.controller_id,
        sorted(theirs.brokers),
    )
    partition = md.topics[topic].partitions[0]
    assert (partition.leader, partition.replicas, partition.isrs) == (
        theirs.topics[topic].partitions[0].leader,
        theirs.topics[topic].partitions[0].replicas,
        theirs.topics[topic].partitions[0].isrs,
    )
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = admin.describe_configs([resource])[ConfigResource("topic", topic)].result(10)
    assert configs["cleanup.policy"].value == "compact"


def test_per_topic_errors_on_the_right_future(admin: AdminClient, topic_name: TopicName) -> None:
    existing, fresh, missing = topic_name("exists"), topic_name("fresh"), topic_name("missing")
    admin.create_topics([NewTopic(existing, 1)])[existing].result(10)
    futures = admin.create_topics([NewTopic(existing, 1), NewTopic(fresh, 1)])
    assert error_of(futures[existing]).name() == "TOPIC_ALREADY_EXISTS"
    assert futures[fresh].result(10) is None
    deleted = admin.delete_topics([fresh, missing])
    assert deleted[fresh].result(10) is None
    assert error_of(deleted[missing]).name() == "UNKNOWN_TOPIC_OR_PART"


def test_delete_with_ours_gone_for_theirs(admin: AdminClient, judge: ck.AdminClient, topic_name: TopicName) -> None:
    topic = topic_name("gone")
    judge.create_topics([ck.NewTopic(topic, 1, 1)])[topic].result(10)
    admin.delete_topics([topic], operation_timeout=5)[topic].result(10)
    assert topic not in judge.list_topics(timeout=10).topics


def test_incremental_alter_configs_changes_only_the_named_keys(
    admin: AdminClient, judge: ck.AdminClient, topic_name: TopicName
) -> None:
    topic = topic_name("cfg")
    judge.create_topics([ck.NewTopic(topic, 1, 1, config={"retention.ms": "1000", "cleanup.policy": "compact"})])[
        topic
    ].result(10)
    resource = ConfigResource("topic", topic)
    resource.add_incremental_config(ConfigEntry("retention.ms", "2000", incremental_operation=AlterConfigOpType.SET))
    assert admin.incremental_alter_configs([resource])[resource].result(10) is None
    theirs = ck.ConfigResource("topic", topic)
    seen = judge.describe_configs([theirs])[theirs].result(10)
    assert (seen["retention.ms"].value, seen["cleanup.policy"].value) == ("2000", "compact")

    delete = ConfigResource(
        "topic",
        topic,
        incremental_configs=[ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)],
    )
    admin.incremental_alter_configs([delete])[delete].result(10)
    seen = judge.describe_configs([theirs])[theirs].result(10)
    assert "retention.ms" not in seen and seen["cleanup.policy"].value == "compact"


def test_apis_tansu_lacks_fail_every_future_naming_the_api(admin: AdminClient, topic_name: TopicName) -> None:
    topic = topic_name("lacks")
    admin.create_topics([NewTopic(topic, 1)])[topic].result(10)
    for fut in admin.create_partitions([NewPartitions(topic, 3), NewPartitions(topic + "x", 2)]).values():
        err = error_of(fut)
        assert err.code() == KafkaError._UNSUPPORTED_FEATURE and "CreatePartitions" in err.str()
    resource = ConfigResource("topic", topic, set_config={"retention.ms": "1"})
    with pytest.warns(DeprecationWarning):
        futures = admin.alter_configs([resource])
    err = error_of(futures[resource])
    assert err.code() == KafkaError._UNSUPPORTED_FEATURE and "AlterConfigs" in err.str()


def test_describe_cluster_matches_theirs(admin: AdminClient, judge: ck.AdminClient) -> None:
    ours = admin.describe_cluster(request_timeout=10).result(10)
    theirs = judge.describe_cluster(request_timeout=10).result(10)
    assert ours.cluster_id == theirs.cluster_id
    assert ours.controller is not None and ours.controller.id == theirs.controller.id
    assert sorted((n.id, n.host, n.port) for n in ours.nodes) == sorted((n.id, n.host, n.port) for n in theirs.nodes)


def test_list_offsets_matches_theirs(
    admin: AdminClient, judge: ck.AdminClient, tansu: TansuBroker, topic_name: TopicName
) -> None:
    topic = topic_name("offsets")
    admin.create_topics([NewTopic(topic, 2)])[topic].result(10)
    produce_with_confluent(
        tansu.bootstrap, topic, [Record(b"v", partition=0, timestamp_ms=1_700_000_000_000 + i) for i in range(4)]
    )
    specs = {
        TopicPartition(topic, 0): OffsetSpec.earliest(),
        TopicPartition(topic, 1): OffsetSpec.latest(),
    }
    ours = {tp: f.result(10) for tp, f in admin.list_offsets(specs).items()}
    theirs_specs = {
        confluent_kafka.TopicPartition(topic, 0): ck.OffsetSpec.earliest(),
        confluent_kafka.TopicPartition(topic, 1): ck.OffsetSpec.latest(),
    }
    theirs = {(tp.topic, tp.partition): f.result(10) for tp, f in judge.list_offsets(theirs_specs).items()}
    for tp, info in ours.items():
        assert info.offset == theirs[(tp.topic, tp.partition)].offset
    latest = admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.latest()})[TopicPartition(topic, 0)].result(10)
    judged = judge.list_offsets({confluent_kafka.TopicPartition(topic, 0): ck.OffsetSpec.latest()})
    assert latest.offset == next(iter(judged.values())).result(10).offset > 0


def test_delete_records_reports_the_brokers_failure_per_partition(
    admin: AdminClient, judge: ck.AdminClient, tansu: TansuBroker, topic_name: TopicName
) -> None:
    # Tansu drops the connection on any DeleteRecords (confluent-kafka sees the same): not retried
    # (a deletion is not idempotent), it reaches each partition's future as _TRANSPORT.
    topic = topic_name("records")
    admin.create_topics([NewTopic(topic, 2)])[topic].result(10)
    futures = admin.delete_records([TopicPartition(topic, 0, 1), TopicPartition(topic, 1, -1)])
    codes = {tp.partition: error_of(f).code() for tp, f in futures.items()}
    tp = confluent_kafka.TopicPartition(topic, 0, 1)
    with pytest.raises(confluent_kafka.KafkaException) as theirs:
        judge.delete_records([tp])[tp].result(10)
    assert codes == {0: theirs.value.args[0].code(), 1: theirs.value.args[0].code()}


def test_consumer_groups_as_the_coordinator_sees_them(
    admin: AdminClient, judge: ck.AdminClient, tansu: TansuBroker, topic_name: TopicName
) -> None:
    """Tansu answers ConsumerGroupDescribe (KIP-848) for every group, classic or none, so both
    clients take its answer without asking DescribeGroups: the same description field by field
    (no members, Tansu's quirk in contributing/judges.md). The legacy list_groups() asks DescribeGroups."""
    topic, group, missing = topic_name("grp"), unique_name("group"), unique_name("missing")
    admin.create_topics([NewTopic(topic, 2)])[topic].result(10)
    consumer = confluent_kafka.Consumer(
        judge_config(tansu.bootstrap, **{"group.id": group, "session.timeout.ms": 6000})
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(0.2)  # serves the join; returns as soon as there is anything
        assert consumer.assignment()
        for ops in (False, True):
            ours = described_groups(admin, [group, missing], ops)
            assert ours == described_groups(judge, [group, missing], ops)
            assert (ours[group]["type"], ours[group]["state"], ours[missing]["state"]) == (
                "CONSUMER",
                "STABLE",
                "EMPTY",
            )
        ours_listed = {g.group_id for g in admin.list_consumer_groups(request_timeout=10).result(10).valid}
        theirs_listed = {g.group_id for g in judge.list_consumer_groups(request_timeout=10).result(10).valid}
        assert ours_listed == theirs_listed
        legacy = admin.list_groups(group, timeout=10)
        assert [(g.id, g.state, [m.id for m in g.members]) for g in legacy] == [
            (group, "Stable", [consumer.memberid()])
        ]
    finally:
        consumer.close()


def test_topics_command(
    tansu: TansuBroker, judge: ck.AdminClient, topic_name: TopicName, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = topic_name("cli")
    base = ["topics", "--bootstrap-servers", tansu.bootstrap, "--timeout", "10"]
    assert (
        cli_main(
            [*base, "create", topic, "--partitions", "3", "--replication-factor", "1", "--config", "retention.ms=5000"]
        )
        == 0
    )
    assert sorted(judge.list_topics(topic, timeout=10).topics[topic].partitions) == [0, 1, 2]
    assert cli_main([*base, "create", topic, "--partitions", "3"]) == 1
    assert "TOPIC_ALREADY_EXISTS" in capsys.readouterr().err
    assert cli_main([*base, "list"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].split() == ["TOPIC", "PARTITIONS", "ERROR"]
    assert [topic, "3"] in [line.split() for line in listing]
    assert cli_main([*base, "describe", topic]) == 0
    described = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert (
        described[0] == ["PARTITION", "LEADER", "REPLICAS", "ISR"]
        and len([r for r in described if r[:1] == ["2"]]) == 1
    )
    assert next(r[:2] for r in described if r and r[0] == "retention.ms") == ["retention.ms", "5000"]
    assert cli_main([*base, "delete", topic, topic + "-missing"]) == 1
    assert topic not in judge.list_topics(timeout=10).topics
    assert cli_main([*base, "describe", topic]) == 1
