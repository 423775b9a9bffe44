"""A security.protocol that does not match the listener, on Kafka 2.3, differential: the same
producer on confluent-kafka and on kafkawire, four mismatches. kafkawire names the cause (the
security.protocol to set) where confluent-kafka names it or says only "brokers are down", and
reports it once per broker rather than on every reconnect."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.kafka_broker import KafkaBroker

WATCH = 4.0  # seconds of reconnects watched per client


def reports(make: Callable[[dict[str, Any]], Any], conf: dict[str, Any]) -> list[tuple[str, str]]:
    """(code name, text) of every error_cb call while a producer with ``conf`` tries to send."""
    seen: list[tuple[str, str]] = []
    producer = make({**conf, "error_cb": lambda e: seen.append((e.name(), e.str()))})
    producer.produce("mismatch", b"x")
    until = time.monotonic() + WATCH
    while time.monotonic() < until:
        producer.poll(0.2)
    producer.purge()
    producer.flush(1)
    return seen


def _cases(broker: KafkaBroker) -> dict[str, tuple[str, dict[str, str]]]:
    assert broker.ca is not None
    return {
        "plaintext client, TLS listener": ("SSL", {}),
        "plaintext client, SASL listener": ("SASL_PLAINTEXT", {}),
        "TLS client, plaintext listener": (
            "PLAINTEXT",
            {"security.protocol": "SSL", "ssl.ca.location": str(broker.ca.cert)},
        ),
        "SASL client, plaintext listener": (
            "PLAINTEXT",
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "alice",
                "sasl.password": "alice-secret",
            },
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "plaintext client, TLS listener",
        "plaintext client, SASL listener",
        "TLS client, plaintext listener",
        "SASL client, plaintext listener",
    ],
)
def test_a_mismatched_security_protocol_is_named_once(kafka23: KafkaBroker, case: str) -> None:
    listener, security = _cases(kafka23)[case]
    conf = {"bootstrap.servers": kafka23.bootstrap(listener), **security}
    ours = reports(kafkawire.Producer, conf)
    theirs = reports(confluent_kafka.Producer, {**conf, "log_level": 0})
    named = [text for _code, text in ours if "security.protocol" in text]
    assert named, f"kafkawire did not name the cause: {ours}"
    assert "alice-secret" not in repr(ours)
    # Once per broker (plus "all brokers down"), never once per reconnect.
    assert len(ours) <= 3, ours
    # At least as specific as confluent-kafka: whatever it names, kafkawire names too.
    if any("PLAINTEXT broker listener" in text for _code, text in theirs):
        assert any("PLAINTEXT broker listener" in text for text in named)
    if any(code == "_AUTHENTICATION" for code, _text in theirs):
        assert any(code == "_AUTHENTICATION" for code, _text in ours)


@pytest.mark.parametrize("case", ["wrong password", "plaintext client, TLS listener", "untrusted certificate"])
def test_admin_calls_fail_with_the_cause_not_a_timeout(kafka23: KafkaBroker, case: str) -> None:
    """Every broker the admin client could use failed for a reason no retry mends: its calls fail
    with that reason (and its code), not _TIMED_OUT at the deadline. So do list_topics and the
    consumer's metadata look-ups."""
    from kafkawire.admin import AdminClient, NewTopic

    conf, code = {
        "wrong password": (
            {
                "bootstrap.servers": kafka23.bootstrap("SASL_PLAINTEXT"),
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "alice",
                "sasl.password": "not-hers",
            },
            kafkawire.KafkaError._AUTHENTICATION,
        ),
        "plaintext client, TLS listener": (
            {"bootstrap.servers": kafka23.bootstrap("SSL")},
            kafkawire.KafkaError._TRANSPORT,
        ),
        "untrusted certificate": (
            {
                "bootstrap.servers": kafka23.bootstrap("SSL"),
                "security.protocol": "SSL",
                "ssl.ca.location": "/etc/ssl/certs/ca-certificates.crt",
            },
            kafkawire.KafkaError._SSL,
        ),
    }[case]
    admin = AdminClient(conf)
    with pytest.raises(kafkawire.KafkaException) as created:
        admin.create_topics([NewTopic("never", 1, 1)], request_timeout=60)["never"].result(timeout=90)
    with pytest.raises(kafkawire.KafkaException) as listed:
        admin.list_topics(timeout=60)
    consumer = kafkawire.Consumer({**conf, "group.id": "mismatch"})
    try:
        with pytest.raises(kafkawire.KafkaException) as watermarks:
            consumer.get_watermark_offsets(kafkawire.TopicPartition("never", 0), timeout=60)
    finally:
        consumer.close()
    for failure in (created, listed, watermarks):
        error = failure.value.args[0]
        assert error.code() == code, error
        assert "not-hers" not in error.str()
