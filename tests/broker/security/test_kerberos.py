"""sasl.mechanism=GSSAPI (Kerberos), judged by a real MIT Kerberos KDC (a realm made for this module,
tests/harness/kdc.py) and a real Kafka 2.3 broker whose SASL listeners take GSSAPI with Java's
Krb5LoginModule. kafka-python, through the same ``gssapi`` package, is the reference that the
setup itself works; confluent-kafka (its wheel has no GSSAPI) judges the records and offsets over
the broker's PLAINTEXT listener.

Failures are named as they happen (an _AUTHENTICATION error naming the cause, never a timeout) and
no secret (a password in a kinit command) appears in any error, log line, repr or statistics."""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire import KafkaError, KafkaException, Producer
from kafkawire.admin import AdminClient, NewTopic
from tests.broker.security.test_tls_and_sasl_listeners import _deliver
from tests.harness.judge import consume_all, judge_config, produce_with_confluent, unique_name
from tests.harness.kafka_broker import KafkaBroker, KafkaUnavailable
from tests.harness.kdc import Kdc, KdcUnavailable
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

pytest.importorskip(
    "gssapi", reason="kafkawire[gssapi] is not installed: it builds against libkrb5-dev (make test installs both)"
)

REAUTH_MS = 4000  # the SASL_SSL listener's GSSAPI sessions end after this (KIP-368)
CAROL_PASSWORD = "carol-Kerberos-SECRET"  # a password principal, logged in through a kinit command


@dataclass
class Realm:
    kdc: Kdc
    client_keytab: Path  # kafkaclient (librdkafka's default sasl.kerberos.principal)
    alice_keytab: Path
    alice: str


@pytest.fixture(scope="module")
def realm() -> Iterator[Realm]:
    try:
        kdc = Kdc().start()
    except KdcUnavailable as exc:
        pytest.skip(f"no MIT Kerberos KDC: {exc}")
    saved = {key: os.environ.get(key) for key in (*kdc.env, "KRB5CCNAME")}
    os.environ.update(kdc.env)
    # A client without credentials of its own finds none: the machine's ticket cache is not used.
    os.environ["KRB5CCNAME"] = f"FILE:{kdc.dir / 'no-such-cache'}"
    try:
        client_keytab, alice_keytab = kdc.dir / "kafkaclient.keytab", kdc.dir / "alice.keytab"
        kdc.add_principal("kafkaclient", client_keytab)
        alice = kdc.add_principal("alice", alice_keytab)
        kdc.run_kadmin(f"addprinc -pw {CAROL_PASSWORD} carol")
        yield Realm(kdc, client_keytab, alice_keytab, alice)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        kdc.stop()


@pytest.fixture(scope="module")
def broker(realm: Realm) -> Iterator[KafkaBroker]:
    extra = {"listener.name.sasl_ssl.gssapi.connections.max.reauth.ms": str(REAUTH_MS)}
    try:
        kafka = KafkaBroker(kerberos=realm.kdc, extra=extra).start()
    except KafkaUnavailable as exc:
        pytest.fail(f"Kafka 2.3 is not available: {exc}")
    try:
        yield kafka
    finally:
        kafka.stop()


def _conf(broker: KafkaBroker, realm: Realm, listener: str = "SASL_PLAINTEXT", **extra: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "bootstrap.servers": broker.bootstrap(listener),
        "security.protocol": listener,
        "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.keytab": str(realm.client_keytab),
    }
    if listener == "SASL_SSL":
        assert broker.ca is not None
        conf["ssl.ca.location"] = str(broker.ca.cert)
    return {**conf, **extra}


def _authenticated(broker: KafkaBroker, principal: str) -> int:
    """How many times the broker logged a successful authentication of ``principal``."""
    return broker.log_tail(limit=10**8).count(f"authenticationID={principal};")


def _first_error(conf: dict[str, Any], budget: float = 20.0) -> KafkaError:
    """The first error a producer reports through error_cb. Its records would time out after 60 s:
    an error named within ``budget`` is the failure itself, never a timeout."""
    seen: list[KafkaError] = []
    got = threading.Event()

    def error_cb(err: KafkaError) -> None:
        seen.append(err)
        got.set()

    p = Producer({**conf, "error_cb": error_cb, "message.timeout.ms": 60_000})
    try:
        p.produce("never-created", b"x")
        deadline = time.monotonic() + budget
        while not got.is_set() and time.monotonic() < deadline:
            p.poll(0.1)
        p.purge()
        p.flush(5)
    finally:
        p.close()
    assert seen, f"no error reported within {budget} s"
    return seen[0]


