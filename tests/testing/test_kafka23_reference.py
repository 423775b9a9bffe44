"""read_committed judged against a real broker: librdkafka's mock sends no aborted-transactions list
in Fetch (its readers see aborted records), so for transactions the reference is Kafka 2.3."""

from __future__ import annotations

import pytest

from tests.harness.judge import unique_name
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

from .mocks import CLIENTS, mock_cluster
from .scenarios import consume_transform_produce, fresh_topic, produce, read_back, transactions

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def values(records: list[tuple[int, int, bytes]]) -> list[tuple[int, bytes]]:
    return sorted((partition, value) for partition, _, value in records)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_transactions_read_the_same_as_on_kafka_23(kafka23: KafkaBroker, client: str) -> None:
    topic = unique_name("txn-ref")
    create_topic(kafka23.bootstrap(), topic, 2)
    transactions(CLIENTS[client], kafka23.bootstrap(), topic)
    reference = {
        isolation: values(read_back(kafka23.bootstrap(), topic, count, isolation=isolation))
        for isolation, count in (("read_committed", 8), ("read_uncommitted", 12))
    }
    with mock_cluster("kafkawire") as mock:
        topic = fresh_topic(mock, 2)
        transactions(CLIENTS[client], mock.bootstrap(), topic)
        ours = {
            isolation: values(read_back(mock.bootstrap(), topic, count, isolation=isolation))
            for isolation, count in (("read_committed", 8), ("read_uncommitted", 12))
        }
    assert len(reference["read_committed"]) == 8 and len(reference["read_uncommitted"]) == 12
    assert ours == reference


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_offsets_sent_to_a_transaction_commit_as_on_kafka_23(kafka23: KafkaBroker, client: str) -> None:
    topic = unique_name("eos-ref")
    create_topic(kafka23.bootstrap(), topic, 2)
    produce(CLIENTS["confluent"], kafka23.bootstrap(), topic, [b"%d" % i for i in range(6)], partition=lambda i: i % 2)
    reference = consume_transform_produce(CLIENTS[client], kafka23.bootstrap(), topic, 6)
    with mock_cluster("kafkawire") as mock:
        topic = fresh_topic(mock, 2)
        produce(CLIENTS["confluent"], mock.bootstrap(), topic, [b"%d" % i for i in range(6)], partition=lambda i: i % 2)
        assert consume_transform_produce(CLIENTS[client], mock.bootstrap(), topic, 6) == reference == {0: 3, 1: 3}
