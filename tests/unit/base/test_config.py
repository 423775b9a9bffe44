"""Configuration mistakes fail at construction, naming the key and what is allowed."""

from __future__ import annotations

import pytest

from kafkawire.base.config import CONNECTION_OPTIONS, Option, bootstrap_addresses, parse_config
from kafkawire.core.kafka_error import KafkaError, KafkaException


def invalid_arg(exc: pytest.ExceptionInfo[KafkaException]) -> str:
    err = exc.value.args[0]
    assert isinstance(err, KafkaError) and err.code() == KafkaError._INVALID_ARG
    return err.str()


def test_defaults_and_string_values() -> None:
    conf = parse_config({"bootstrap.servers": "h:1", "reconnect.backoff.ms": "250"}, CONNECTION_OPTIONS)
    assert conf["reconnect.backoff.ms"] == 250
    assert conf["client.id"] == "kafkawire"


def test_alias_maps_to_canonical_name() -> None:
    conf = parse_config({"metadata.broker.list": "h:1", "max.in.flight": 5}, CONNECTION_OPTIONS)
    assert conf["bootstrap.servers"] == "h:1" and conf["max.in.flight.requests.per.connection"] == 5


def test_unknown_key_is_named() -> None:
    with pytest.raises(KafkaException) as exc:
        parse_config({"bootstrap.server": "h:1"}, CONNECTION_OPTIONS)
    assert '"bootstrap.server"' in invalid_arg(exc)


def test_out_of_range_names_key_and_range() -> None:
    with pytest.raises(KafkaException) as exc:
        parse_config({"receive.message.max.bytes": 10}, CONNECTION_OPTIONS)
    assert "receive.message.max.bytes" in invalid_arg(exc) and "1000..2147483647" in invalid_arg(exc)


def test_enum_lists_allowed_values() -> None:
    with pytest.raises(KafkaException) as exc:
        parse_config({"security.protocol": "carrier-pigeon"}, CONNECTION_OPTIONS)
    assert "allowed values are plaintext" in invalid_arg(exc)


def test_sensitive_values_never_appear_in_errors() -> None:
    secret = Option("sasl.password", "int", 0, 0, 10, sensitive=True)
    with pytest.raises(KafkaException) as exc:
        parse_config({"sasl.password": "hunter2"}, [secret])
    assert "hunter2" not in invalid_arg(exc) and "(hidden)" in invalid_arg(exc)


@pytest.mark.parametrize("value", ["h:0", "h:99999", "h:x", ":9092", "[::1]x", "http://h:1"])
def test_malformed_bootstrap_servers(value: str) -> None:
    with pytest.raises(KafkaException) as exc:
        bootstrap_addresses(value)
    assert "bootstrap.servers" in invalid_arg(exc)


def test_bootstrap_servers_parse() -> None:
    assert bootstrap_addresses("a:1, PLAINTEXT://b:2,[::1]:3") == [("a", 1), ("b", 2), ("::1", 3)]


def test_bootstrap_servers_default_port_and_none() -> None:
    """As librdkafka: a host without a port means 9092, and no servers at all is not an error."""
    assert bootstrap_addresses("a, SSL://b,[::1],::1") == [("a", 9092), ("b", 9092), ("::1", 9092), ("::1", 9092)]
    assert bootstrap_addresses(None) == [] and bootstrap_addresses(" , ") == []
