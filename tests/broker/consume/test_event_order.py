"""The order of the events a consumer program sees, against confluent-kafka on the same Kafka 2.3
broker: _PARTITION_EOF after a Fetch at the end came back empty (not when the last records came),
the revocation of unsubscribe() and close(), rebalance callbacks against records."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import judge_config, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

WAIT_MS = 3000  # fetch.wait.max.ms: far longer than the 100 ms between the two records


def _consumer(client: str, bootstrap: str, **conf: Any) -> Any:
    conf = {"bootstrap.servers": bootstrap, "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, **conf}
    if client == "confluent":
        return confluent_kafka.Consumer(judge_config(bootstrap, **conf))
    return kafkawire.Consumer(conf)


def _what(m: Any) -> Any:
    if m.error() is None:
        return m.value().decode()
    name = "EOF" if m.error().code() == kafkawire.KafkaError._PARTITION_EOF else m.error().name()
    # librdkafka hands an event's text over as the message's payload: value() is it, and the
    # message is truthy (programs skip with `if not msg`).
    return name if m and m.value() == m.error().str().encode() else f"{name} without its text as value()"


def _two_records_100ms_apart(client: str, bootstrap: str) -> list[Any]:
    """Caught up on an empty partition (its EOF), then one record and another 100 ms later: what
    poll() hands over until the EOF after them."""
    topic = unique_name("eof")
    create_topic(bootstrap, topic, 1)
    c = _consumer(
        client,
        bootstrap,
        **{
            "group.id": topic,
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
            "fetch.wait.max.ms": WAIT_MS,
        },
    )
    producer = confluent_kafka.Producer(judge_config(bootstrap, **{"linger.ms": 0}))
    seen: list[Any] = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not seen:
            m = c.poll(0.5)
            if m is not None:
                seen.append(_what(m))
        for value in (b"r1", b"r2"):
            producer.produce(topic, value, partition=0)
            producer.flush(10)
            time.sleep(0.1)
        while time.monotonic() < deadline and seen.count("EOF") < 2:
            m = c.poll(0.5)
            if m is not None:
                seen.append(_what(m))
    finally:
        c.close()
    return seen


def test_partition_eof_comes_after_a_record_produced_while_the_next_fetch_waits(kafka23: KafkaBroker) -> None:
    bootstrap = kafka23.bootstrap()
    ours = _two_records_100ms_apart("kafkawire", bootstrap)
    assert ours == _two_records_100ms_apart("confluent", bootstrap)
    assert ours == ["EOF", "r1", "r2", "EOF"]


def _leaving(client: str, bootstrap: str, how: str) -> list[Any]:
    """Read 5 of 10 records (enable.auto.commit), then leave by ``how``: what the callbacks, the
    calls and on_commit show, in order."""
    topic = unique_name("leave")
    create_topic(bootstrap, topic, 1)
    producer = confluent_kafka.Producer(judge_config(bootstrap))
    for i in range(10):
        producer.produce(topic, b"v%d" % i, partition=0)
    producer.flush(10)
    seen: list[Any] = []

    def on_commit(err: Any, parts: list[Any]) -> None:
        seen.append(("on_commit", err, [(tp.partition, tp.offset) for tp in parts]))

    c = _consumer(
        client,
        bootstrap,
        **{
            "group.id": topic,
            "auto.offset.reset": "earliest",
            "on_commit": on_commit,
            "auto.commit.interval.ms": 60_000,
        },
    )

    def on_revoke(consumer: Any, parts: list[Any]) -> None:
        seen.append(("revoke", [tp.partition for tp in parts], [tp.partition for tp in consumer.assignment()]))

    c.subscribe([topic], on_revoke=on_revoke)
    got = 0
    deadline = time.monotonic() + 60
    while got < 5 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got += 1
    if how == "close":
        c.close()
        seen.append("close returned")
        return seen
    c.unsubscribe()
    seen.append(("unsubscribe returned", [tp.partition for tp in c.assignment()]))
    if how == "unsubscribe, poll":
        for _ in range(3):
            m = c.poll(0.3)
            seen.append(("poll", m if m is None else _what(m), [tp.partition for tp in c.assignment()]))
    c.close()
    seen.append("close returned")
    return seen


@pytest.mark.parametrize("how", ["unsubscribe, poll", "unsubscribe, close", "close"])
def test_leaving_serves_the_revocation_as_confluent_kafka_does(kafka23: KafkaBroker, how: str) -> None:
    """unsubscribe() keeps the assignment and returns; the next poll() (or close()) runs on_revoke,
    then on_commit of the automatic commit follows; close() runs both before it returns."""
    bootstrap = kafka23.bootstrap()
    ours = _leaving("kafkawire", bootstrap, how)
    assert _revocation_split(ours) == _revocation_split(_leaving("confluent", bootstrap, how))
    assert ("revoke", [0], [0]) in ours and ("on_commit", None, [(0, 5)]) in ours


def _revocation_split(seen: list[Any]) -> tuple[list[Any], list[Any]]:
    """`_split`, each report checked to come after on_revoke and before close() returned (the
    revocation's commit is asynchronous on both clients: which poll hears it depends on when its
    answer came)."""
    calls, reports = _split(seen)
    revoked = next(i for i, x in enumerate(seen) if isinstance(x, tuple) and x[0] == "revoke")
    assert all(revoked < seen.index(r) < seen.index("close returned") for r in reports), seen
    return calls, reports


def _commits(client: str, bootstrap: str) -> list[Any]:
    """Read 3 of 10 records, commit one synchronously, one asynchronously, then asynchronously a
    partition the topic lacks, and synchronously one of a topic that does not exist; poll on:
    where on_commit and the outcomes come among the calls and records."""
    topic = unique_name("commits")
    create_topic(bootstrap, topic, 1)
    producer = confluent_kafka.Producer(judge_config(bootstrap))
    for i in range(10):
        producer.produce(topic, b"v%d" % i, partition=0)
    producer.flush(10)
    m = kafkawire if client == "kafkawire" else confluent_kafka
    seen: list[Any] = []

    def on_commit(err: Any, parts: list[Any]) -> None:
        seen.append(("on_commit", err and err.code(), [(tp.partition, tp.offset) for tp in parts]))

    c = _consumer(
        client,
        bootstrap,
        **{
            "group.id": topic,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "on_commit": on_commit,
        },
    )
    try:
        c.subscribe([topic])
        msgs: list[Any] = []
        deadline = time.monotonic() + 60
        while len(msgs) < 3 and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is not None and msg.error() is None:
                msgs.append(msg)
        c.commit(msgs[0], asynchronous=False)
        seen.append("sync commit returned")
        c.commit(msgs[1], asynchronous=True)
        seen.append("async commit returned")
        c.commit(offsets=[m.TopicPartition(topic, 5, 3)], asynchronous=True)
        seen.append("async commit of a missing partition returned")
        try:
            c.commit(offsets=[m.TopicPartition(unique_name("missing"), 0, 3)], asynchronous=False)
        except m.KafkaException as exc:
            seen.append(("sync commit of a missing topic raised", exc.args[0].code()))
        for _ in range(10):
            msg = c.poll(0.5)
            seen.append(("poll", None if msg is None else msg.offset()))
    finally:
        c.close()
    seen.append("close returned")
    return seen


def _split(seen: list[Any]) -> tuple[list[Any], list[Any]]:
    """The calls and records in order, and the on_commit reports in order (where the reports fall
    among the records depends on when the answers came, on both clients)."""
    reports = [x for x in seen if isinstance(x, tuple) and x[0] == "on_commit"]
    return [x for x in seen if x not in reports], reports


def test_commit_outcomes_and_on_commit_come_as_confluent_kafka_gives_them(kafka23: KafkaBroker) -> None:
    """on_commit hears each asynchronous commit from poll(), before close() returns, not a
    synchronous one; a partition or topic the broker lacks fails at once with
    UNKNOWN_TOPIC_OR_PART (not after the call's timeout)."""
    bootstrap = kafka23.bootstrap()
    ours = _commits("kafkawire", bootstrap)
    assert _split(ours) == _split(_commits("confluent", bootstrap))
    code = kafkawire.KafkaError.UNKNOWN_TOPIC_OR_PART
    assert _split(ours)[1] == [("on_commit", None, [(0, 2)]), ("on_commit", code, [(5, 3)])]
    assert ("sync commit of a missing topic raised", code) in ours
