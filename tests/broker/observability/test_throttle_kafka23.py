"""throttle_cb: a Kafka 2.3 broker with a consumer_byte_rate / producer_byte_rate quota on a
client.id delays its Fetch / Produce answers; kafkawire's Consumer and Producer must tell throttle_cb
from poll() as confluent-kafka's do (the judge, under a quota of its own), naming the same broker."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.judge import produce_with_confluent, unique_name
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

DEADLINE = 60.0  # bound on the wait for a throttled answer; the quota's first excess brings one


def read_until_throttled(consumer: Any, tp: Any, events: list[Any]) -> None:
    """Read ``tp`` again and again (the quota may take effect a little later) until throttle_cb
    was called (``events`` has what it got), or the deadline passed."""
    consumer.assign([tp])
    end = time.monotonic() + DEADLINE
    while not events and time.monotonic() < end:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is not None and msg.error().code() == kafkawire.KafkaError._PARTITION_EOF:
            consumer.seek(tp)


def test_consumer_throttle_cb_told_of_fetch_quota_delays_as_confluent_kafka(
    kafka23: Any, topic_name: Callable[[str], str]
) -> None:
    bootstrap = kafka23.bootstrap()
    topic = topic_name("throttle")
    create_topic(bootstrap, topic, 1)
    produce_with_confluent(bootstrap, topic, [bytes(1000)] * 50)
    results = {}
    for name, lib in (("ours", kafkawire), ("theirs", confluent_kafka)):
        client_id = unique_name(f"quota-{name}")
        kafka23.set_client_quota(client_id, "consumer_byte_rate=1000")
        events: list[Any] = []
        consumer = lib.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": unique_name("grp"),
                "client.id": client_id,
                "enable.partition.eof": True,
                "enable.auto.commit": False,
                "throttle_cb": events.append,
            }
        )
        try:
            read_until_throttled(consumer, lib.TopicPartition(topic, 0, 0), events)
            results[name] = events
        finally:
            consumer.close()
    ours, theirs = results["ours"], results["theirs"]
    assert theirs, "the judge saw no throttling: the quota did not take effect"
    assert ours, "confluent-kafka was throttled, kafkawire's throttle_cb never called"
    assert isinstance(ours[0], kafkawire.ThrottleEvent) and ours[0].throttle_time > 0
    assert (ours[0].broker_id, ours[0].broker_name) == (theirs[0].broker_id, theirs[0].broker_name)


def produce_until_throttled(producer: Any, topic: str, events: list[Any]) -> None:
    end = time.monotonic() + DEADLINE
    while not events and time.monotonic() < end:
        producer.produce(topic, bytes(1000))
        producer.poll(0.05)
    producer.flush(DEADLINE)


def test_producer_throttle_cb_told_of_produce_quota_delays_as_confluent_kafka(
    kafka23: Any, topic_name: Callable[[str], str]
) -> None:
    bootstrap = kafka23.bootstrap()
    topic = topic_name("pthrottle")
    create_topic(bootstrap, topic, 1)
    results = {}
    for name, lib in (("ours", kafkawire), ("theirs", confluent_kafka)):
        client_id = unique_name(f"pquota-{name}")
        kafka23.set_client_quota(client_id, "producer_byte_rate=1000")
        events: list[Any] = []
        producer = lib.Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": client_id,
                "linger.ms": 0,
                "throttle_cb": events.append,
            }
        )
        produce_until_throttled(producer, topic, events)
        results[name] = events
    ours, theirs = results["ours"], results["theirs"]
    assert theirs, "the judge saw no throttling: the quota did not take effect"
    assert ours, "confluent-kafka was throttled, kafkawire's throttle_cb never called"
    assert isinstance(ours[0], kafkawire.ThrottleEvent) and ours[0].throttle_time > 0
    assert (ours[0].broker_id, ours[0].broker_name) == (theirs[0].broker_id, theirs[0].broker_name)
