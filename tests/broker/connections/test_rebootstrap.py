"""Metadata recovery (metadata.recovery.strategy, KIP-899) on a real broker, confluent-kafka the
reference: a Tansu broker that advertises an address nobody listens on, so after the first
Metadata answer every broker the client knows is unreachable and only bootstrap.servers works."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire.local_broker import TansuBroker, _free_loopback_port

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def unreachable_advertised() -> Iterator[TansuBroker]:
    with TansuBroker(advertised_port=_free_loopback_port()) as broker:  # nothing listens there
        yield broker


def _outcomes(module: Any, bootstrap: str, strategy: str) -> list[bool]:
    """list_topics three times: each answered (True) or failed (False)."""
    conf = {
        "bootstrap.servers": bootstrap,
        "metadata.recovery.strategy": strategy,
        "reconnect.backoff.max.ms": 500,
        "error_cb": lambda _e: None,
    }
    producer = module.Producer(conf)
    out = []
    try:
        for _ in range(3):
            try:
                producer.list_topics(timeout=4)
                out.append(True)
            except module.KafkaException:
                out.append(False)
    finally:
        producer.flush(0)
    return out


@pytest.mark.parametrize("strategy", ["rebootstrap", "none"])
def test_recovery_through_bootstrap_servers_as_confluent_kafka(
    unreachable_advertised: TansuBroker, strategy: str
) -> None:
    reference = _outcomes(confluent_kafka, unreachable_advertised.bootstrap, strategy)
    ours = _outcomes(kafkawire, unreachable_advertised.bootstrap, strategy)
    # rebootstrap: each refresh finds the learned broker down and goes back to bootstrap.servers;
    # none: the bootstrap connection is retired after the first answer and never used again. (The
    # first call is left out: the client's own first Metadata answer may already have retired it.)
    expected = [True, True] if strategy == "rebootstrap" else [False, False]
    assert reference[1:] == expected
    assert ours[1:] == expected
