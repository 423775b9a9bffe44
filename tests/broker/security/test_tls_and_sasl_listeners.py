"""TLS and SASL on every connection, judged by a real Apache Kafka 2.3 broker's SSL, SASL_PLAINTEXT
and SASL_SSL listeners: kafkawire writes over each, confluent-kafka reads what it wrote; wrong
credentials and untrusted certificates fail the connection with a clear error (never the secret)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire import KafkaError, Producer
from kafkawire.admin import AdminClient
from kafkawire.core import sasl
from tests.harness.certs import make_ca
from tests.harness.judge import consume_all, judge_config, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker, KafkaUnavailable
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

SECRET = "carol-pw"

SETUPS: dict[str, dict[str, Any]] = {
    "SSL": {},
    "SASL_PLAINTEXT-PLAIN": {"sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"},
    "SASL_SSL-PLAIN-jaas": {
        "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" '
        'password="alice-secret";'
    },
    "SASL_SSL-SCRAM-SHA-256": {"sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "carol", "sasl.password": SECRET},
    "SASL_SSL-SCRAM-SHA-512": {"sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "carol", "sasl.password": SECRET},
    "SASL_PLAINTEXT-OAUTHBEARER": {
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=alice",
    },
    "SASL_PLAINTEXT-OAUTHBEARER-oauth_cb": {
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.config": "principal=alice",
        "oauth_cb": lambda config: _unsigned_token(config),
    },
}


def _unsigned_token(config: str) -> tuple[str, float, str]:
    """An oauth_cb's answer the broker's default (unsecured) validator accepts."""
    token, expiry, principal, _extensions = sasl.unsecured_jwt(config, time.time())
    return token, expiry, principal


@pytest.fixture(scope="module")
def secured(kafka23: KafkaBroker) -> KafkaBroker:
    kafka23.add_scram_user("carol", SECRET)
    return kafka23


def _conf(broker: KafkaBroker, setup: str, **extra: Any) -> dict[str, Any]:
    listener = setup.split("-")[0]
    assert broker.ca is not None
    conf = {"bootstrap.servers": broker.bootstrap(listener), "security.protocol": listener.lower(), **SETUPS[setup]}
    if "SSL" in listener:
        conf["ssl.ca.location"] = str(broker.ca.cert)
    return {**conf, **extra}


def _deliver(conf: dict[str, Any], topic: str, values: list[bytes]) -> list[KafkaError | None]:
    errors: list[KafkaError | None] = []
    p = Producer({**conf, "message.timeout.ms": 30_000})
    try:
        for value in values:
            p.produce(topic, value, on_delivery=lambda err, _msg: errors.append(err))
        p.flush(40)
    finally:
        p.close()
    return errors


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_produce_over_each_listener_read_by_confluent(
    secured: KafkaBroker, topic_name: Callable[[str], str], setup: str
) -> None:
    topic = topic_name("sec")
    create_topic(secured.bootstrap(), topic, 1)
    assert _deliver(_conf(secured, setup), topic, [b"a", b"b"]) == [None, None]
    got = consume_all(secured.bootstrap(), topic, 2, partitions=[0])
    assert [m.value() for m in got] == [b"a", b"b"]


def test_large_batches_over_ssl_read_by_confluent(secured: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    """Batches of many KiB, sealed from the producer's own buffers (not copied into the request),
    arrive byte for byte over Kafka 2.3's SSL listener."""
    topic = topic_name("sec-large")
    create_topic(secured.bootstrap(), topic, 2)
    values = [bytes([i % 251]) * (500 + (i * 37) % 2500) + str(i).encode() for i in range(3000)]
    assert _deliver(_conf(secured, "SSL"), topic, values) == [None] * len(values)
    got = consume_all(secured.bootstrap(), topic, len(values), timeout=60, partitions=[0, 1])
    assert sorted(m.value() for m in got) == sorted(values)


@pytest.mark.parametrize("setup", ["SSL", "SASL_SSL-SCRAM-SHA-512"])
def test_admin_over_secured_listeners(secured: KafkaBroker, topic_name: Callable[[str], str], setup: str) -> None:
    topic = topic_name("secadm")
    create_topic(secured.bootstrap(), topic, 2)
    admin = AdminClient(_conf(secured, setup))
    try:
        md = admin.list_topics(topic, timeout=20)
        assert len(md.topics[topic].partitions) == 2
    finally:
        admin.close()


def _first_error(conf: dict[str, Any]) -> KafkaError:
    """The error a client configured with ``conf`` reports through error_cb when it cannot connect."""
    seen: list[KafkaError] = []
    got = threading.Event()

    def error_cb(err: KafkaError) -> None:
        seen.append(err)
        got.set()

    p = Producer({**conf, "error_cb": error_cb, "message.timeout.ms": 3000})
    try:
        p.produce("never-created", b"x")
        deadline = 20.0
        while not got.is_set() and deadline > 0:
            p.poll(0.5)
            deadline -= 0.5
        p.purge()
        p.flush(5)
    finally:
        p.close()
    assert seen, "no error reported"
    return seen[0]


