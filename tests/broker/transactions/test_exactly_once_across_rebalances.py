"""Exactly-once across rebalances (issue 39): a transactional consume-transform-produce copy by a
group whose membership changes mid-way (a second member joins, then leaves), on Kafka 2.3 (no
KIP-447: the client's order of steps is the only protection there). Each member finishes its open
transaction in on_revoke/on_lost; the group member joins again only after that callback ran, so
the new assignment's committed offsets are read after the transaction's. Every source record
must reach the destination exactly once, as with confluent-kafka running the same program."""

from __future__ import annotations

import threading
import time
from collections import Counter
from types import ModuleType
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import Record, consume_all, judge_config, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

CLIENTS: dict[str, ModuleType] = {"confluent": confluent_kafka, "kafkawire": kafkawire}
PARTITIONS = 4
RECORDS = 1200
BATCH = 20  # records per transaction


class Member:
    """One copying member: a read_committed consumer and a transactional producer."""

    def __init__(self, client: str, bootstrap: str, group: str, source: str, dest: str, stop: threading.Event) -> None:
        m = CLIENTS[client]
        self.m, self.source, self.dest, self.stop = m, source, dest, stop
        cconf = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
            "partition.assignment.strategy": "range",
        }
        pconf = {"bootstrap.servers": bootstrap, "transactional.id": unique_name("copy"), "linger.ms": 5}
        if client == "confluent":
            cconf, pconf = judge_config(bootstrap, **cconf), judge_config(bootstrap, **pconf)
        self.consumer = m.Consumer(cconf)
        self.producer = m.Producer(pconf)
        self.producer.init_transactions(30)
        self.open = 0  # records in the open transaction
        self.error: BaseException | None = None

    def finish(self) -> None:
        """Commit the open transaction with the positions consumed (the member it consumed as)."""
        if not self.open:
            return
        c = self.consumer
        self.producer.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(), 30)
        self.producer.commit_transaction(30)
        self.open = 0

    def run(self) -> None:
        c = self.consumer
        on_revoke = lambda _c, _parts: self.finish()  # noqa: E731
        try:
            c.subscribe([self.source], on_revoke=on_revoke, on_lost=lambda _c, _p: self.abort())
            while not self.stop.is_set():
                msg = c.poll(0.2)
                if msg is None or msg.error() is not None:
                    if self.open and msg is None:
                        self.finish()
                    continue
                if not self.open:
                    self.producer.begin_transaction()
                self.producer.produce(self.dest, msg.value(), key=msg.key())
                self.open += 1
                if self.open >= BATCH:
                    self.finish()
            self.finish()
        except BaseException as exc:  # the test thread reports it
            self.error = exc
        finally:
            c.close()
            self.producer.flush(10)

    def abort(self) -> None:
        """Partitions lost: someone else may have them, so the open transaction is thrown away."""
        if self.open:
            self.producer.abort_transaction(30)
            self.open = 0


def _copy(client: str, bootstrap: str) -> Counter[bytes]:
    source, dest = unique_name("eos-src"), unique_name("eos-dst")
    create_topic(bootstrap, source, PARTITIONS)
    create_topic(bootstrap, dest, PARTITIONS)
    produce_with_confluent(bootstrap, source, [Record(b"r%05d" % i, key=b"k%d" % (i % 97)) for i in range(RECORDS)])
    group = unique_name("eos")
    stop_first, stop_second = threading.Event(), threading.Event()
    first = Member(client, bootstrap, group, source, dest, stop_first)
    threads = [threading.Thread(target=first.run)]
    threads[0].start()
    deadline = time.monotonic() + 120
    # The partitions named: left to find them, each look would get the one-second timeout for its
    # metadata too, which a loaded host's judge may not meet (raising _TRANSPORT, not returning).
    everywhere = range(PARTITIONS)

    def copied(at_least: int) -> bool:
        """At least ``at_least`` distinct records in the destination, or the deadline passed (the
        judge's copy can hold a record twice: counting those would stop the copy with records still
        to go). What a second shows is read (a count never met: a duplicate would end it early)."""
        found = consume_all(bootstrap, dest, 2 * RECORDS, timeout=1, partitions=everywhere)
        return len({m.value() for m in found}) >= at_least or time.monotonic() >= deadline

    while not copied(RECORDS // 4):
        pass
    second = Member(client, bootstrap, group, source, dest, stop_second)  # a rebalance mid-copy
    threads.append(threading.Thread(target=second.run))
    threads[1].start()
    while not copied(RECORDS * 2 // 3):
        pass
    stop_second.set()  # and another as it leaves
    threads[1].join(60)
    while not copied(RECORDS):
        pass
    stop_first.set()
    threads[0].join(60)
    for member in (first, second):
        if member.error is not None:
            raise member.error
    copied = consume_all(bootstrap, dest, RECORDS, timeout=30, settle=3.0)
    return Counter(m.value() for m in copied)


@pytest.mark.parametrize("client", ["kafkawire", "confluent"])
def test_a_transactional_copy_meets_a_rebalance_without_duplicates(kafka23: KafkaBroker, client: str) -> None:
    counts = _copy(client, kafka23.bootstrap())
    duplicated = {value: n for value, n in counts.items() if n > 1}
    missing = RECORDS - len(counts)
    assert not missing, (client, missing)
    if client == "confluent":
        # The judge reads a batch twice now and then on Kafka 2.3 (no KIP-447: its offsets fetch can
        # precede the commit marker; contributing/judges.md): its run shows the program works, not that
        # librdkafka is exactly-once there.
        print(f"confluent-kafka duplicated {len(duplicated)} record(s)")
    else:
        assert not duplicated, (client, len(duplicated))


def _offsets_alone(client: str, bootstrap: str) -> int:
    """A transaction that carries offsets and no record (every record of a batch filtered out):
    committed, the group's offset as a read_committed judge then reads it."""
    m = CLIENTS[client]
    topic = unique_name("eos-offsets")
    create_topic(bootstrap, topic, 1)
    cconf: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": topic}
    pconf: dict[str, Any] = {"bootstrap.servers": bootstrap, "transactional.id": topic}
    if client == "confluent":
        cconf, pconf = judge_config(bootstrap, **cconf), judge_config(bootstrap, **pconf)
    consumer, producer = m.Consumer(cconf), m.Producer(pconf)
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.send_offsets_to_transaction([m.TopicPartition(topic, 0, 7)], consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
    finally:
        consumer.close()
    judge = confluent_kafka.Consumer(
        judge_config(bootstrap, **{"group.id": topic, "isolation.level": "read_committed"})
    )
    try:
        deadline = time.monotonic() + 60  # the markers are written after EndTxn is answered
        while True:
            offset: int = judge.committed([confluent_kafka.TopicPartition(topic, 0)], timeout=10)[0].offset
            if offset == 7 or time.monotonic() > deadline:
                return offset
            time.sleep(0.1)
    finally:
        judge.close()


def test_a_transaction_of_offsets_alone_commits_them(kafka23: KafkaBroker) -> None:
    """EndTxn is sent for a transaction whose only content is the group's offsets (kafkawire used
    to skip it, leaving them pending until the broker aborted the transaction: lost)."""
    assert _offsets_alone("kafkawire", kafka23.bootstrap()) == _offsets_alone("confluent", kafka23.bootstrap()) == 7
