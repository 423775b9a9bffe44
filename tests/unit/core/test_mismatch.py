"""Naming a security.protocol mismatch from what a connection saw (core/mismatch.py), and reporting
it once per address (core/cluster_health.py)."""

from __future__ import annotations

from kafkawire.core.cluster_health import ClusterHealth
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.mismatch import (
    ANSWERED_IN_TLS,
    CLOSED_AFTER_API_VERSIONS,
    CLOSED_DURING_TLS_HANDSHAKE,
    LISTENER_WITHOUT_SASL,
    close_mismatch,
    first_answer_mismatch,
    lasting,
    looks_like_tls,
)


def test_a_tls_record_is_told_from_a_kafka_size_prefix() -> None:
    assert looks_like_tls(b"\x15\x03\x03\x00\x02")  # an alert, TLS 1.2 (Kafka's SSL listener's answer)
    assert looks_like_tls(b"\x16\x03\x01")  # a handshake record
    assert not looks_like_tls(b"\x00\x00\x01\x1c")  # a 284-byte answer
    assert not looks_like_tls(b"\x15\x03\x09\x00")  # no such TLS version
    assert not looks_like_tls(b"\x15\x03")


def test_only_a_first_answer_in_tls_is_a_mismatch() -> None:
    assert first_answer_mismatch(b"\x15\x03\x03\x00", 0) == ANSWERED_IN_TLS
    assert first_answer_mismatch(b"\x15\x03\x03\x00", 3) is None  # a connection that worked: garbage, not TLS
    assert first_answer_mismatch(b"\x7f\xff\xff\xff", 0) is None


def test_closes_that_point_at_a_mismatch() -> None:
    assert (
        close_mismatch(during_tls_handshake=True, answered_since_ready=None, sasl=False) == CLOSED_DURING_TLS_HANDSHAKE
    )
    assert close_mismatch(during_tls_handshake=False, answered_since_ready=0, sasl=False) == CLOSED_AFTER_API_VERSIONS
    assert close_mismatch(during_tls_handshake=False, answered_since_ready=0, sasl=True) is None  # it did SASL
    assert close_mismatch(during_tls_handshake=False, answered_since_ready=2, sasl=False) is None  # it worked
    assert close_mismatch(during_tls_handshake=False, answered_since_ready=None, sasl=False) is None  # mid-handshake


def test_a_close_is_sure_only_the_second_time_running() -> None:
    assert not lasting(CLOSED_DURING_TLS_HANDSHAKE, None)  # a broker going down closes too
    assert lasting(CLOSED_DURING_TLS_HANDSHAKE, CLOSED_DURING_TLS_HANDSHAKE)
    assert lasting(ANSWERED_IN_TLS, None) and lasting(LISTENER_WITHOUT_SASL, None)


def test_a_lasting_failure_is_reported_once_per_address_until_it_connects() -> None:
    health, address = ClusterHealth(), ("b", 9093)
    error = KafkaError(KafkaError._TRANSPORT, ANSWERED_IN_TLS)
    first = health.failed(address, error, [address], any_live=False, lasting=True)
    assert [e.str() for e in first] == [ANSWERED_IN_TLS, "1/1 brokers are down"]
    assert health.failed(address, error, [address], any_live=False, lasting=True) == []
    health.up(address)
    assert [e.str() for e in health.failed(address, error, [address], any_live=False, lasting=True)] == [
        ANSWERED_IN_TLS,
        "1/1 brokers are down",
    ]
    plain = KafkaError(KafkaError._TRANSPORT, "connection closed by broker")
    # An ordinary close counts only towards "all brokers down" (one of two known here: nothing yet).
    assert health.failed(("c", 1), plain, [("c", 1), ("e", 1)], any_live=False) == []


def test_a_rebootstrap_makes_the_bootstrap_servers_untried_and_all_down_reportable_again() -> None:
    health, learned, boot = ClusterHealth(), ("b", 9092), ("boot", 9092)
    plain = KafkaError(KafkaError._TRANSPORT, "connection refused")
    assert [e.code() for e in health.failed(learned, plain, [learned], any_live=False)] == [
        KafkaError._ALL_BROKERS_DOWN
    ]
    health.failed(boot, plain, [learned], any_live=False)
    assert health.failed(learned, plain, [learned], any_live=False) == []  # once until something comes back
    health.rebootstrapped([boot])
    assert not health.is_down(boot) and health.is_down(learned)  # the learned broker's last attempt still failed
    assert [e.code() for e in health.failed(learned, plain, [learned], any_live=False)] == [
        KafkaError._ALL_BROKERS_DOWN
    ]