def test_reference_kafka_python_authenticates_with_the_same_realm(
    realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's setup works: kafka-python's GSSAPI (the gssapi package on alice's kinit ticket)."""
    from kafka import KafkaProducer

    topic = topic_name("krb-ref")
    create_topic(broker.bootstrap(), topic, 1)
    cache = tmp_path / "alice.cc"
    realm.kdc.kinit(realm.alice, realm.alice_keytab, cache)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")
    before = _authenticated(broker, realm.alice)
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap("SASL_PLAINTEXT"),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="GSSAPI",
        sasl_kerberos_service_name="kafka",
    )
    try:
        for i in range(5):
            producer.send(topic, b"ref-%d" % i)
        producer.flush(30)
    finally:
        producer.close(5)
    got = consume_all(broker.bootstrap(), topic, 5, timeout=30, partitions=[0])
    assert [m.value() for m in got] == [b"ref-%d" % i for i in range(5)]
    assert _authenticated(broker, realm.alice) > before


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_produce_with_a_keytab_read_by_confluent(
    realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str], listener: str
) -> None:
    topic = topic_name(f"krb-{listener}")
    create_topic(broker.bootstrap(), topic, 2)
    before = _authenticated(broker, f"kafkaclient@{realm.kdc.realm}")
    values = [b"kerberos-%d" % i for i in range(50)]
    assert _deliver(_conf(broker, realm, listener), topic, values) == [None] * len(values)
    got = consume_all(broker.bootstrap(), topic, len(values), timeout=30, partitions=[0, 1])
    assert sorted(m.value() for m in got) == sorted(values)
    # librdkafka's default principal, from the keytab: the broker names who authenticated.
    assert _authenticated(broker, f"kafkaclient@{realm.kdc.realm}") > before


