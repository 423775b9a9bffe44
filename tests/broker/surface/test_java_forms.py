"""The seeds' Java forms (issue 37): ``send(ProducerRecord)`` and ``send(record, callback)`` as the
producer concepts page shows them, ``ProducerRecord`` in the Java client's argument orders,
``ssl.protocol``/``ssl.enabled.protocols`` as TLS versions, ``get_version(subject)`` for the latest.

What reached the broker is read back by confluent-kafka (the judge)."""

from __future__ import annotations

import re
import ssl
from typing import Any

import pytest

from kafkawire import KafkaException, Producer, ProducerRecord, RecordMetadata, SyncProducer
from kafkawire.local_broker import TansuBroker
from kafkawire.schema_registry import Schema
from kafkawire.schema_registry.mock_schema_registry_client import MockSchemaRegistryClient
from kafkawire.security.tls_context import tls_context
from tests.harness.judge import consume_all
from tests.harness.topics import create_topic

LIMIT = 30.0


# --- ProducerRecord ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fields"),
    [
        (("T1", "value"), {"key": None, "value": "value", "partition": -1, "timestamp": 0, "headers": None}),
        (("T1", "key", "value"), {"key": "key", "value": "value", "partition": -1, "timestamp": 0}),
        (("T1", 2, "key", "value"), {"key": "key", "value": "value", "partition": 2, "timestamp": 0}),
        (("T1", None, "key", "value"), {"key": "key", "value": "value", "partition": -1}),
        (("T1", 2, 1_700_000_000_000, "key", "value"), {"partition": 2, "timestamp": 1_700_000_000_000, "key": "key"}),
        (
            ("T1", 2, None, "k", "v", [("h", b"1")]),
            {"timestamp": 0, "key": "k", "value": "v", "headers": [("h", b"1")]},
        ),
    ],
    ids=["topic-value", "topic-key-value", "partition-key-value", "null-partition", "timestamp", "headers"],
)
def test_producer_record_takes_the_java_orders(args: tuple[Any, ...], fields: dict[str, Any]) -> None:
    record = ProducerRecord(*args)
    assert record.topic == "T1"
    assert {name: getattr(record, name) for name in fields} == fields


def test_producer_record_takes_keyword_fields_and_refuses_what_java_has_not() -> None:
    record = ProducerRecord("T1", value=b"v", key=b"k", partition=1, timestamp=5, headers={"h": b"x"})
    assert (record.key, record.value, record.partition, record.timestamp, record.headers) == (
        b"k",
        b"v",
        1,
        5,
        {"h": b"x"},
    )
    assert ProducerRecord(topic="T1", key="k").key == "k"
    with pytest.raises(TypeError, match="multiple values for argument 'value'"):
        ProducerRecord("T1", "key", "value", value="again")
    with pytest.raises(TypeError, match="unexpected keyword argument 'offset'"):
        ProducerRecord("T1", offset=3)
    with pytest.raises(TypeError, match="1 to 6 positional arguments"):
        ProducerRecord("T1", 1, 2, "k", "v", None, "extra")


def test_producer_record_id_is_the_cpp_clients_record_id() -> None:
    """The C++ client's ``ProducerRecord`` id (the quick start's ``recordId()``): by keyword only, an
    unsigned 64-bit number or None, set again as its ``setId`` does; refused naming it otherwise."""
    assert ProducerRecord("T1", "v").id is None
    record = ProducerRecord("T1", 2, "k", "v", id=7)
    assert (record.partition, record.key, record.value, record.id) == (2, "k", "v", 7)
    assert ProducerRecord("T1", "v", id=0).id == 0 and ProducerRecord("T1", "v", id=2**64 - 1).id == 2**64 - 1
    assert record != ProducerRecord("T1", 2, "k", "v", id=8)  # the id is one of the record's fields
    assert "id=7" in repr(record)
    record.id = 9
    assert record.id == 9
    for bad, error in ((True, TypeError), ("7", TypeError), (1.0, TypeError), (-1, ValueError), (2**64, ValueError)):
        with pytest.raises(error, match="ProducerRecord id must be"):
            ProducerRecord("T1", "v", id=bad)
    with pytest.raises(TypeError, match="1 to 6 positional arguments"):
        ProducerRecord("T1", 1, 2, "k", "v", None, 7)  # never positional: Java's orders are unchanged


# --- send() -----------------------------------------------------------------------------------------


@pytest.mark.broker
def test_send_producer_record_and_callback_as_the_concepts_page(tansu: TansuBroker, topic_name: Any) -> None:
    topic = topic_name("java-send")
    create_topic(tansu.bootstrap, topic, 1)
    completed: list[tuple[Any, Any]] = []
    producer = Producer({"bootstrap.servers": tansu.bootstrap})
    try:
        f = producer.send(ProducerRecord(topic, "key", "value"))
        rm = f.result(LIMIT)
        assert isinstance(rm, RecordMetadata) and rm.offset == 0
        g = producer.send(
            ProducerRecord(topic, "key2", "value2"), lambda metadata, exception: completed.append((metadata, exception))
        )
        assert producer.flush(LIMIT) == 0
        assert g.result(LIMIT).offset == 1
    finally:
        producer.close()
    ((metadata, exception),) = completed
    assert exception is None and isinstance(metadata, RecordMetadata) and metadata.offset == 1
    got = consume_all(tansu.bootstrap, topic, 2)
    assert [(m.key(), m.value()) for m in got] == [(b"key", b"value"), (b"key2", b"value2")]


