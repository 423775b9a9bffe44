"""SASL on kafkawire's mock (librdkafka's has none), judged by confluent-kafka: both clients log in
with PLAIN and SCRAM, and both are refused with a wrong password or without SASL."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.testing import MockCluster

from .mocks import CLIENTS
from .scenarios import produce

pytestmark = pytest.mark.broker

TIMED_OUT = -192  # librdkafka's _MSG_TIMED_OUT: never delivered
AUTHENTICATION = -169  # librdkafka's _AUTHENTICATION, through error_cb


def attempt(client: str, bootstrap: str, **login: Any) -> tuple[list[int | None], bool]:
    errors: list[int] = []
    config = {"message.timeout.ms": 1000, "error_cb": lambda e: errors.append(e.code()), **login}
    deliveries = produce(CLIENTS[client], bootstrap, "secured", [b"x"], config=config, timeout=10)
    return [code for code, _, _ in deliveries], AUTHENTICATION in errors


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", pytest.param("SCRAM-SHA-512", marks=pytest.mark.slow)])
def test_both_clients_log_in_and_are_refused_alike(mechanism: str) -> None:
    outcomes = {}
    with MockCluster(1, sasl_users={"alice": "s3cret"}) as cluster:
        for client in CLIENTS:
            login = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.username": "alice"}
            outcomes[client] = [
                attempt(client, cluster.bootstrap_servers(), **login, **{"sasl.password": "s3cret"}),
                attempt(client, cluster.bootstrap_servers(), **login, **{"sasl.password": "wrong"}),
            ]
    assert outcomes["confluent"] == [([None], False), ([TIMED_OUT], True)]
    assert outcomes["kafkawire"] == outcomes["confluent"]


@pytest.mark.slow
def test_a_client_without_sasl_gets_nothing() -> None:
    with MockCluster(1, sasl_users={"alice": "s3cret"}) as cluster:
        outcomes = {client: attempt(client, cluster.bootstrap_servers())[0] for client in CLIENTS}
    assert outcomes == {"confluent": [TIMED_OUT], "kafkawire": [TIMED_OUT]}
