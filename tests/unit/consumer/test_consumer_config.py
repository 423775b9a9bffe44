"""The consumer's option table (consumer/consumer_config.py) and the face's checks that need no broker."""

from __future__ import annotations

import logging

import pytest

from kafkawire import KafkaError, KafkaException, TopicPartition
from kafkawire.consumer.assignment import Assignment
from kafkawire.consumer.consumer_config import parse_consumer_config


def test_librdkafka_names_aliases_and_defaults() -> None:
    c = parse_consumer_config(
        {
            "group.id": "g",
            "auto.offset.reset": "smallest",
            "fetch.message.max.bytes": 5000,
            "partition.assignment.strategy": "cooperative-sticky",
        }
    )
    assert (c.group_id, c.auto_offset_reset, c.read_committed, c.cooperative) == ("g", "earliest", True, True)
    assert c.options["max.partition.fetch.bytes"] == 5000
    assert parse_consumer_config({"auto.offset.reset": "largest"}).auto_offset_reset == "latest"
    assert parse_consumer_config({"isolation.level": "read_uncommitted"}).read_committed is False
    assert parse_consumer_config({}).assignors == ["range", "roundrobin"]


@pytest.mark.parametrize(
    ("conf", "named"),
    [
        ({"group.id": ""}, "group.id"),
        ({"auto.offset.reset": "sometimes"}, "auto.offset.reset"),
        ({"partition.assignment.strategy": "range,cooperative-sticky"}, "partition.assignment.strategy"),
        ({"partition.assignment.strategy": "sticky-ish"}, "partition.assignment.strategy"),
        ({"session.timeout.ms": 6000, "heartbeat.interval.ms": 6000}, "heartbeat.interval.ms"),
        ({"group.instance.id": "i"}, "group.instance.id"),
        ({"session.timeout.ms": 60000, "max.poll.interval.ms": 50000}, "max.poll.interval.ms"),
        ({"enable.auto.commit": "maybe"}, "enable.auto.commit"),
        ({"fetch.wait.max.mss": 1}, "fetch.wait.max.mss"),
    ],
)
def test_mistakes_name_the_key(conf: dict[str, object], named: str) -> None:
    with pytest.raises(KafkaException) as e:
        parse_consumer_config(conf)
    assert e.value.args[0].code() == KafkaError._INVALID_ARG and named in e.value.args[0].str()


def test_producer_properties_are_checked_then_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kafkawire.consumer"):
        c = parse_consumer_config({"group.id": "g", "linger.ms": 5, "acks": "all"})
    assert "linger.ms" not in c.options
    assert "Configuration property linger.ms is a producer property and will be ignored" in caplog.text
    assert "acks" in caplog.text
    with pytest.raises(KafkaException, match=r"linger\.ms"):
        parse_consumer_config({"linger.ms": "soon"})


def test_assignment_keeps_order_and_refuses_duplicates_and_strangers() -> None:
    a = Assignment()
    added, removed = a.replace([TopicPartition("t", 3, 7), TopicPartition("t", 1)])
    assert (added, removed) == ({("t", 3): 7, ("t", 1): -1000}, [])
    assert a.partitions() == [TopicPartition("t", 3), TopicPartition("t", 1)]
    with pytest.raises(KafkaException):
        a.add([TopicPartition("t", 1)])
    with pytest.raises(KafkaException):
        a.remove([TopicPartition("t", 9)])
    assert a.add([TopicPartition("u", 0, -2)]) == {("u", 0): -2}
    assert a.remove([TopicPartition("t", 3)]) == [("t", 3)]
    assert a.tps() == [("t", 1), ("u", 0)]