def test_wrong_password_is_an_authentication_error_without_the_secret(secured: KafkaBroker) -> None:
    wrong = "not-" + SECRET
    err = _first_error(_conf(secured, "SASL_SSL-SCRAM-SHA-256", **{"sasl.password": wrong}))
    assert err.code() == KafkaError._AUTHENTICATION, err
    assert wrong not in str(err) and SECRET not in str(err)


def test_records_timed_out_behind_refused_credentials_name_the_cause(secured: KafkaBroker) -> None:
    """librdkafka's _MSG_TIMED_OUT, its message naming what to fix (not the secret)."""
    wrong = "not-" + SECRET
    reports: list[KafkaError | None] = []
    conf = _conf(secured, "SASL_SSL-SCRAM-SHA-256", **{"sasl.password": wrong})
    p = Producer({**conf, "message.timeout.ms": 2000, "error_cb": lambda _e: None})
    try:
        p.produce("never-created", b"x", on_delivery=lambda err, _msg: reports.append(err))
        p.flush(20)
    finally:
        p.close()
    [err] = reports
    assert err is not None and err.code() == KafkaError._MSG_TIMED_OUT
    assert "_AUTHENTICATION" in err.str() and "SCRAM-SHA-256" in err.str(), err
    assert wrong not in err.str() and SECRET not in err.str()


def test_untrusted_certificate_fails_with_ssl_error(secured: KafkaBroker, tmp_path: Any) -> None:
    other = make_ca(tmp_path, "not-the-brokers-ca")
    err = _first_error(_conf(secured, "SSL", **{"ssl.ca.location": str(other.cert)}))
    assert err.code() == KafkaError._SSL and "certificate" in err.str(), err


@pytest.fixture(scope="module")
def mutual_tls() -> Iterator[KafkaBroker]:
    try:
        broker = KafkaBroker(client_auth="required").start()
    except KafkaUnavailable as exc:
        pytest.fail(f"Kafka 2.3 is not available: {exc}")
    try:
        yield broker
    finally:
        broker.stop()


def test_mutual_tls_with_pem_and_pkcs12_identities(mutual_tls: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    from tests.harness.certs import STORE_PASSWORD, make_leaf

    assert mutual_tls.ca is not None and mutual_tls._dir is not None
    client = make_leaf(mutual_tls._dir, "kafkawire-client", mutual_tls.ca, hosts=(), client=True)
    topic = topic_name("mtls")
    create_topic(mutual_tls.bootstrap(), topic, 1)
    base = {"ssl.ca.location": str(mutual_tls.ca.cert)}
    pem = {**base, "ssl.certificate.location": str(client.cert), "ssl.key.location": str(client.key)}
    p12 = {**base, "ssl.keystore.location": str(client.pkcs12), "ssl.keystore.password": STORE_PASSWORD}
    for identity in (pem, p12):
        conf = {"bootstrap.servers": mutual_tls.bootstrap("SSL"), "security.protocol": "SSL", **identity}
        assert _deliver(conf, topic, [b"m"]) == [None]
    assert len(consume_all(mutual_tls.bootstrap(), topic, 2, partitions=[0])) == 2
    # Without a client certificate the broker refuses the handshake.
    no_identity = {"bootstrap.servers": mutual_tls.bootstrap("SSL"), "security.protocol": "SSL", **base}
    assert _first_error(no_identity).code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)


