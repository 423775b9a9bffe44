"""A fenced transactional producer's errors as confluent-kafka's (issue 49), on Apache Kafka 2.3.

Two producers with the same ``transactional.id``: the second's ``init_transactions()`` fences the
first, whose next partition then cannot be added to its transaction (AddPartitionsToTxn answers
INVALID_PRODUCER_EPOCH). librdkafka makes that a fatal ``_FENCED`` error ("Failed to add partitions
to transaction: ..."), raised as it is by every later transactional call. Both clients run the same
steps; what the calls raise is compared, text included. (The record that waited for its partition
is not compared: confluent-kafka's flush() raises SystemError from its delivery callback there, the
report lost.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

import kafkawire
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

WAIT = 60.0


def _error(err: Any) -> tuple[str, int, str, bool, bool, bool]:
    return (err.name(), err.code(), err.str(), err.fatal(), err.retriable(), err.txn_requires_abort())


def _fenced(module: Any, bootstrap: str, topic: str) -> dict[str, Any]:
    """The first producer fenced by the second: what its calls raise, the reports, error_cb.
    Errors are read afterwards: confluent-kafka may call back while a call of it is raising."""
    reports: dict[bytes, Any] = {}
    tid = f"{topic}-tid"
    first = module.Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    second = module.Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    out: dict[str, Any] = {}
    try:
        first.init_transactions(WAIT)
        first.begin_transaction()
        first.produce(topic, b"in", partition=0, on_delivery=lambda err, msg: reports.update({msg.value(): err}))
        assert first.flush(WAIT) == 0
        second.init_transactions(WAIT)  # fences the first
        first.produce(topic, b"late", partition=1, on_delivery=lambda err, msg: reports.update({msg.value(): err}))
        try:
            first.flush(WAIT)
        except Exception as exc:  # (confluent-kafka raises a callback's pending exception here)
            out["flush"] = type(exc).__name__
        try:
            first.produce(topic, b"after", partition=0)
        except Exception as exc:  # KafkaException(_FATAL) on both
            out["produce"] = _error(exc.args[0]) if exc.args and hasattr(exc.args[0], "code") else repr(exc)
        for call in ("commit_transaction", "abort_transaction"):
            with pytest.raises(
                confluent_kafka.KafkaException if module is confluent_kafka else kafkawire.KafkaException
            ) as exc:
                getattr(first, call)(WAIT)
            out[call] = _error(exc.value.args[0])
        first.poll(0)
    finally:
        for p in (first, second):
            close = getattr(p, "close", None)
            if close is not None:
                try:
                    close(10)
                except Exception:
                    pass
    out["reports"] = {value: None if err is None else err.name() for value, err in reports.items()}
    return out


def test_a_fenced_transaction_fails_as_on_confluent_kafka(
    kafka23: KafkaBroker, topic_name: Callable[[str], str]
) -> None:
    bootstrap = kafka23.bootstrap()
    results = {}
    for module in (confluent_kafka, kafkawire):
        topic = topic_name(module.__name__.replace("_", "-"))
        create_topic(bootstrap, topic, 2)
        results[module.__name__] = _fenced(module, bootstrap, topic)
    theirs, ours = results["confluent_kafka"], results["kafkawire"]
    print(theirs, ours, sep="\n")
    assert theirs["commit_transaction"][:2] == ("_FENCED", confluent_kafka.KafkaError._FENCED)
    for key in ("commit_transaction", "abort_transaction", "produce"):
        assert ours[key] == theirs[key], key
    assert ours["reports"][b"in"] is None
