"""KIP-368 re-authentication, judged by a real Kafka 2.3 broker that ends SASL sessions after 3 s
(``connections.max.reauth.ms=3000``): the broker closes a connection whose session ran out at its
next request, so a producer that does not re-authenticate in time loses its connection (and its
in-flight requests) every 3 s.

The judges: the kernel's socket table (every connection to a SASL listener open at the start is
still open at the end, and no other was opened: /proc/net/tcp), and confluent-kafka reading every
record back in the order it was produced."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkawire import KafkaError, Producer
from tests.harness.certs import make_leaf
from tests.harness.judge import consume_all
from tests.harness.kafka_broker import KafkaBroker, KafkaUnavailable
from tests.harness.token_endpoint import TokenEndpoint
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

LIFETIME_MS = 3000
PRODUCE_BOUND = 120.0  # producing goes on until the re-authentications came: a bound on a hang
SCRAM_PASSWORD = "dave-pw"

CLIENTS: dict[str, dict[str, Any]] = {
    "PLAIN": {
        "security.protocol": "sasl_ssl",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
    },
    "SCRAM-SHA-256": {
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "dave",
        "sasl.password": SCRAM_PASSWORD,
    },
    "OAUTHBEARER": {
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=alice",
    },
}


@pytest.fixture(scope="module")
def short_sessions() -> Iterator[KafkaBroker]:
    try:
        broker = KafkaBroker(extra={"connections.max.reauth.ms": str(LIFETIME_MS)}).start()
    except KafkaUnavailable as exc:
        pytest.fail(f"Kafka 2.3 is not available: {exc}")
    try:
        broker.add_scram_user("dave", SCRAM_PASSWORD)
        yield broker
    finally:
        broker.stop()


def _client_ports(listener_ports: set[int]) -> set[int]:
    """Local ports of established TCP connections to one of ``listener_ports`` on 127.0.0.1."""
    found: set[int] = set()
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            local, remote, state = fields[1], fields[2], fields[3]
            if state == "01" and int(remote.split(":")[1], 16) in listener_ports:
                found.add(int(local.split(":")[1], 16))
    return found


def _conf(broker: KafkaBroker, mechanism: str) -> dict[str, Any]:
    conf = dict(CLIENTS[mechanism])
    listener = conf["security.protocol"].upper()
    conf["bootstrap.servers"] = broker.bootstrap(listener)
    if listener == "SASL_SSL":
        assert broker.ca is not None
        conf["ssl.ca.location"] = str(broker.ca.cert)
    return conf


def test_producers_reauthenticate_on_the_same_connections(
    short_sessions: KafkaBroker, topic_name: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    topics = {mechanism: topic_name(f"reauth-{mechanism.lower()}") for mechanism in CLIENTS}
    for topic in topics.values():
        create_topic(short_sessions.bootstrap(), topic, 3)
    errors: list[KafkaError] = []
    reports: dict[str, list[KafkaError | None]] = {m: [] for m in CLIENTS}
    producers = {
        m: Producer(
            # debug=security: each re-authentication is logged ("Re-authenticating with SASL mechanism ...")
            {
                **_conf(short_sessions, m),
                "error_cb": errors.append,
                "linger.ms": 2,
                "message.timeout.ms": 60_000,
                "debug": "security",
            }
        )
        for m in CLIENTS
    }
    sasl_ports = {short_sessions.ports["SASL_PLAINTEXT"], short_sessions.ports["SASL_SSL"]}
    sent: dict[str, int] = dict.fromkeys(CLIENTS, 0)

    def reauthentications() -> list[logging.LogRecord]:
        return [r for r in list(caplog.records) if "Re-authenticating with SASL mechanism" in r.getMessage()]

    try:
        with caplog.at_level(logging.DEBUG, logger="kafkawire"):
            for m, p in producers.items():  # connect every producer before watching the sockets
                p.produce(topics[m], b"-1", key=b"warm-up", on_delivery=lambda err, _msg, m=m: reports[m].append(err))
                p.flush(30)
            first = _client_ports(sasl_ports)
            seen = set(first)
            stop = time.monotonic() + PRODUCE_BOUND
            while len(reauthentications()) < len(CLIENTS) * 2:  # about 6 s at 3 s sessions
                assert time.monotonic() < stop, [r.getMessage() for r in reauthentications()]
                for m, p in producers.items():
                    p.produce(
                        topics[m],
                        str(sent[m]).encode(),
                        key=str(sent[m] % 7).encode(),
                        on_delivery=lambda err, _msg, m=m: reports[m].append(err),
                    )
                    sent[m] += 1
                    p.poll(0)
                seen |= _client_ports(sasl_ports)
                time.sleep(0.005)
            for p in producers.values():
                assert p.flush(60) == 0
            last = _client_ports(sasl_ports)
    finally:
        for p in producers.values():
            p.close()
    assert not errors, errors[:3]
    for m in CLIENTS:
        assert reports[m] == [None] * (sent[m] + 1), (m, [e for e in reports[m] if e is not None][:3])
    assert first and seen == first and first <= last, (first, seen, last)
    # confluent-kafka reads every record, each key's records in the order they were produced.
    for m, topic in topics.items():
        got = consume_all(short_sessions.bootstrap(), topic, sent[m] + 1, timeout=60, partitions=[0, 1, 2])
        assert len(got) == sent[m] + 1, (m, len(got))
        by_key: dict[bytes, list[int]] = {}
        for msg in got:
            by_key.setdefault(msg.key(), []).append(int(msg.value()))
        assert sorted(v for vs in by_key.values() for v in vs) == list(range(-1, sent[m]))
        assert all(vs == sorted(vs) for vs in by_key.values()), m


def test_oidc_tokens_refreshed_before_they_expire(
    short_sessions: KafkaBroker, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    """Tokens from the token endpoint live 4 s, sessions at most 3 s: producing until three tokens
    were granted, the client fetches fresh tokens before the old ones expire and re-authenticates
    with them on the same connection (Kafka refuses an expired token, and caps a session at its
    token's expiry)."""
    from tests.broker.security.test_oidc import CLIENT_SECRET, oidc_conf

    assert short_sessions.ca is not None
    topic = topic_name("reauth-oidc")
    create_topic(short_sessions.bootstrap(), topic, 1)
    leaf = make_leaf(tmp_path, "idp", short_sessions.ca)
    errors: list[KafkaError] = []
    reports: list[KafkaError | None] = []
    sasl_ports = {short_sessions.ports["SASL_PLAINTEXT"]}
    with TokenEndpoint(leaf, "kafkawire-app", CLIENT_SECRET, principal="alice", lifetime=4.0) as idp:
        p = Producer({**oidc_conf(short_sessions, idp, "SASL_PLAINTEXT"), "error_cb": errors.append, "linger.ms": 2})
        try:
            p.produce(topic, b"-1", on_delivery=lambda err, _m: reports.append(err))
            p.flush(30)
            first = _client_ports(sasl_ports)
            sent = 0
            stop = time.monotonic() + PRODUCE_BOUND
            while len([g for g in list(idp.grants) if g.authorized]) < 3:  # about 7 s on 4 s tokens
                assert time.monotonic() < stop, idp.grants
                p.produce(topic, str(sent).encode(), on_delivery=lambda err, _m: reports.append(err))
                sent += 1
                p.poll(0.005)
            assert p.flush(60) == 0
            last = _client_ports(sasl_ports)
        finally:
            p.close()
    assert not errors, errors[:3]
    assert reports == [None] * (sent + 1)
    assert first and first <= last, (first, last)
    got = consume_all(short_sessions.bootstrap(), topic, sent + 1, timeout=60, partitions=[0])
    assert [int(m.value()) for m in got] == list(range(-1, sent))