def test_set_sasl_credentials_used_by_the_next_authentication(
    secured: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("secreds")
    create_topic(secured.bootstrap(), topic, 1)
    errors: list[KafkaError] = []
    conf = _conf(secured, "SASL_PLAINTEXT-PLAIN", **{"sasl.password": "wrong"})
    p = Producer({**conf, "error_cb": errors.append, "message.timeout.ms": 30_000})
    try:
        reports: list[KafkaError | None] = []
        p.produce(topic, b"late", on_delivery=lambda err, _msg: reports.append(err))
        for _ in range(40):
            p.poll(0.25)
            if errors:
                break
        assert errors and errors[0].code() == KafkaError._AUTHENTICATION
        p.set_sasl_credentials("alice", "alice-secret")
        p.flush(30)
        assert reports == [None]
    finally:
        p.close()
    for client in (AdminClient({"bootstrap.servers": "127.0.0.1:1"}),):
        with pytest.raises(TypeError):
            client.set_sasl_credentials(None, "x")  # type: ignore[arg-type]
        client.close()


@pytest.mark.parametrize("store_type", ["JKS", "PEM"])
def test_java_truststore_options(secured: KafkaBroker, topic_name: Callable[[str], str], store_type: str) -> None:
    """Spark's connector users keep Java's options: the broker's keytool-made JKS truststore."""
    assert secured._dir is not None and secured.ca is not None
    location = secured._dir / "truststore.jks" if store_type == "JKS" else secured.ca.cert
    topic = topic_name("jks")
    create_topic(secured.bootstrap(), topic, 1)
    conf = {
        "bootstrap.servers": secured.bootstrap("SSL"),
        "security.protocol": "SSL",
        "ssl.truststore.location": str(location),
        "ssl.truststore.password": "store-pass",
        "ssl.truststore.type": store_type,
    }
    assert _deliver(conf, topic, [b"j"]) == [None]


def test_secrets_never_in_logs_errors_reprs_or_statistics(
    secured: KafkaBroker, topic_name: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    """Every secret option set, a failing and a working authentication, DEBUG logging on: no secret
    text in any log record, error, repr or statistics document."""
    import logging

    topic = topic_name("scan")
    create_topic(secured.bootstrap(), topic, 1)
    texts: list[str] = []
    right = _conf(secured, "SASL_SSL-SCRAM-SHA-256", **{"statistics.interval.ms": 100, "ssl.key.password": "kp-SECRET"})
    wrong = {**right, "sasl.password": "wrong-SECRET"}
    with caplog.at_level(logging.DEBUG):
        for conf in (wrong, right):
            p = Producer(
                {
                    **conf,
                    "error_cb": lambda e: texts.append(str(e)),
                    "stats_cb": texts.append,
                    "message.timeout.ms": 4000,
                }
            )
            texts.append(repr(p))
            p.produce(topic, b"v", on_delivery=lambda err, msg: texts.append(f"{err} {msg}"))
            p.flush(10)
            p.poll(0.3)
            p.close()
        admin = AdminClient({k: v for k, v in right.items() if k != "statistics.interval.ms"})
        texts.append(repr(admin))
        texts.append(str(admin.list_topics(topic, timeout=10).topics))
        admin.close()
    texts.extend(r.getMessage() for r in caplog.records)
    assert any("SECRET" not in t for t in texts) and len(texts) > 5
    for secret in (SECRET, "wrong-SECRET", "kp-SECRET"):
        leaked = [t for t in texts if secret in t]
        assert not leaked, leaked[:3]


def test_group_consumer_over_sasl_ssl_commits_what_confluent_sees(
    secured: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    """A kafkawire Consumer in a group reads over SASL_SSL SCRAM-SHA-512 what confluent-kafka wrote
    over the same listener; its commit is what confluent-kafka's consumer reads back there."""
    topic, group = topic_name("secgrp"), unique_name("secgrp")
    create_topic(secured.bootstrap(), topic, 2)
    conf = _conf(secured, "SASL_SSL-SCRAM-SHA-512")
    listener = conf["bootstrap.servers"]
    sent = [b"v%d" % i for i in range(20)]
    produce_with_confluent(listener, topic, sent, config=conf)
    consumer = kafkawire.Consumer(
        {
            **conf,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )
    got: list[kafkawire.Message] = []
    try:
        consumer.subscribe([topic])
        for _ in range(120):
            for m in consumer.consume(20, 0.25):
                error = m.error()
                assert error is None or error.code() == KafkaError._PARTITION_EOF, error
                if error is None:
                    got.append(m)
            if len(got) >= len(sent):
                break
        assert sorted(m.value() or b"" for m in got) == sorted(sent)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    ends: dict[int, int] = {}
    for m in got:
        partition, offset = m.partition(), m.offset()
        assert partition is not None and offset is not None
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    judge = confluent_kafka.Consumer(judge_config(listener, **{**conf, "group.id": group}))
    try:
        committed = judge.committed([confluent_kafka.TopicPartition(topic, p) for p in (0, 1)], timeout=20)
    finally:
        judge.close()
    assert {tp.partition: tp.offset for tp in committed if tp.partition in ends} == ends
    assert all(tp.error is None for tp in committed)


def test_group_consumer_wrong_password_reports_authentication_without_the_secret(
    secured: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    wrong = "not-" + SECRET
    conf = _conf(secured, "SASL_SSL-SCRAM-SHA-512", **{"sasl.password": wrong})
    errors: list[KafkaError] = []
    consumer = kafkawire.Consumer({**conf, "group.id": unique_name("secbad"), "error_cb": errors.append})
    events: list[KafkaError] = []
    try:
        consumer.subscribe([topic_name("secbad")])
        for _ in range(80):
            m = consumer.poll(0.25)
            error = None if m is None else m.error()
            if error is not None:
                events.append(error)
            if errors:
                break
    finally:
        consumer.close()
    assert errors, f"no error_cb report (poll events: {events})"
    assert errors[0].code() == KafkaError._AUTHENTICATION, errors[0]
    assert "_AUTHENTICATION" in str(errors[0]) and "SCRAM-SHA-512" in errors[0].str(), errors[0]
    for err in errors + events:
        assert wrong not in str(err) and SECRET not in str(err), err
