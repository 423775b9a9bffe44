"""docs/security.md's "Connecting to a secured cluster" examples run as written against a real Kafka 2.3
broker whose SSL listener requires client certificates: only the placeholders change (host names,
file paths, the token endpoint), secrets come through the environment as the examples read them,
and the system trust store is the test CA (SSL_CERT_FILE). confluent-kafka reads what they wrote.
The Spark example runs in tests/spark/test_secured.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.harness.certs import KEY_PASSWORD, STORE_PASSWORD, make_leaf
from tests.harness.doc_blocks import SECURED_BLOCKS
from tests.harness.doc_blocks import SECURITY as README
from tests.harness.judge import consume_all
from tests.harness.kafka_broker import PLAIN_USERS, KafkaBroker, KafkaUnavailable
from tests.harness.token_endpoint import TokenEndpoint
from tests.harness.topics import create_topic

pytestmark = [pytest.mark.broker, pytest.mark.slow]

SCRAM_PASSWORD = "payments-scram-pw"
OIDC_SECRET = "payments-oidc-secret"


def adapt(block: str, broker: KafkaBroker, files: dict[str, Path], token_url: str, topic: str) -> str:
    """The README's placeholders -> this test's broker, files and topic; every one must be there."""
    places = {
        "pkc-00000.europe-west1.gcp.confluent.cloud:9092": broker.bootstrap("SASL_SSL"),
        "kafka-1.internal:9093": broker.bootstrap("SASL_SSL"),
        "kafka-1.internal:9094": broker.bootstrap("SSL"),
        "https://login.example.com/oauth2/token": token_url,
        '"payments"': repr(topic),
        **{f"/etc/kafka/{name}": str(path) for name, path in files.items()},
    }
    for placeholder, value in places.items():
        block = block.replace(placeholder, value)
    assert ".internal" not in block and "example.com" not in block and "/etc/kafka" not in block, block
    return block


@pytest.fixture(scope="module")
def requiring_client_certificates() -> Iterator[KafkaBroker]:
    try:
        broker = KafkaBroker(client_auth="required").start()
    except KafkaUnavailable as exc:
        pytest.fail(f"Kafka 2.3 is not available: {exc}")
    try:
        broker.add_scram_user("payments-app", SCRAM_PASSWORD)
        yield broker
    finally:
        broker.stop()


def readme_files(broker: KafkaBroker) -> dict[str, Path]:
    """What /etc/kafka holds in the examples: the CA, the client's identity, a Java truststore."""
    assert broker.ca is not None and broker._dir is not None
    client = make_leaf(broker._dir, "payments-app", broker.ca, hosts=(), client=True)
    return {
        "ca.pem": broker.ca.cert,
        "payments-app.pem": client.cert,
        "payments-app.key": client.encrypted_key,
        "truststore.jks": broker._dir / "truststore.jks",
    }


def readme_environment(monkeypatch: pytest.MonkeyPatch, broker: KafkaBroker) -> None:
    assert broker.ca is not None
    for name, value in {
        "CLOUD_API_KEY": "alice",
        "CLOUD_API_SECRET": PLAIN_USERS["alice"],
        "KAFKA_PASSWORD": SCRAM_PASSWORD,
        "KAFKA_KEY_PASSWORD": KEY_PASSWORD,
        "OIDC_CLIENT_SECRET": OIDC_SECRET,
        "TRUSTSTORE_PASSWORD": STORE_PASSWORD,
        "SSL_CERT_FILE": str(broker.ca.cert),  # the "system" trust store of the Cloud example
    }.items():
        monkeypatch.setenv(name, value)


def test_secured_examples_run_as_written(
    requiring_client_certificates: KafkaBroker, topic_name: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broker = requiring_client_certificates
    assert len(SECURED_BLOCKS) == 3, "docs/security.md's secured section changed: update this test"
    clients, producing, _spark = SECURED_BLOCKS
    topic = topic_name("payments")
    create_topic(broker.bootstrap(), topic, 1)
    files = readme_files(broker)
    readme_environment(monkeypatch, broker)
    assert broker._dir is not None and broker.ca is not None
    idp_leaf = make_leaf(broker._dir, "idp", broker.ca)
    with TokenEndpoint(idp_leaf, "payments-app", OIDC_SECRET, principal="payments-app") as idp:
        namespace: dict[str, object] = {}
        for block in (clients, producing):
            exec(compile(adapt(block, broker, files, idp.url, topic), str(README), "exec"), namespace)
        assert idp.grants and all(g.authorized and g.form.get("scope") == "kafka" for g in idp.grants)
    got = consume_all(broker.bootstrap(), topic, 4, partitions=[0], settle=0.5)
    assert [m.value() for m in got] == [b"paid"] * 4
