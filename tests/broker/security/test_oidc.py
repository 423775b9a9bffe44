"""``sasl.oauthbearer.method=oidc``: tokens fetched with the client-credentials grant from an HTTPS
token endpoint (tests/harness/token_endpoint.py, the stand-in for an identity provider), presented to
Kafka 2.3's OAUTHBEARER listener, which judges them with its unsecured-JWT validator. confluent-kafka
with the same settings against the same endpoint and listener proves the set-up; it reads back what
kafkawire wrote."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

from kafkawire import KafkaError, Producer
from tests.harness.certs import Leaf, make_leaf
from tests.harness.judge import consume_all, judge_config
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.token_endpoint import TokenEndpoint
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

CLIENT_SECRET = "oidc-client-SECRET"


@pytest.fixture(scope="module")
def endpoint_leaf(kafka23: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Leaf:
    assert kafka23.ca is not None
    return make_leaf(tmp_path_factory.mktemp("idp"), "idp", kafka23.ca)


@pytest.fixture
def endpoint(endpoint_leaf: Leaf) -> Iterator[TokenEndpoint]:
    with TokenEndpoint(endpoint_leaf, "kafkawire-app", CLIENT_SECRET, principal="alice") as idp:
        yield idp


def oidc_conf(broker: KafkaBroker, idp: TokenEndpoint, listener: str = "SASL_SSL", **extra: Any) -> dict[str, Any]:
    assert broker.ca is not None
    conf = {
        "bootstrap.servers": broker.bootstrap(listener),
        "security.protocol": listener.lower(),
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.client.id": idp.client_id,
        "sasl.oauthbearer.client.secret": CLIENT_SECRET,
        "sasl.oauthbearer.token.endpoint.url": idp.url,
        "sasl.oauthbearer.scope": "kafka.write",
        "https.ca.location": str(broker.ca.cert),
    }
    if listener == "SASL_SSL":
        conf["ssl.ca.location"] = str(broker.ca.cert)
    return {**conf, **extra}


def test_produce_with_oidc_tokens_read_by_confluent(
    kafka23: KafkaBroker, endpoint: TokenEndpoint, topic_name: Callable[[str], str]
) -> None:
    topic = topic_name("oidc")
    create_topic(kafka23.bootstrap(), topic, 2)
    reports: list[KafkaError | None] = []
    p = Producer(oidc_conf(kafka23, endpoint))
    try:
        for i in range(50):
            p.produce(topic, b"%d" % i, on_delivery=lambda err, _m: reports.append(err))
        p.flush(30)
    finally:
        p.close()
    assert reports == [None] * 50
    assert endpoint.grants and all(g.authorized for g in endpoint.grants)
    assert endpoint.grants[0].form == {"grant_type": "client_credentials", "scope": "kafka.write"}
    got = consume_all(kafka23.bootstrap(), topic, 50, partitions=[0, 1])
    assert sorted(int(m.value()) for m in got) == list(range(50))

    # confluent-kafka with the same settings reads it through the same listener and token endpoint.
    judged = consume_all(
        kafka23.bootstrap(),
        topic,
        50,
        partitions=[0, 1],
        config={k: v for k, v in oidc_conf(kafka23, endpoint).items() if k != "bootstrap.servers"}
        | {"bootstrap.servers": kafka23.bootstrap("SASL_SSL")},
    )
    assert len(judged) == 50


def _errors(conf: dict[str, Any]) -> tuple[list[KafkaError], list[KafkaError | None]]:
    errors: list[KafkaError] = []
    reports: list[KafkaError | None] = []
    got = threading.Event()
    p = Producer({**conf, "error_cb": lambda e: (errors.append(e), got.set()), "message.timeout.ms": 3000})
    try:
        p.produce("never-created", b"x", on_delivery=lambda err, _m: reports.append(err))
        p.flush(20)
    finally:
        p.close()
    return errors, reports


def test_a_refused_client_secret_is_an_authentication_error_without_the_secret(
    kafka23: KafkaBroker, endpoint: TokenEndpoint
) -> None:
    wrong = "wrong-" + CLIENT_SECRET
    errors, reports = _errors(
        oidc_conf(kafka23, endpoint, "SASL_PLAINTEXT", **{"sasl.oauthbearer.client.secret": wrong})
    )
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "HTTP 401" in errors[0].str() and "invalid_client" in errors[0].str() and endpoint.url in errors[0].str()
    [report] = reports
    assert report is not None and report.code() == KafkaError._MSG_TIMED_OUT and "HTTP 401" in report.str()
    for text in [*(e.str() for e in errors), report.str()]:
        assert wrong not in text and CLIENT_SECRET not in text
    # Not a tight loop: a few grant requests in those seconds, each after a connection's backoff.
    assert 1 <= len(endpoint.grants) <= 40 and not any(g.authorized for g in endpoint.grants)
    # confluent-kafka refuses the same settings at the same endpoint too.
    seen: list[confluent_kafka.KafkaError] = []
    conf = oidc_conf(kafka23, endpoint, "SASL_PLAINTEXT", **{"sasl.oauthbearer.client.secret": wrong})
    theirs = confluent_kafka.Producer(judge_config(conf.pop("bootstrap.servers"), **conf, error_cb=seen.append))
    deadline = time.monotonic() + 60
    while not seen and time.monotonic() < deadline:
        theirs.poll(0.2)
    theirs.flush(0)
    assert seen, "confluent-kafka reported no error"


def test_the_endpoint_certificate_is_verified(kafka23: KafkaBroker, endpoint: TokenEndpoint, tmp_path: Path) -> None:
    from tests.harness.certs import make_ca

    other = make_ca(tmp_path, "not-the-idps-ca")
    errors, _reports = _errors(oidc_conf(kafka23, endpoint, "SASL_PLAINTEXT", **{"https.ca.location": str(other.cert)}))
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION
    assert "certificate verify failed" in errors[0].str(), errors[0]
    assert not endpoint.grants
