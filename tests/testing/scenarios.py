"""Steps a test runs on a mock cluster with one client (confluent-kafka or kafkawire, by module),
each returning its outcome as plain data, so the outcomes on the two mocks can be compared."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from tests.harness.judge import LOGGER, consume_all, unique_name

from .mocks import CLIENTS, Mock

Delivery = tuple[int | None, int | None, int | None]  # (error code or None, partition, offset)


def client_config(client: ModuleType, bootstrap: str, **extra: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, **extra}
    if client.__name__ == "confluent_kafka":
        conf.update({"logger": LOGGER, "log_level": 3, "broker.address.family": "v4"})
    return conf


def produce(
    client: ModuleType,
    bootstrap: str,
    topic: str,
    values: list[bytes],
    *,
    partition: Callable[[int], int] | None = None,
    config: dict[str, Any] | None = None,
    between: Callable[[int], None] | None = None,
    timeout: float = 60.0,
) -> list[Delivery]:
    """Produce ``values`` in order (``between(i)`` runs before the i-th) and wait for the reports."""
    producer = client.Producer(client_config(client, bootstrap, **{"linger.ms": 5, **(config or {})}))
    results: dict[int, Delivery] = {}

    def report(index: int) -> Callable[[Any, Any], None]:
        def done(error: Any, message: Any) -> None:
            code = None if error is None else error.code()
            results[index] = (code, message.partition(), None if error is not None else message.offset())

        return done

    for i, value in enumerate(values):
        if between is not None:
            between(i)
        kwargs: dict[str, Any] = {"value": value, "key": b"k%d" % i, "on_delivery": report(i)}
        if partition is not None:
            kwargs["partition"] = partition(i)
        producer.produce(topic, **kwargs)
        producer.poll(0)
    deadline = time.monotonic() + timeout
    while len(results) < len(values) and time.monotonic() < deadline:
        producer.flush(0.5)
    close = getattr(producer, "close", None)
    if close is not None and client.__name__ == "kafkawire":
        close()
    return [results.get(i, (-1, None, None)) for i in range(len(values))]


def read_back(
    bootstrap: str, topic: str, count: int, *, isolation: str = "read_uncommitted"
) -> list[tuple[int, int, bytes]]:
    """(partition, offset, value) of what the judge (confluent-kafka) reads, sorted."""
    # (no CRC check: librdkafka's mock writes its transaction markers with a zero CRC)
    messages = consume_all(
        bootstrap, topic, count, timeout=60, isolation_level=isolation, settle=0.3, config={"check.crcs": False}
    )  # type: ignore[arg-type]
    return sorted((m.partition(), m.offset(), m.value()) for m in messages)


def consume_in_group(
    client: ModuleType,
    bootstrap: str,
    topic: str,
    count: int,
    *,
    members: int = 2,
    config: dict[str, Any] | None = None,
    group: str | None = None,
    timeout: float = 120.0,
) -> tuple[list[bytes], dict[int, int]]:
    """``members`` consumers of one group read ``topic`` until ``count`` distinct records are in (a
    partition that moves before its first commit is read again: at least once); then each commits and
    closes. Returns the sorted distinct values read and the committed offsets by partition."""
    group = group or unique_name("group")
    conf = client_config(
        client,
        bootstrap,
        **{"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False, **(config or {})},
    )
    consumers = [client.Consumer(dict(conf)) for _ in range(members)]
    for consumer in consumers:
        consumer.subscribe([topic])
    seen: set[bytes] = set()
    deadline = time.monotonic() + timeout
    while len(seen) < count and time.monotonic() < deadline:
        for consumer in consumers:
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                seen.add(message.value())
    # Each commits. A commit can meet a rebalance still under way (the second member's join moves
    # the generation on): as an application does, every member polls so that it ends, then all
    # commit again (positions only move forward, so the last round commits the ends).
    moving = {client.KafkaError.ILLEGAL_GENERATION, client.KafkaError.REBALANCE_IN_PROGRESS}
    while True:
        rebalancing = False
        for consumer in consumers:
            if consumer.assignment():
                try:
                    consumer.commit(asynchronous=False)
                except client.KafkaException as exc:
                    code = exc.args[0].code()
                    if code in moving and time.monotonic() < deadline:
                        rebalancing = True
                    elif code != client.KafkaError._NO_OFFSET:  # else nothing consumed since the assignment
                        raise
        if not rebalancing:
            break
        for _ in range(5):
            for consumer in consumers:
                message = consumer.poll(0.1)
                if message is not None and message.error() is None:
                    seen.add(message.value())
    for consumer in consumers:
        consumer.close()
    if topic.startswith("^"):  # a pattern: the values tell
        return sorted(seen), {}
    probe = client.Consumer(client_config(client, bootstrap, **{"group.id": group}))
    partitions = probe.list_topics(topic, timeout=10).topics[topic].partitions
    tps = [client.TopicPartition(topic, p) for p in sorted(partitions)]
    committed = {tp.partition: tp.offset for tp in probe.committed(tps, timeout=10)}
    probe.close()
    return sorted(seen), committed


def transactions(client: ModuleType, bootstrap: str, topic: str) -> None:
    """Three transactions on two partitions: committed, aborted, committed."""
    producer = client.Producer(client_config(client, bootstrap, **{"transactional.id": unique_name("txn")}))
    producer.init_transactions(15)
    for label, commit in (("first", True), ("aborted", False), ("second", True)):
        producer.begin_transaction()
        for i in range(4):
            producer.produce(topic, value=f"{label}-{i}".encode(), partition=i % 2)
        producer.flush(10)
        if commit:
            producer.commit_transaction(15)
        else:
            producer.abort_transaction(15)
    if client.__name__ == "kafkawire":
        producer.close()


def fresh_topic(mock: Mock, partitions: int) -> str:
    topic = unique_name("t")
    mock.create_topic(topic, partitions)
    return topic


def consume_transform_produce(client: ModuleType, bootstrap: str, source: str, count: int) -> dict[int, int]:
    """Read ``count`` records in a group, write them on in one transaction with the group's offsets;
    returns the offsets the group has committed afterwards (waiting up to 30 s for them to show)."""
    group = unique_name("eos")
    conf = {"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    consumer = client.Consumer(client_config(client, bootstrap, **conf))
    producer = client.Producer(client_config(client, bootstrap, **{"transactional.id": unique_name("eos")}))
    producer.init_transactions(15)
    consumer.subscribe([source])
    read = 0
    deadline = time.monotonic() + 120  # a bound on a hang: the loop ends once all are read
    while read < count and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            read += 1
    producer.begin_transaction()
    producer.produce(source + "-out", value=b"%d" % read)
    producer.send_offsets_to_transaction(
        consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 15
    )
    producer.commit_transaction(15)
    tps = [client.TopicPartition(source, tp.partition) for tp in consumer.assignment()]
    committed = {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=10)}
    shown_by = time.monotonic() + 30
    while min(committed.values(), default=0) < 0 and time.monotonic() < shown_by:
        time.sleep(0.2)  # a real broker writes the transaction's offsets after EndTxn answers
        committed = {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=10)}
    consumer.close()
    if client.__name__ == "kafkawire":
        producer.close()
    return committed


def read_across_a_leader_move(client: ModuleType, mock: Mock, topic: str, values: list[bytes]) -> list[bytes]:
    """An assigned reader reads the first half, the leader moves (1 -> 3), the second half is
    written to the new leader; returns everything the reader got, in order."""
    half = len(values) // 2
    mock.partition_set_leader(topic, 0, 1)
    produce(CLIENTS["confluent"], mock.bootstrap(), topic, values[:half], partition=lambda i: 0)
    conf = {"group.id": unique_name("mover"), "enable.auto.commit": False}
    consumer = client.Consumer(client_config(client, mock.bootstrap(), **conf))
    consumer.assign([client.TopicPartition(topic, 0, 0)])
    got: list[bytes] = []
    moved = False
    deadline = time.monotonic() + 30
    while len(got) < len(values) and time.monotonic() < deadline:
        if len(got) == half and not moved:
            mock.partition_set_leader(topic, 0, 3)
            moved = True
            produce(CLIENTS["confluent"], mock.bootstrap(), topic, values[half:], partition=lambda i: 0)
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            got.append(message.value())
    consumer.close()
    return got
