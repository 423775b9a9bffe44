"""Group offsets through the request driver (client/committed_offsets.py), judged by confluent-kafka:
what we commit its consumer reads as committed, and what it commits we read back, on Tansu and on a
real Kafka 2.3 coordinator."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest

from kafkawire.client.committed_offsets import Committed, Committer, commit_operation, fetch_operation
from kafkawire.client.coordinators import Coordinators
from kafkawire.client.driver import wait
from kafkawire.client.network_client import Client
from kafkawire.core.kafka_error import KafkaException
from kafkawire.protocol import error_codes as ec
from tests.harness.judge import unique_name
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker


KEEPS_METADATA = {"tansu": False, "kafka23": True}


@pytest.fixture(params=sorted(KEEPS_METADATA))
def broker(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def bootstrap(request: pytest.FixtureRequest, broker: str) -> str:
    found: Any = request.getfixturevalue(broker)
    return str(found.bootstrap() if callable(found.bootstrap) else found.bootstrap)


@pytest.fixture
def client(bootstrap: str) -> Iterator[tuple[Client, Coordinators]]:
    c = Client({"bootstrap.servers": bootstrap})
    try:
        yield c, Coordinators(c)
    finally:
        c.close()


def _commit(client: Client, coordinators: Coordinators, group: str, offsets: dict[tuple[str, int], Committed]) -> None:
    op = commit_operation(client, coordinators, group, offsets, deadline=client.engine.now() + 30).start()
    for fut in op.futures.values():
        assert wait(fut, 30) is None


def _fetch(client: Client, coordinators: Coordinators, group: str, tps: list[tuple[str, int]]) -> dict[Any, Committed]:
    op = fetch_operation(client, coordinators, group, tps, deadline=client.engine.now() + 30).start()
    return {tp: wait(fut, 30) for tp, fut in op.futures.items()}


def _judge(bootstrap: str, group: str) -> confluent_kafka.Consumer:
    return confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})


def test_confluent_reads_what_we_commit(
    broker: str, bootstrap: str, client: tuple[Client, Coordinators], topic_name: Callable[[str], str]
) -> None:
    topic, group = topic_name("go"), unique_name("group")
    create_topic(bootstrap, topic, 3)
    _commit(*client, group, {(topic, 0): Committed(17, "note"), (topic, 2): Committed(5)})
    judge = _judge(bootstrap, group)
    try:
        got = judge.committed([confluent_kafka.TopicPartition(topic, p) for p in range(3)], timeout=30)
    finally:
        judge.close()
    assert [(tp.partition, tp.offset, tp.error) for tp in got] == [(0, 17, None), (1, -1001, None), (2, 5, None)]
    # confluent-kafka reads metadata as a NUL-terminated C string (contributing/judges.md): only our own
    # read back is exact, and Tansu keeps no metadata at all
    ours = _fetch(*client, group, [(topic, 0)])[(topic, 0)]
    assert ours == Committed(17, "note" if KEEPS_METADATA[broker] else None)


def test_we_read_what_confluent_commits(
    broker: str, bootstrap: str, client: tuple[Client, Coordinators], topic_name: Callable[[str], str]
) -> None:
    topic, group = topic_name("go"), unique_name("group")
    create_topic(bootstrap, topic, 2)
    judge = _judge(bootstrap, group)
    try:
        judge.commit(offsets=[confluent_kafka.TopicPartition(topic, 1, 42, "theirs")], asynchronous=False)
    finally:
        judge.close()
    got = _fetch(*client, group, [(topic, 0), (topic, 1)])
    assert got[(topic, 0)] == Committed(-1)
    assert (got[(topic, 1)].offset, got[(topic, 1)].leader_epoch) == (42, -1)
    # confluent-kafka commits its C string's terminating NUL too (contributing/judges.md); Tansu keeps none
    assert got[(topic, 1)].metadata == ("theirs\x00" if KEEPS_METADATA[broker] else None)


def test_a_commit_from_outside_a_live_group_fails_at_once(
    bootstrap: str, client: tuple[Client, Coordinators], topic_name: Callable[[str], str]
) -> None:
    """The coordinator refuses a stranger's generation; the policy leaves that to the group state:
    the call fails with the coordinator's code, not _TIMED_OUT after retrying until its deadline."""
    topic, group = topic_name("go"), unique_name("group")
    create_topic(bootstrap, topic, 1)
    judge = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": 6000, "auto.offset.reset": "earliest"}
    )
    try:
        judge.subscribe([topic])
        deadline = time.monotonic() + 30
        while not judge.assignment() and time.monotonic() < deadline:
            judge.poll(0.2)
        assert judge.assignment(), "the judge never joined"
        op = commit_operation(
            *client,
            group,
            {(topic, 0): Committed(1)},
            member=Committer(999, "ghost"),
            deadline=client[0].engine.now() + 20,
        ).start()
        with pytest.raises(KafkaException) as caught:
            wait(op.futures[(topic, 0)], 20)
        assert caught.value.args[0].code() in (ec.UNKNOWN_MEMBER_ID, ec.ILLEGAL_GENERATION)
    finally:
        judge.close()
