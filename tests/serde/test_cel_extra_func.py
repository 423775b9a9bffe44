"""The string checks of Confluent's CEL environment (rules.cel.extra_func), differential: every
predicate and CEL function on the same inputs with confluent-kafka's module and kafkawire's, the
answers and errors compared (tests/serde/test_cel_jsonata_rules.py runs them in rules on both serdes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("celpy")

import confluent_kafka.schema_registry.rules.cel.extra_func as theirs
from celpy import celtypes

import kafkawire.schema_registry.rules.cel.extra_func as ours

TEXTS = [
    "", "a", "a.b", "-a.b", "a-.b", "a_b.com", "123", "1.2.3.4", "a.123", "host.", "x" * 64 + ".com", "é.com",
    "user@example.com", "User <user@example.com>", "a@b@c.com", "@example.com", "u@-bad.com", "x" * 65 + "@a.com",
    "127.0.0.1", "256.1.1.1", "::1", "[::1]", "[::1]:80", "[::1]x", "[1.2.3.4]:9", "::ffff:1.2.3.4", "fe80::1%eth0",
    "host:80", "host:", "host:65536", "host:-1", "1.2.3.4:9092", "host:port", ":80", "a:b:c",
    "https://example.com/p", "https://example.com", "mailto:x@y.z", "/relative", "#frag", "a#frag", "http://h/p#f",
    "12345678-1234-5678-1234-567812345678", "{12345678-1234-5678-1234-567812345678}", "urn:uuid:12345678123456781234567812345678",
    "1234", "not a uuid", "65535", "0", " 80", "+80",
]  # fmt: skip


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("ok", call())
    except Exception as e:
        return ("error", type(e).__name__, str(e))


@pytest.mark.parametrize(
    "name", ["validate_email", "validate_port", "validate_uuid", "validate_ip", "_validate_hostname"]
)
def test_predicates_as_confluents(name: str) -> None:
    for text in TEXTS:
        assert _outcome(lambda text=text: getattr(ours, name)(text)) == _outcome(
            lambda text=text: getattr(theirs, name)(text)
        ), text


def test_ip_versions_and_host_ports_as_confluents() -> None:
    for text in TEXTS:
        for version in (4, 6, 5):
            assert _outcome(lambda: ours.validate_ip(text, version)) == _outcome(  # noqa: B023
                lambda: theirs.validate_ip(text, version)  # noqa: B023
            ), (text, version)
        for required in (True, False):
            assert ours.validate_host_and_port(text, port_required=required) == theirs.validate_host_and_port(
                text, port_required=required
            ), (text, required)


@pytest.mark.parametrize("function", ["isEmail", "isHostname", "isIpv4", "isIpv6", "isUri", "isUriRef", "isUuid"])
def test_cel_functions_as_confluents(function: str) -> None:
    theirs_by_name = {
        f"is{n[3:].title().replace('_', '')}": getattr(theirs, n) for n in dir(theirs) if n.startswith("is_")
    }
    theirs_by_name |= {"isUriRef": theirs.is_uri_ref, "isIpv4": theirs.is_ipv4, "isIpv6": theirs.is_ipv6}
    mine, judge = ours.FUNCTIONS[function], theirs_by_name[function]
    values: list[Any] = [celtypes.StringType(t) for t in TEXTS]
    values += [celtypes.BytesType(b"\x7f\x00\x00\x01"), celtypes.BytesType(b"\x00" * 16), celtypes.IntType(4)]
    for value in values:
        assert _outcome(lambda: mine(value)) == _outcome(lambda: judge(value)), (function, value)  # noqa: B023
