"""When "all brokers are down" is reported (core/cluster_health.py): only when no connection reaches
a known broker, whichever part of the client holds it (issue 39: a consumer whose one ready
connection, to broker 0, was its retired bootstrap one reported "3/3 brokers are down" when broker 2
died), and still when the bootstrap address answers but every advertised one fails (the report
starts a rebootstrap)."""

from __future__ import annotations

from kafkawire.core.cluster_health import ClusterHealth, any_up
from kafkawire.core.kafka_error import KafkaError

BROKERS = [("127.0.0.1", 9001), ("127.0.0.1", 9002), ("127.0.0.1", 9003)]
REFUSED = KafkaError(KafkaError._TRANSPORT, "Connection refused")


def test_a_connection_to_a_known_broker_is_a_broker_up_whoever_holds_it() -> None:
    assert any_up(BROKERS, {BROKERS[0]}, bootstrap_up=False)  # (a retired bootstrap one, a lane)
    assert not any_up(BROKERS, set(), bootstrap_up=False)
    assert not any_up(BROKERS, {("127.0.0.1", 9092)}, bootstrap_up=False)  # an address no broker is at
    assert any_up(BROKERS, set(), bootstrap_up=True)  # bootstrapping: its connections count as they are


def _two_down_then_the_third(up: set[tuple[str, int]]) -> list[str]:
    """Brokers 1 and 0 failed and are still being retried; broker 2 fails now."""
    health = ClusterHealth(recent=10.0)
    trying = set(BROKERS)
    for now, address in ((1.0, BROKERS[1]), (2.0, BROKERS[0])):
        health.failed(address, REFUSED, BROKERS, any_up(BROKERS, up, False), trying=trying, now=now)
    out = health.failed(BROKERS[2], REFUSED, BROKERS, any_up(BROKERS, up, False), trying=trying, now=3.0)
    return [e.str() for e in out if e.code() == KafkaError._ALL_BROKERS_DOWN]


def test_no_report_while_a_retired_bootstrap_connection_reaches_a_broker() -> None:
    assert _two_down_then_the_third({BROKERS[0]}) == []


def test_reported_when_only_the_bootstrap_address_answers() -> None:
    assert _two_down_then_the_third({("127.0.0.1", 9092)}) == ["3/3 brokers are down"]
    assert _two_down_then_the_third(set()) == ["3/3 brokers are down"]
