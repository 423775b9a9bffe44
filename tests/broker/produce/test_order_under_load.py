"""Produce order on a busy machine, both clients (issue 39 points 4 and 5).

On librdkafka's mock cluster (3 brokers, replication 3) an idempotent producer (``linger.ms`` 2,
``retry.backoff.ms`` 50, 5 in flight) sends 6,000 keyed records over 6 partitions; a third of the
way in the mock answers three Produce requests with a fault. Every core is kept busy meanwhile
(tests/harness/load.py). The mock takes any sequence from an idempotent producer, so order is the
producer's alone to keep: kafkawire wrote batches pipelined behind a refused one ahead of its
retry (13 records out of order in 4 of 6 runs). The checker reads the topic back with
confluent-kafka and counts runs with a record out of produce() order for its key, a duplicate, a
record lost or a delivery report missing or failed.

NOT_ENOUGH_REPLICAS and NOT_LEADER_OR_FOLLOWER: kafkawire keeps order in every run, as
confluent-kafka does. A dropped connection (_TRANSPORT) loses answers to batches the mock wrote,
and the mock does not drop the retried duplicates: there kafkawire may fail no more often than
confluent-kafka does in as many runs.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire.protocol.apis import PRODUCE
from tests.harness.judge import consume_all, unique_name
from tests.harness.load import BusyLoops
from tests.harness.mock_cluster import MockCluster

pytestmark = [pytest.mark.broker, pytest.mark.slow]

RECORDS = 6_000
PARTITIONS = 6
KEYS = 50
WAIT = 120.0
TRANSPORT = -195  # the mock drops the connection instead of answering
NOT_ENOUGH_REPLICAS = 19
NOT_LEADER_OR_FOLLOWER = 6
CONFIG = {
    "enable.idempotence": True,
    "linger.ms": 2,
    "retry.backoff.ms": 50,
    "max.in.flight.requests.per.connection": 5,
}


@dataclass
class Outcome:
    reordered: int = 0
    duplicated: int = 0
    lost: int = 0
    unreported: int = 0  # records without a successful delivery report

    @property
    def failed(self) -> bool:
        return bool(self.reordered or self.duplicated or self.lost or self.unreported)


def run_once(client: Any, error: int) -> Outcome:
    """One run on a fresh mock cluster: warm up every partition, then the records, the fault
    pushed a third of the way in."""
    with MockCluster(broker_count=3) as mock:
        topic = unique_name("order")
        mock.create_topic(topic, PARTITIONS, 3)
        producer = client.Producer({"bootstrap.servers": mock.bootstraps, **CONFIG})
        for partition in range(PARTITIONS):
            producer.produce(topic, value=b"warm-up", partition=partition)
        assert producer.flush(WAIT) == 0
        delivered: list[bytes] = []

        def report(err: Any, msg: Any) -> None:
            if err is None:
                delivered.append(msg.value())

        for i in range(RECORDS):
            if i == RECORDS // 3:
                mock.push_request_errors(PRODUCE.key, [error] * 3)
            key = b"k%02d" % (i % KEYS)
            while True:
                try:
                    producer.produce(topic, key=key, value=b"%s:%06d" % (key, i), on_delivery=report)
                    break
                except BufferError:
                    producer.poll(0.01)
            producer.poll(0)
        assert producer.flush(WAIT) == 0, "every record reported"
        if hasattr(producer, "close"):
            producer.close()
        # (settle: read on past the count, so duplicates show.)
        read = consume_all(mock.bootstraps, topic, RECORDS + PARTITIONS, timeout=WAIT, settle=0.5)
    outcome = Outcome()
    values = [m.value() for m in sorted(read, key=lambda m: (m.partition(), m.offset())) if m.value() != b"warm-up"]
    counts = collections.Counter(values)
    outcome.duplicated = sum(n - 1 for n in counts.values())
    outcome.lost = RECORDS - len(counts)
    outcome.unreported = RECORDS - len(set(delivered))
    last: dict[bytes, int] = {}
    seen: set[bytes] = set()
    for value in values:
        if value in seen:
            continue  # (a duplicate: counted above, not as a reordering)
        seen.add(value)
        key, _, seq = value.partition(b":")
        if int(seq) < last.get(key, -1):
            outcome.reordered += 1
        last[key] = max(int(seq), last.get(key, -1))
    return outcome


def failed_runs(client: Any, error: int, runs: int) -> list[Outcome]:
    with BusyLoops():
        outcomes = [run_once(client, error) for _ in range(runs)]
    return [o for o in outcomes if o.failed]


@pytest.mark.parametrize(
    "error", [NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER], ids=["not-enough-replicas", "not-leader"]
)
def test_kafkawire_keeps_order_in_every_run_under_load(error: int) -> None:
    assert failed_runs(kafkawire, error, 50) == []


@pytest.mark.parametrize(
    "error", [NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER], ids=["not-enough-replicas", "not-leader"]
)
def test_confluent_kafka_keeps_order_in_the_same_scenario(error: int) -> None:
    """The bar kafkawire is held to: the judge itself keeps order here. Its runs are held to order
    and duplicates only: it once lost a record it had reported delivered (contributing/judges.md), which is
    the judge's defect and says nothing of order; kafkawire's runs are held to all four counts."""
    failed = failed_runs(confluent_kafka, error, 10)
    print("confluent-kafka's failed runs:", failed)
    assert [o for o in failed if o.reordered or o.duplicated] == []


def test_dropped_connections_fail_no_more_runs_than_on_confluent_kafka() -> None:
    runs = 15
    ours = failed_runs(kafkawire, TRANSPORT, runs)
    theirs = failed_runs(confluent_kafka, TRANSPORT, runs)
    assert not any(o.reordered or o.lost or o.unreported for o in ours), ours
    assert len(ours) <= len(theirs), f"kafkawire {ours}, confluent-kafka {theirs}"