def test_group_consumer_commits_what_confluent_sees(
    realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    topic, group = topic_name("krb-group"), unique_name("krb-group")
    create_topic(broker.bootstrap(), topic, 2)
    sent = [b"v%d" % i for i in range(20)]
    produce_with_confluent(broker.bootstrap(), topic, sent)
    consumer = kafkawire.Consumer(
        {
            **_conf(broker, realm),
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )
    got: list[kafkawire.Message] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while len(got) < len(sent) and time.monotonic() < deadline:
            for m in consumer.consume(20, 0.25):
                error = m.error()
                assert error is None or error.code() == KafkaError._PARTITION_EOF, error
                if error is None:
                    got.append(m)
        assert sorted(m.value() or b"" for m in got) == sorted(sent)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    ends: dict[int, int] = {}
    for m in got:
        partition, offset = m.partition(), m.offset()
        assert partition is not None and offset is not None
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    judge = confluent_kafka.Consumer(judge_config(broker.bootstrap(), **{"group.id": group}))
    try:
        committed = judge.committed([confluent_kafka.TopicPartition(topic, p) for p in (0, 1)], timeout=20)
    finally:
        judge.close()
    assert {tp.partition: tp.offset for tp in committed if tp.partition in ends} == ends


def test_admin_creates_lists_and_deletes(realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    topic = topic_name("krb-admin")
    admin = AdminClient(_conf(broker, realm, "SASL_SSL"))
    try:
        admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
        deadline = time.monotonic() + 20  # (Kafka 2.3 answers CreateTopics before the leaders are elected)
        while (listed := admin.list_topics(topic, timeout=20).topics[topic]).error and time.monotonic() < deadline:
            time.sleep(0.1)
        assert listed.error is None and len(listed.partitions) == 3
        admin.delete_topics([topic])[topic].result(30)
    finally:
        admin.close()


def test_transactions_commit_and_abort_judged_read_committed(
    realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("krb-txn")
    create_topic(broker.bootstrap(), topic, 1)
    p = Producer({**_conf(broker, realm), "transactional.id": unique_name("krb-txn")})
    try:
        p.init_transactions(30)
        for outcome in ("commit", "abort", "commit"):
            p.begin_transaction()
            p.produce(topic, outcome.encode())
            if outcome == "commit":
                p.commit_transaction(30)
            else:
                p.abort_transaction(30)
    finally:
        p.close()
    got = consume_all(broker.bootstrap(), topic, 2, timeout=30, partitions=[0], isolation_level="read_committed")
    assert [m.value() for m in got] == [b"commit", b"commit"]


@pytest.mark.parametrize("form", ["KRB5CCNAME", "jaas-ticketCache", "jaas-keyTab"])
def test_ticket_cache_and_java_login_module_credentials(
    realm: Realm,
    broker: KafkaBroker,
    topic_name: Callable[[str], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    form: str,
) -> None:
    """alice's own ticket (kinit before, KRB5CCNAME), or Java's Krb5LoginModule in sasl.jaas.config
    (what Spark's kafka.sasl.jaas.config carries): the broker authenticates alice."""
    topic = topic_name("krb-cache")
    create_topic(broker.bootstrap(), topic, 1)
    cache = tmp_path / "alice.cc"
    conf = {k: v for k, v in _conf(broker, realm).items() if k != "sasl.kerberos.keytab"}
    module = "com.sun.security.auth.module.Krb5LoginModule required"
    if form == "KRB5CCNAME":
        realm.kdc.kinit(realm.alice, realm.alice_keytab, cache)
        monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")
    elif form == "jaas-ticketCache":
        realm.kdc.kinit(realm.alice, realm.alice_keytab, cache)
        conf["sasl.jaas.config"] = f'{module} useTicketCache=true ticketCache="FILE:{cache}";'
    else:
        conf["sasl.jaas.config"] = (
            f'{module} useKeyTab=true storeKey=true keyTab="{realm.alice_keytab}" principal="{realm.alice}";'
        )
    before = _authenticated(broker, realm.alice)
    assert _deliver(conf, topic, [b"from-alice"]) == [None]
    assert _authenticated(broker, realm.alice) > before


def test_kinit_command_run_as_librdkafka_runs_it_and_rerun(
    realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sasl.kerberos.kinit.cmd with its placeholders fills the default cache when the client is
    made, and again every sasl.kerberos.min.time.before.relogin ms."""
    topic = topic_name("krb-kinit")
    create_topic(broker.bootstrap(), topic, 1)
    cache = tmp_path / "kinit.cc"
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")
    conf = {
        **_conf(broker, realm, **{"sasl.kerberos.keytab": str(realm.alice_keytab)}),
        "sasl.kerberos.principal": realm.alice,
        "sasl.kerberos.kinit.cmd": 'kinit -k -t "%{sasl.kerberos.keytab}" %{sasl.kerberos.principal}',
        "sasl.kerberos.min.time.before.relogin": 500,
    }
    p = Producer(conf)
    try:
        assert cache.exists()  # the first run, while the client was made
        cache.unlink()
        deadline = time.monotonic() + 60
        while not cache.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cache.exists()  # run again
        reports: list[KafkaError | None] = []
        p.produce(topic, b"after-kinit", on_delivery=lambda err, _m: reports.append(err))
        assert p.flush(30) == 0 and reports == [None]
    finally:
        p.close()


def test_reauthentication_over_kerberos_on_the_same_connections(
    realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    """KIP-368: the SASL_SSL listener ends GSSAPI sessions after 4 s; producing until the client
    re-authenticated twice on its connections, it loses no record."""
    topic = topic_name("krb-reauth")
    create_topic(broker.bootstrap(), topic, 1)
    reports: list[KafkaError | None] = []
    errors: list[KafkaError] = []
    p = Producer({**_conf(broker, realm, "SASL_SSL"), "error_cb": errors.append, "debug": "security", "linger.ms": 2})
    sent = 0

    def again() -> list[logging.LogRecord]:
        return [r for r in list(caplog.records) if "Re-authenticating with SASL mechanism GSSAPI" in r.getMessage()]

    try:
        with caplog.at_level(logging.DEBUG, logger="kafkawire"):
            # (about 8 s; the bound is on a hang)
            stop = time.monotonic() + 120
            while len(again()) < 2:
                assert time.monotonic() < stop, [r.getMessage() for r in again()]
                p.produce(topic, str(sent).encode(), on_delivery=lambda err, _m: reports.append(err))
                sent += 1
                p.poll(0.01)
            assert p.flush(30) == 0
    finally:
        p.close()
    assert not errors, errors[:3]
    assert reports == [None] * sent
    got = consume_all(broker.bootstrap(), topic, sent, timeout=60, partitions=[0])
    assert [int(m.value()) for m in got] == list(range(sent))


# --- failures: named at once ---------------------------------------------------------------------


def test_no_credentials_fail_construction_naming_what_to_set(realm: Realm, broker: KafkaBroker) -> None:
    conf = {k: v for k, v in _conf(broker, realm).items() if k != "sasl.kerberos.keytab"}
    with pytest.raises(KafkaException) as exc:
        Producer(conf)
    err = exc.value.args[0]
    assert err.code() == KafkaError._AUTHENTICATION
    assert "no Kerberos credentials" in err.str() and "sasl.kerberos.keytab" in err.str() and "kinit" in err.str()


def test_a_principal_the_keytab_lacks_fails_construction_naming_both(realm: Realm, broker: KafkaBroker) -> None:
    with pytest.raises(KafkaException) as exc:
        Producer(_conf(broker, realm, **{"sasl.kerberos.principal": "bob"}))
    err = exc.value.args[0]
    assert err.code() == KafkaError._INVALID_ARG
    assert f"holds no key for sasl.kerberos.principal bob@{realm.kdc.realm}" in err.str()
    assert f"kafkaclient@{realm.kdc.realm}" in err.str()


def test_failing_kinit_command_fails_construction_with_its_status(realm: Realm, broker: KafkaBroker) -> None:
    conf = _conf(broker, realm, **{"sasl.kerberos.kinit.cmd": "kinit -k -t /nonexistent.keytab nobody"})
    with pytest.raises(KafkaException) as exc:
        Producer(conf)
    text = exc.value.args[0].str()
    assert "sasl.kerberos.kinit.cmd failed with exit status 1" in text and "not found in Kerberos database" in text


def _skewed_krb5_conf(realm: Realm, tmp_path: Path, port: int) -> Path:
    path = tmp_path / "krb5.conf"
    realm.kdc.write_krb5_conf(path, port, kdc_timesync="0")
    return path


@pytest.mark.parametrize("failure", ["unknown principal", "KDC unreachable", "clock skew", "wrong service name"])
def test_kerberos_failures_are_named_within_seconds(
    realm: Realm, broker: KafkaBroker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    from kafkawire.local_broker import _free_loopback_port

    conf = _conf(broker, realm)
    expected = {
        "unknown principal": "the KDC does not know the client principal",
        "KDC unreachable": "the KDC did not answer",
        "clock skew": "differ by more than the allowed skew",
        "wrong service name": "the KDC does not know the broker's service principal",
    }[failure]
    if failure == "unknown principal":  # a keytab whose principal the KDC no longer has
        keytab = tmp_path / "gone.keytab"
        realm.kdc.add_principal("gone", keytab)
        realm.kdc.run_kadmin("delprinc -force gone")
        conf.update({"sasl.kerberos.keytab": str(keytab), "sasl.kerberos.principal": "gone"})
    elif failure == "KDC unreachable":
        monkeypatch.setenv("KRB5_CONFIG", str(_skewed_krb5_conf(realm, tmp_path, _free_loopback_port())))
    elif failure == "clock skew":
        try:
            port = realm.kdc.start_skewed(3600)
        except KdcUnavailable as exc:
            pytest.skip(str(exc))
        monkeypatch.setenv("KRB5_CONFIG", str(_skewed_krb5_conf(realm, tmp_path, port)))
    else:
        conf["sasl.kerberos.service.name"] = "kafka-elsewhere"
    err = _first_error(conf)
    assert err.code() == KafkaError._AUTHENTICATION, err
    assert expected in err.str(), err


def test_the_service_is_named_by_the_host_as_given_never_the_peer_address(realm: Realm, broker: KafkaBroker) -> None:
    """Bootstrapping with ``localhost``, the client asks for kafka/localhost, which this realm lacks:
    naming the service by the peer's address (127.0.0.1) would have found the broker's principal."""
    port = broker.ports["SASL_PLAINTEXT"]
    conf = _conf(broker, realm, **{"bootstrap.servers": f"localhost:{port}", "broker.address.family": "v4"})
    err = _first_error(conf)
    assert err.code() == KafkaError._AUTHENTICATION and f"kafka/localhost@{realm.kdc.realm}" in err.str(), err


def test_spark_options_reach_the_client(realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str]) -> None:
    """The Spark data source's ``kafka.*`` options (strings, Java's JAAS line) make the writer's
    producer, which authenticates as the login module's principal."""
    from kafkawire.spark.options import producer_params

    topic = topic_name("krb-spark")
    create_topic(broker.bootstrap(), topic, 1)
    options = {
        "kafka.bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"),
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.kerberos.service.name": "kafka",
        "kafka.sasl.kerberos.min.time.before.relogin": "60000",
        "kafka.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
        f'storeKey=true keyTab="{realm.alice_keytab}" principal="{realm.alice}";',
        "topic": topic,
    }
    before = _authenticated(broker, realm.alice)
    assert _deliver(producer_params(options), topic, [b"from-spark-options"]) == [None]
    assert _authenticated(broker, realm.alice) > before


def test_clients_made_one_after_another_keep_their_own_principals(
    realm: Realm, broker: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    """Each keytab login keeps its tickets in a cache of its own: a login made after another was
    dropped (its memory, and so its id(), reused at once) never finds the earlier one's principal
    there (CI met "Principal in credential cache does not match desired name"). Then the same
    through producers."""
    from kafkawire.base.config import CONNECTION_OPTIONS, parse_config
    from kafkawire.security.kerberos import KerberosLogin

    turns = [("kafkaclient", realm.client_keytab), (realm.alice, realm.alice_keytab)] * 8
    for principal, keytab in turns:
        conf = _conf(broker, realm, **{"sasl.kerberos.keytab": str(keytab), "sasl.kerberos.principal": principal})
        login = KerberosLogin(parse_config(conf, CONNECTION_OPTIONS))
        assert login.new_client("127.0.0.1"), principal
        del login
    topic = topic_name("krb-turns")
    create_topic(broker.bootstrap(), topic, 1)
    for principal, keytab in turns:
        conf = _conf(broker, realm, **{"sasl.kerberos.keytab": str(keytab), "sasl.kerberos.principal": principal})
        assert _deliver(conf, topic, [principal.encode()]) == [None], principal
        gc.collect()


# --- secrets -------------------------------------------------------------------------------------


def test_no_secret_in_errors_logs_reprs_or_statistics(
    realm: Realm,
    broker: KafkaBroker,
    topic_name: Callable[[str], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """carol logs in with her password through a kinit command (the only secret a Kerberos client
    configuration holds as text); a wrong one fails construction. debug=security, DEBUG logging,
    statistics on: the password appears nowhere."""
    topic = topic_name("krb-secret")
    create_topic(broker.bootstrap(), topic, 1)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'carol.cc'}")
    texts: list[str] = []
    wrong = "wrong-Kerberos-SECRET"

    def conf(password: str) -> dict[str, Any]:
        return {
            **{k: v for k, v in _conf(broker, realm).items() if k != "sasl.kerberos.keytab"},
            "sasl.kerberos.principal": "carol",
            "sasl.kerberos.kinit.cmd": f"echo '{password}' | kinit carol",
            "debug": "security,broker",
            "statistics.interval.ms": 100,
            "error_cb": lambda e: texts.append(str(e)),
            "stats_cb": texts.append,
        }

    with caplog.at_level(logging.DEBUG):
        with pytest.raises(KafkaException) as exc:
            Producer(conf(wrong))
        texts.append(str(exc.value))
        assert "sasl.kerberos.kinit.cmd failed" in str(exc.value)
        p = Producer(conf(CAROL_PASSWORD))
        texts.append(repr(p))
        p.produce(topic, b"v", on_delivery=lambda err, msg: texts.append(f"{err} {msg}"))
        assert p.flush(30) == 0
        p.poll(0.3)
        p.close()
        bad = Producer({**conf(CAROL_PASSWORD), "sasl.kerberos.service.name": "kafka-elsewhere"})
        bad.produce(topic, b"v")
        bad.poll(3)
        bad.purge()
        bad.close()
    texts.extend(r.getMessage() for r in caplog.records)
    assert any("GSSAPI" in t for t in texts) and len(texts) > 10
    for secret in (CAROL_PASSWORD, wrong):
        leaked = [t for t in texts if secret in t]
        assert not leaked, leaked[:3]


def test_readme_kerberos_example_runs_as_written(
    realm: Realm, broker: KafkaBroker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/security.md's Kerberos block: only host names, paths and the principal change (alice's keytab
    for the service, alice's kinit ticket for the person)."""
    from tests.harness.doc_blocks import KERBEROS_BLOCKS

    assert len(KERBEROS_BLOCKS) == 1
    assert broker.ca is not None
    topic = unique_name("payments")
    create_topic(broker.bootstrap(), topic, 1)
    cache = tmp_path / "alice.cc"
    realm.kdc.kinit(realm.alice, realm.alice_keytab, cache)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")
    places = {
        "kafka-1.corp.example:9093": broker.bootstrap("SASL_SSL"),
        "kafka-1.corp.example:9092": broker.bootstrap("SASL_PLAINTEXT"),
        "/etc/kafka/ca.pem": str(broker.ca.cert),
        "/etc/security/keytabs/payments.keytab": str(realm.alice_keytab),
        "payments@CORP.EXAMPLE": realm.alice,
        '"payments"': repr(topic),
        '"audit"': repr(unique_name("audit")),
    }
    block = KERBEROS_BLOCKS[0]
    for placeholder, value in places.items():
        assert placeholder in block, placeholder
        block = block.replace(placeholder, value)
    exec(compile(block, "docs/security.md", "exec"), {})
