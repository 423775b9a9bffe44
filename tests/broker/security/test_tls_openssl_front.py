"""TLS judged by a second server: OpenSSL's, through ``socat OPENSSL-LISTEN`` in front of Tansu
(tests/harness/tls_front.py), with Tansu advertising the TLS port so every connection is TLS.

kafkawire produces through the front and confluent-kafka reads through the same front with the same
settings, under TLS 1.2 only and TLS 1.3 only; a certificate for another host name and mutual TLS
are refused or accepted by both clients alike, so a failure is ours, not the set-up's."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

from kafkawire import KafkaError, Producer
from kafkawire.admin import AdminClient, NewTopic
from kafkawire.local_broker import LocalBrokerUnavailable, TansuBroker
from tests.harness.certs import KEY_PASSWORD, Authority, Leaf, make_ca, make_leaf
from tests.harness.judge import consume_all, judge_config
from tests.harness.tls_front import INSTALL_HINT, TlsFront, socat

pytestmark = [pytest.mark.broker, pytest.mark.skipif(socat() is None, reason=INSTALL_HINT)]


class Pki:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.ca: Authority = make_ca(directory)
        self.server: Leaf = make_leaf(directory, "front", self.ca)
        self.other_host: Leaf = make_leaf(directory, "front-other", self.ca, hosts=("broker.example.com",))
        self.client: Leaf = make_leaf(directory, "client", self.ca, hosts=(), client=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("tls-front"))


Front = Callable[..., TlsFront]


@pytest.fixture
def front() -> Iterator[Front]:
    """``front(leaf, **socat_options)``: a fresh Tansu advertising a fresh TLS front's port."""
    started: list[TansuBroker | TlsFront] = []

    def make(leaf: Leaf, **options: Any) -> TlsFront:
        tls = TlsFront(leaf.cert, leaf.key, **options)
        try:
            broker = TansuBroker(advertised_port=tls.port).start()
        except LocalBrokerUnavailable as exc:
            pytest.fail(f"Tansu is not available: {exc}")
        started.append(broker)
        started.append(tls.start(broker.port))
        return tls

    try:
        yield make
    finally:
        for thing in reversed(started):
            thing.stop()


def _tls(pki: Pki, **extra: Any) -> dict[str, Any]:
    return {"security.protocol": "ssl", "ssl.ca.location": str(pki.ca.cert), **extra}


def _create_topic(bootstrap: str, conf: dict[str, Any], topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **conf})
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=10)[topic].result(15)
        assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == partitions
    finally:
        admin.close()


def _produce(bootstrap: str, conf: dict[str, Any], topic: str, values: list[bytes]) -> list[KafkaError | None]:
    reports: list[KafkaError | None] = []
    p = Producer({"bootstrap.servers": bootstrap, **conf, "message.timeout.ms": 20_000})
    try:
        for i, value in enumerate(values):
            p.produce(topic, value, key=str(i).encode(), on_delivery=lambda err, _m: reports.append(err))
        p.flush(30)
    finally:
        p.close()
    return reports


@pytest.mark.parametrize("version", ["TLS1.2", "TLS1.3"])
def test_produce_through_socat_tls_read_by_confluent(
    pki: Pki, front: Front, topic_name: Callable[[str], str], version: str
) -> None:
    tls = front(pki.server, min_version=version, max_version=version)
    conf = _tls(pki)
    topic = topic_name("tlsfront")
    _create_topic(tls.bootstrap, conf, topic, 3)
    values = [f"v{i}".encode() * (1 + i % 50) for i in range(300)]
    assert _produce(tls.bootstrap, conf, topic, values) == [None] * len(values)
    got = consume_all(tls.bootstrap, topic, len(values), timeout=30, partitions=[0, 1, 2], config=conf)
    assert sorted(m.value() for m in got) == sorted(values)


def test_large_batches_through_socat_tls_read_by_confluent(
    pki: Pki, front: Front, topic_name: Callable[[str], str]
) -> None:
    """Batches of many KiB (referenced by the request, not copied into it) are sealed from the
    producer's own buffers: OpenSSL's server and confluent-kafka read every byte back."""
    tls = front(pki.server)
    conf = _tls(pki)
    topic = topic_name("tlsfront-large")
    _create_topic(tls.bootstrap, conf, topic, 3)
    values = [bytes([i % 251]) * (500 + (i * 37) % 2500) + str(i).encode() for i in range(3000)]
    assert _produce(tls.bootstrap, conf, topic, values) == [None] * len(values)
    got = consume_all(tls.bootstrap, topic, len(values), timeout=60, partitions=[0, 1, 2], config=conf)
    assert sorted(m.value() for m in got) == sorted(values)


def _kafkawire_error(bootstrap: str, conf: dict[str, Any]) -> KafkaError:
    """The first error kafkawire reports through error_cb when it cannot connect, and the record's report."""
    seen: list[KafkaError] = []
    reports: list[KafkaError | None] = []
    p = Producer({"bootstrap.servers": bootstrap, **conf, "error_cb": seen.append, "message.timeout.ms": 2000})
    try:
        p.produce("never-created", b"x", on_delivery=lambda err, _m: reports.append(err))
        deadline = time.monotonic() + 20
        while not (seen and reports) and time.monotonic() < deadline:
            p.poll(0.2)
    finally:
        p.close()
    assert seen, "no error reported"
    assert len(reports) == 1 and reports[0] is not None, reports
    return seen[0]


