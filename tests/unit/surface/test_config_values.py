"""Every configuration property with a value of every Python type, set at construction on
confluent-kafka and on kafkawire: the outcomes are compared (issue 49: values, not only call forms).

For each row of librdkafka's property table (client/librdkafka_properties.py) and each value (int,
zero, negative, huge, float, bool, str, empty, non-ASCII, bytes, None), a producer (or a consumer,
for a consumer property) is made on both clients, pointed at a closed port: no broker is needed.
The outcome is "accepted" or the exception class (with the KafkaError code), and when
confluent-kafka's message names the property (or the property it is an alias of), kafkawire's
names it too. The properties confluent-kafka's binding reads itself (callbacks,
``delivery.report.only.error``) get the same values.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from kafkawire.client.librdkafka_properties import PROPERTIES

NO_BROKER = "127.0.0.1:9"
VALUES: dict[str, Any] = {
    "int": 1,
    "zero": 0,
    "negative": -1,
    "huge": 2**40,
    "float": 1.5,
    "integral-float": 1.0,
    "true": True,
    "false": False,
    "str": "x",
    "empty": "",
    "non-ascii": "é",
    "bytes": b"x",
    "none": None,
}
# The properties confluent-kafka's binding handles itself (not librdkafka's table): client type.
BINDING_PROPERTIES = {
    "error_cb": "*",
    "throttle_cb": "*",
    "stats_cb": "*",
    "oauth_cb": "*",
    "logger": "*",
    "on_delivery": "P",
    "delivery.report.only.error": "P",
    "on_commit": "C",
}
# What confluent-kafka cannot be asked: it aborts the process (an assertion in Consumer_init).
CRASHES = {("group.id", "empty"), ("group.id", "none")}
ALIASES = {name: alias for name, _scope, _kind, _rng, _default, alias in PROPERTIES if alias}

# Properties whose outcome differs on purpose, whatever the value (README, "differs on purpose").
KEPT_PROPERTIES = {
    "sasl.jaas.config": "the Java client's property, taken for programs written for it",
    "ssl.truststore.location": "the Java client's property, taken for programs written for it",
    "ssl.ca.certificate.stores": "Windows' certificate stores: librdkafka refuses it elsewhere, kafkawire ignores it",
    "ssl.keystore.location": "a PKCS#12 keystore kafkawire reads when it connects; librdkafka opens it at construction",
    "https.ca.location": "read when an OIDC token is fetched; librdkafka checks the path at construction",
    "ssl.engine.location": "OpenSSL engines cannot load into Python's ssl module: refused, whatever the value",
    "ssl.providers": "OpenSSL providers cannot load into Python's ssl module: refused, whatever the value",
    "ssl.sigalgs.list": "Python's ssl module cannot set signature algorithms: refused, whatever the value",
    "ssl.curves.list": "Python's ssl module cannot set a curves list: refused, whatever the value",
    "sasl.oauthbearer.sub.claim.name": "inert in kafkawire (the principal is the sub claim): only its default is taken",
    "logger": "an object that cannot log is refused at construction; confluent-kafka fails at the first log line",
}
# Values whose outcome differs on purpose: kafkawire says at construction what would go wrong later.
KEPT_VALUES = {
    ("socket.max.fails", "zero"): "inert in kafkawire (a connection closes at its first timed-out request)",
    ("socket.max.fails", "huge"): "inert: 2**40 wraps to 0 in librdkafka, not kafkawire's fixed 1",
    ("retry.backoff.max.ms", "int"): "below retry.backoff.ms: librdkafka only warns",
    ("retry.backoff.max.ms", "float"): "below retry.backoff.ms: librdkafka only warns",
    ("retry.backoff.max.ms", "integral-float"): "below retry.backoff.ms: librdkafka only warns",
    ("transactional.id", "empty"): "an empty transactional id no broker takes; librdkafka fails at init_transactions",
    ("group.instance.id", "empty"): "an empty instance id no broker takes; librdkafka fails at the join",
    ("partition.assignment.strategy", "empty"): "no assignor at all: librdkafka fails at the first rebalance",
    ("partition.assignment.strategy", "none"): "no assignor at all: librdkafka fails at the first rebalance",
    ("group.protocol.type", "empty"): "only the classic protocol type is spoken; librdkafka takes any at construction",
    ("group.protocol.type", "none"): "only the classic protocol type is spoken; librdkafka takes any at construction",
    ("plugin.library.paths", "none"): "inert in kafkawire (no C plugins): None is its default, taken",
}


def _scope(name: str) -> str:
    for row in PROPERTIES:
        if row[0] == name:
            return row[1]
    return BINDING_PROPERTIES[name]


def outcome(module: Any, name: str, value: Any) -> str:
    conf: dict[str, Any] = {"bootstrap.servers": NO_BROKER, name: value}
    if _scope(name) == "C":
        conf.setdefault("group.id", "values")
        cls = module.Consumer
    else:
        cls = module.Producer
    try:
        made = cls(conf)
    except Exception as exc:
        error = exc.args[0] if exc.args else None
        code = error.code() if hasattr(error, "code") and callable(error.code) else None
        text = error.str() if code is not None else str(exc)
        named = name in text or ALIASES.get(name, "\0") in text
        return f"{type(exc).__name__}" + (f"({code})" if code is not None else "") + ("" if named else " unnamed")
    try:
        made.close()
    except AttributeError:  # (confluent-kafka logs at close through a logger that cannot log)
        pass
    return "accepted"


def _cases() -> Iterator[Any]:
    names = [row[0] for row in PROPERTIES if row[2] != "api" and row[0] != "builtin.features"]
    for name in [*names, *BINDING_PROPERTIES]:
        if name in KEPT_PROPERTIES:
            continue
        yield pytest.param(name, id=name)


@pytest.fixture(autouse=True, scope="module")
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)  # (the warnings of inert and foreign properties)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("name", list(_cases()))
def test_a_property_takes_the_values_confluent_kafka_takes(name: str) -> None:
    differing = {}
    for label, value in VALUES.items():
        if (name, label) in CRASHES:
            continue
        theirs = outcome(confluent_kafka, name, value)
        ours = outcome(kafkawire, name, value)
        if (name, label) in KEPT_VALUES:
            assert ours != theirs, f"{name}={value!r} now behaves as confluent-kafka: drop it from KEPT_VALUES"
            continue
        if theirs.endswith(" unnamed"):  # (confluent-kafka's message does not name it: ours may)
            theirs, ours = theirs.removesuffix(" unnamed"), ours.removesuffix(" unnamed")
        if ours != theirs:
            differing[label] = (ours, theirs)
    assert differing == {}


@pytest.mark.parametrize("name", list(KEPT_PROPERTIES))
def test_a_property_kept_apart_still_differs(name: str) -> None:
    outcomes = [(outcome(kafkawire, name, v), outcome(confluent_kafka, name, v)) for v in ("x", None)]
    assert any(ours != theirs for ours, theirs in outcomes), f"{name}: drop it from KEPT_PROPERTIES"
