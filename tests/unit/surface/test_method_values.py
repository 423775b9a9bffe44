"""The values of every Python type a program may pass to the clients' methods that answer at once,
on confluent-kafka and on kafkawire (issue 49: values, not only call forms). No broker is needed: a
producer and a consumer pointed at a closed port, each argument in turn given each value (the
others a valid one), the outcome classes compared (accepted, or the exception class with its
KafkaError code). The calls that wait on a broker are tests/broker/surface/test_call_forms.py's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest

import kafkawire

NO_BROKER = "127.0.0.1:9"
VALUES: dict[str, Any] = {
    "int": 1,
    "zero": 0,
    "negative": -1,
    "huge": 2**40,
    "float": 1.5,
    "true": True,
    "str": "x",
    "empty": "",
    "non-ascii": "é",
    "bytes": b"x",
    "none": None,
    "list": ["x"],
    "dict": {"x": "1"},
}


def _noop(*_args: Any) -> None:
    return None


# method -> (receiver, valid keyword arguments); each argument in turn takes each value.
METHODS: dict[str, tuple[str, Callable[[Any], dict[str, Any]]]] = {
    "produce": (
        "Producer",
        lambda m: {
            "topic": "t",
            "value": b"v",
            "key": b"k",
            "partition": 0,
            "on_delivery": _noop,
            "timestamp": 1,
            "headers": [("h", b"1")],
        },
    ),
    "subscribe": ("Consumer", lambda m: {"topics": ["t"], "on_assign": _noop, "on_revoke": _noop}),
    "assign": ("Consumer", lambda m: {"partitions": [m.TopicPartition("t", 0)]}),
    "incremental_assign": ("Consumer", lambda m: {"partitions": [m.TopicPartition("t", 0)]}),
    "pause": ("Consumer", lambda m: {"partitions": [m.TopicPartition("t", 0)]}),
    "resume": ("Consumer", lambda m: {"partitions": [m.TopicPartition("t", 0)]}),
    "position": ("Consumer", lambda m: {"partitions": [m.TopicPartition("t", 0)]}),
    "seek": ("Consumer", lambda m: {"partition": m.TopicPartition("t", 0, 5)}),
    "store_offsets": ("Consumer", lambda m: {"offsets": [m.TopicPartition("t", 0, 5)]}),
}
# (method, argument, value label) -> why kafkawire's outcome differs on purpose (README).
_NOT_A_CALLBACK = "a non-callable on_delivery is refused by produce(); confluent-kafka fails serving the report"
KEPT: dict[tuple[str, str, str], str] = {
    ("produce", "topic", "empty"): "a name Kafka cannot hold is refused by produce(); confluent-kafka reports it later",
    ("produce", "topic", "non-ascii"): "a name Kafka cannot hold is refused by produce(); reported later",
    ("produce", "timestamp", "negative"): "a negative timestamp is refused (README: it overflows a batch's deltas)",
    ("subscribe", "on_assign", "none"): "None given is no callback (the asyncio face passes it so)",
    ("subscribe", "on_revoke", "none"): "None given is no callback (the asyncio face passes it so)",
    **{("produce", "on_delivery", label): _NOT_A_CALLBACK for label in VALUES if label != "none"},
}


def _outcome_class(exc: BaseException) -> str:
    error = exc.args[0] if exc.args else None
    code = error.code() if hasattr(error, "code") and callable(error.code) else None
    return type(exc).__name__ + (f"({code})" if code is not None else "")


def outcome(module: Any, method: str, arg: str, value: Any) -> str:
    receiver, valid = METHODS[method]
    if receiver == "Producer":
        client = module.Producer({"bootstrap.servers": NO_BROKER})
    else:
        client = module.Consumer({"bootstrap.servers": NO_BROKER, "group.id": "values", "enable.auto.commit": False})
    try:
        if method in ("seek", "pause", "resume", "position", "store_offsets"):
            client.assign([module.TopicPartition("t", 0, 5)])
        getattr(client, method)(**{**valid(module), arg: value})
    except Exception as exc:
        return _outcome_class(exc)
    finally:
        _close(client, receiver)
    return "accepted"


def _close(client: Any, receiver: str) -> None:
    try:
        if receiver == "Producer":
            client.purge()
            client.flush(0)  # (confluent-kafka serves a purged record's report: a bad on_delivery raises)
        else:
            client.close()
    except Exception:
        pass


def _cases() -> Iterator[Any]:
    for method, (_, valid) in METHODS.items():
        for arg in valid(confluent_kafka):
            for label in VALUES:
                yield pytest.param(method, arg, label, id=f"{method}.{arg}={label}")


@pytest.fixture(autouse=True, scope="module")
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize(("method", "arg", "label"), list(_cases()))
def test_a_method_takes_the_values_confluent_kafka_takes(method: str, arg: str, label: str) -> None:
    value = VALUES[label]
    theirs = outcome(confluent_kafka, method, arg, value)
    ours = outcome(kafkawire, method, arg, value)
    if (method, arg, label) in KEPT:
        assert ours != theirs, "now behaves as confluent-kafka: drop it from KEPT"
        return
    assert ours == theirs
