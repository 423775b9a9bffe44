"""The OAuth JWT-bearer grant (``sasl.oauthbearer.grant.type=urn:ietf:params:oauth:grant-type:jwt-bearer``,
RFC 7523, KIP-1139): the client signs an assertion with its private key; the token endpoint
(tests/harness/token_endpoint.py) checks the signature with the public key and gives a token that
Kafka 2.3's OAUTHBEARER listener judges. confluent-kafka with the same settings against the same
endpoint is the reference for what the request and the assertion carry."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kafkawire import KafkaError, Producer
from tests.broker.security import test_oidc
from tests.harness.certs import Leaf
from tests.harness.judge import consume_all
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.token_endpoint import JWT_BEARER, TokenEndpoint
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PASSPHRASE = "assertion-key-PASSPHRASE"
endpoint_leaf = test_oidc.endpoint_leaf  # the token endpoint's certificate, as the client-credentials tests'

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def endpoint(endpoint_leaf: Leaf) -> Iterator[TokenEndpoint]:
    with TokenEndpoint(endpoint_leaf, "unused", "unused", principal="alice", assertion_key=KEY.public_key()) as idp:
        yield idp


def jwt_conf(broker: KafkaBroker, idp: TokenEndpoint, key_file: Path) -> dict[str, Any]:
    assert broker.ca is not None
    return {
        "bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"),
        "security.protocol": "sasl_plaintext",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.token.endpoint.url": idp.url,
        "sasl.oauthbearer.grant.type": JWT_BEARER,
        "sasl.oauthbearer.assertion.private.key.file": str(key_file),
        "sasl.oauthbearer.assertion.private.key.passphrase": PASSPHRASE,
        "sasl.oauthbearer.assertion.claim.iss": "kafkawire-app",
        "sasl.oauthbearer.assertion.claim.sub": "alice",
        "sasl.oauthbearer.assertion.claim.aud": idp.url,
        "sasl.oauthbearer.assertion.claim.jti.include": True,
        "sasl.oauthbearer.scope": "kafka.write",
        "https.ca.location": str(broker.ca.cert),
    }


def _shape(idp: TokenEndpoint) -> tuple[Any, ...]:
    """What the first grant request carried: its form's keys, the assertion's header, its claims
    (the times as offsets from iat), how it was signed."""
    grant = idp.grants[0]
    assert grant.assertion is not None
    header, claims, signature = grant.assertion
    times = (claims["exp"] - claims["iat"], claims["iat"] - claims["nbf"])
    named = {k: v for k, v in claims.items() if k not in ("iat", "exp", "nbf", "jti")}
    return (
        sorted(grant.form),
        grant.form["grant_type"],
        grant.form.get("scope"),
        header,
        times,
        named,
        "jti" in claims,
        signature,
    )


def _key_file(tmp_path: Path) -> Path:
    key_file = tmp_path / "assertion-key.pem"
    key_file.write_bytes(
        KEY.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(PASSPHRASE.encode()),
        )
    )
    return key_file


def test_jwt_bearer_tokens_as_confluent_kafka(
    kafka23: KafkaBroker, endpoint: TokenEndpoint, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    key_file = _key_file(tmp_path)
    topic = topic_name("jwtb")
    create_topic(kafka23.bootstrap(), topic, 1)
    conf = jwt_conf(kafka23, endpoint, key_file)
    reports: list[KafkaError | None] = []
    p = Producer(conf)
    try:
        for i in range(20):
            p.produce(topic, b"%d" % i, on_delivery=lambda err, _m: reports.append(err))
        p.flush(30)
    finally:
        p.close()
    assert reports == [None] * 20
    assert endpoint.grants and all(g.authorized for g in endpoint.grants)
    ours = _shape(endpoint)
    assert ours[1] == JWT_BEARER and ours[3] == {"alg": "RS256", "typ": "JWT"} and ours[4] == (300, 60)
    assert ours[5] == {"iss": "kafkawire-app", "sub": "alice", "aud": endpoint.url} and ours[6]

    # confluent-kafka, same settings, same endpoint: the same request, and it reads what we wrote.
    endpoint.grants.clear()
    judged = consume_all(kafka23.bootstrap(), topic, 20, config=conf)
    assert sorted(int(m.value()) for m in judged) == list(range(20))
    assert _shape(endpoint) == ours


def test_a_refused_assertion_is_an_authentication_error(
    kafka23: KafkaBroker, endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # not the key the endpoint knows
    key_file = tmp_path / "other.pem"
    key_file.write_bytes(
        other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    conf = {**jwt_conf(kafka23, endpoint, key_file), "sasl.oauthbearer.assertion.private.key.passphrase": None}
    errors: list[KafkaError] = []
    p = Producer({**conf, "error_cb": errors.append, "message.timeout.ms": 3000})
    try:
        p.produce("never-created", b"x")
        p.flush(15)
    finally:
        p.close()
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION and "HTTP 400" in errors[0].str()
    assert endpoint.grants and not any(g.authorized for g in endpoint.grants)
    assert {g.assertion[2] for g in endpoint.grants if g.assertion} == {"bad"}


def test_an_id_token_answer_is_taken_as_confluent_kafka_takes_it(
    kafka23: KafkaBroker, endpoint_leaf: Leaf, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    """Some identity providers (GCP) answer the JWT-bearer grant with an id_token only."""
    topic = topic_name("idtok")
    create_topic(kafka23.bootstrap(), topic, 1)
    with TokenEndpoint(
        endpoint_leaf, "unused", "unused", "alice", assertion_key=KEY.public_key(), token_field="id_token"
    ) as idp:
        conf = jwt_conf(kafka23, idp, _key_file(tmp_path))
        p = Producer(conf)
        try:
            reports: list[KafkaError | None] = []
            p.produce(topic, b"by-id-token", on_delivery=lambda err, _m: reports.append(err))
            p.flush(30)
        finally:
            p.close()
        assert reports == [None]
        assert [m.value() for m in consume_all(kafka23.bootstrap(), topic, 1, config=conf)] == [b"by-id-token"]