@pytest.mark.broker
def test_send_callback_gets_the_exception_when_the_record_fails(tansu: TansuBroker, topic_name: Any) -> None:
    # A topic never made, which no one asked about before the send: the record is queued, then
    # fails. (A partition past the topic's count failed in send() itself whenever the producer
    # already knew that count, as Java's send() throws: once under busy loops.)
    topic = topic_name("java-send-fail")
    completed: list[tuple[Any, Any]] = []
    config = {"bootstrap.servers": tansu.bootstrap, "allow.auto.create.topics": False, "message.timeout.ms": 3000}
    producer = Producer(config)
    try:
        f = producer.send(
            ProducerRecord(topic, "k", "v"), lambda metadata, exception: completed.append((metadata, exception))
        )
        assert producer.flush(LIMIT) == 0
        with pytest.raises(KafkaException):
            f.result(LIMIT)
    finally:
        producer.close()
    ((metadata, exception),) = completed
    assert metadata is None and isinstance(exception, KafkaException)


@pytest.mark.broker
def test_send_echoes_each_records_id_in_its_metadata(tansu: TansuBroker, topic_name: Any) -> None:
    """As the C++ quick start keeps its records to send by id and erases each as ``recordId()``
    reports it: every future, callback and SyncProducer answer carries its own record's id, records
    without one None; the id stays in the client (the records read back are the same)."""
    topic = topic_name("record-ids")
    create_topic(tansu.bootstrap, topic, 3)
    ids = {i: 2**64 - 1 - i for i in range(60)}  # spread over three partitions by their keys
    reported: dict[int, Any] = {}
    producer = Producer({"bootstrap.servers": tansu.bootstrap, "linger.ms": 5})
    try:
        futures = {}
        for i, record_id in ids.items():
            record = ProducerRecord(topic, b"k%d" % (i % 7), b"v%d" % i, id=record_id)
            if i % 2:
                futures[i] = producer.send(record, lambda md, exc: reported.__setitem__(md.record_id, (md, exc)))
            else:
                futures[i] = producer.send(record)
        plain = producer.send(ProducerRecord(topic, b"k", b"no id"))
        assert producer.flush(LIMIT) == 0
        got = {i: f.result(LIMIT) for i, f in futures.items()}
        assert plain.result(LIMIT).record_id is None
    finally:
        producer.close()
    assert {i: md.record_id for i, md in got.items()} == ids
    assert sorted(reported) == sorted(ids[i] for i in ids if i % 2)
    assert all(exc is None and md == got[i] for i in ids if i % 2 for md, exc in [reported[ids[i]]])
    with SyncProducer({"bootstrap.servers": tansu.bootstrap}) as sync:
        assert sync.send(ProducerRecord(topic, b"k", b"sync", id=5)).record_id == 5
    read = consume_all(tansu.bootstrap, topic, len(ids) + 2)
    assert sorted(m.value() for m in read) == sorted([b"v%d" % i for i in ids] + [b"no id", b"sync"])
    assert all(not m.headers() for m in read)


def test_send_record_refuses_a_callback_that_is_not_callable_and_fields_beside_the_record() -> None:
    producer = Producer({"bootstrap.servers": "127.0.0.1:9"})
    try:
        with pytest.raises(TypeError, match="callback must be callable"):
            producer.send(ProducerRecord("T1", "k", "v"), "not a callback")
        with pytest.raises(TypeError, match="no other record fields"):
            producer.send(ProducerRecord("T1", "k", "v"), None, "key")
        assert len(producer) == 0
    finally:
        producer.close(0)


# --- TLS versions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conf", "lowest", "highest"),
    [
        ({}, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.MAXIMUM_SUPPORTED),
        ({"ssl.protocol": "TLS"}, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.MAXIMUM_SUPPORTED),
        ({"ssl.protocol": "TLSv1.2"}, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
        ({"ssl.protocol": "TLSv1.3"}, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3),
        ({"ssl.enabled.protocols": ["TLSv1.3"]}, ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3),
        (
            {"ssl.enabled.protocols": ["TLSv1.2", "TLSv1.3"], "ssl.protocol": "TLSv1.2"},
            ssl.TLSVersion.TLSv1_2,
            ssl.TLSVersion.TLSv1_2,
        ),
    ],
)
def test_java_tls_version_options_bound_the_context(conf: dict[str, Any], lowest: Any, highest: Any) -> None:
    ctx = tls_context(conf)
    assert (ctx.minimum_version, ctx.maximum_version) == (lowest, highest)


def test_java_tls_version_options_are_checked_at_construction() -> None:
    for key, value in (("ssl.protocol", "SSLv3"), ("ssl.enabled.protocols", "TLSv1.2,TLSv9")):
        with pytest.raises(KafkaException, match=re.escape(key)):
            Producer({"bootstrap.servers": "127.0.0.1:9", key: value})
    p = Producer(
        {"bootstrap.servers": "127.0.0.1:9", "ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": "TLSv1.2,TLSv1.3"}
    )
    p.close(0)
    with pytest.raises(ValueError, match=r"ssl\.enabled\.protocols"):
        tls_context({"ssl.protocol": "TLSv1.2", "ssl.enabled.protocols": ["TLSv1.3"]})


# --- Schema Registry --------------------------------------------------------------------------------


def test_get_version_without_a_version_is_the_latest() -> None:
    client = MockSchemaRegistryClient({"url": "mock://java-forms"})
    for field in ("a", "b"):
        schema = Schema(f'{{"type":"record","name":"R","fields":[{{"name":"{field}","type":"string"}}]}}', "AVRO")
        client.register_schema("subject-value", schema)
    assert client.get_version("subject-value").version == 2
    assert client.get_version("subject-value", version="latest").version == 2