def _confluent_error(bootstrap: str, conf: dict[str, Any]) -> confluent_kafka.KafkaError:
    """The first error confluent-kafka reports with the same settings: the set-up is what we think."""
    seen: list[confluent_kafka.KafkaError] = []
    got = threading.Event()

    def error_cb(err: confluent_kafka.KafkaError) -> None:
        seen.append(err)
        got.set()

    p = confluent_kafka.Producer(judge_config(bootstrap, **conf, error_cb=error_cb))
    deadline = time.monotonic() + 20
    while not got.is_set() and time.monotonic() < deadline:
        p.poll(0.2)
    p.flush(0)
    assert seen, "confluent-kafka reported no error"
    return seen[0]


def test_certificate_for_another_host_refused_by_both(pki: Pki, front: Front, topic_name: Callable[[str], str]) -> None:
    tls = front(pki.other_host)
    ours = _kafkawire_error(tls.bootstrap, _tls(pki))
    theirs = _confluent_error(tls.bootstrap, _tls(pki))
    # librdkafka reports a failed verification as _SSL, or under load as _TRANSPORT (contributing/judges.md).
    assert theirs.code() == confluent_kafka.KafkaError._SSL or (
        theirs.code() == confluent_kafka.KafkaError._TRANSPORT and "certificate verify failed" in theirs.str()
    ), theirs
    assert ours.code() == KafkaError._SSL and "mismatch" in ours.str() and tls.bootstrap in ours.str(), ours
    # With host name verification off (the certificate still checked against the CA) it works.
    off = _tls(pki, **{"ssl.endpoint.identification.algorithm": "none"})
    topic = topic_name("tlsname")
    _create_topic(tls.bootstrap, off, topic, 1)
    assert _produce(tls.bootstrap, off, topic, [b"named"]) == [None]
    assert [m.value() for m in consume_all(tls.bootstrap, topic, 1, partitions=[0], config=off)] == [b"named"]


def test_mutual_tls_through_socat(pki: Pki, front: Front, topic_name: Callable[[str], str]) -> None:
    tls = front(pki.server, client_ca=pki.ca.cert)
    identity = _tls(
        pki,
        **{
            "ssl.certificate.location": str(pki.client.cert),
            "ssl.key.location": str(pki.client.encrypted_key),
            "ssl.key.password": KEY_PASSWORD,
        },
    )
    topic = topic_name("tlsmutual")
    _create_topic(tls.bootstrap, identity, topic, 1)
    assert _produce(tls.bootstrap, identity, topic, [b"a", b"b"]) == [None, None]
    got = consume_all(tls.bootstrap, topic, 2, partitions=[0], config=identity)
    assert sorted(m.value() for m in got) == [b"a", b"b"]
    # Without a client certificate socat ends the handshake: both clients fail to connect.
    anonymous = _tls(pki)
    theirs = _confluent_error(tls.bootstrap, anonymous)
    ours = _kafkawire_error(tls.bootstrap, anonymous)
    assert theirs.code() in (confluent_kafka.KafkaError._SSL, confluent_kafka.KafkaError._TRANSPORT)
    # Under TLS 1.3 the client's handshake can end before socat checks (and refuses) the missing
    # certificate; then the failure is a closed connection, told only as all brokers down.
    assert ours.code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), ours


@pytest.mark.parametrize(
    ("server", "java", "accepted"),
    [
        ("TLS1.3", {"ssl.protocol": "TLSv1.3"}, True),
        ("TLS1.3", {"ssl.protocol": "TLSv1.2"}, False),
        ("TLS1.2", {"ssl.enabled.protocols": "TLSv1.2,TLSv1.3"}, True),
        ("TLS1.2", {"ssl.enabled.protocols": "TLSv1.3"}, False),
    ],
    ids=["protocol-1.3-on-1.3", "protocol-1.2-on-1.3", "enabled-both-on-1.2", "enabled-1.3-on-1.2"],
)
def test_java_tls_version_options_are_what_openssl_sees(
    pki: Pki, front: Front, topic_name: Callable[[str], str], server: str, java: dict[str, str], accepted: bool
) -> None:
    """The Java client's ``ssl.protocol`` (the newest version offered) and ``ssl.enabled.protocols``
    (the versions allowed), judged by OpenSSL's server speaking one version only."""
    tls = front(pki.server, min_version=server, max_version=server)
    conf = _tls(pki, **java)
    if not accepted:
        ours = _kafkawire_error(tls.bootstrap, conf)
        assert ours.code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), ours
        return
    topic = topic_name("tls-java")
    _create_topic(tls.bootstrap, _tls(pki), topic, 1)
    assert _produce(tls.bootstrap, conf, topic, [b"a", b"b"]) == [None, None]
    got = consume_all(tls.bootstrap, topic, 2, timeout=30, partitions=[0], config=_tls(pki))
    assert sorted(m.value() for m in got) == [b"a", b"b"]
