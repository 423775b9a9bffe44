"""The broker error table: well formed, and in agreement with kafka-python and confluent-kafka.

The other clients are reference data only, loaded at test time. Where they spell a code
differently from Kafka's current name, the spelling must be one of our documented `ALIASES`.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from kafkawire.protocol.error_table import ALIASES, BY_CODE, BY_NAME, ERROR_CODES, ErrorCode, error_for, error_named

# Where we follow the Java client rather than kafka-python on retriability, and why.
RETRIABLE_DIFFERS_FROM_KAFKA_PYTHON = {
    2: "CorruptRecordException is a RetriableException in Java; kafka-python marks CORRUPT_MESSAGE fatal",
}


def test_codes_and_names_are_unique() -> None:
    codes = [e.code for e in ERROR_CODES]
    names = [e.name for e in ERROR_CODES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
    assert len(BY_CODE) == len(BY_NAME) == len(ERROR_CODES)


def test_names_are_upper_snake_and_descriptions_present() -> None:
    for e in ERROR_CODES:
        assert re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*", e.name), e.name
        assert e.description and e.description.strip() == e.description, e.name


def test_table_is_contiguous_from_unknown_server_error() -> None:
    codes = sorted(BY_CODE)
    assert codes == list(range(-1, codes[-1] + 1))
    assert codes[-1] >= 133  # SHARE_SESSION_LIMIT_REACHED, Kafka 4.1
    assert BY_CODE[-1].name == "UNKNOWN_SERVER_ERROR"
    assert BY_CODE[0].name == "NONE" and not BY_CODE[0].retriable


@pytest.mark.parametrize(
    "name",
    [
        "NOT_LEADER_OR_FOLLOWER", "LEADER_NOT_AVAILABLE", "NETWORK_EXCEPTION", "REQUEST_TIMED_OUT",
        "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "COORDINATOR_LOAD_IN_PROGRESS",
        "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "UNKNOWN_TOPIC_OR_PARTITION", "KAFKA_STORAGE_ERROR",
        "CONCURRENT_TRANSACTIONS", "FETCH_SESSION_ID_NOT_FOUND", "UNKNOWN_LEADER_EPOCH", "FENCED_LEADER_EPOCH",
        "OFFSET_NOT_AVAILABLE", "PREFERRED_LEADER_NOT_AVAILABLE", "THROTTLING_QUOTA_EXCEEDED", "CORRUPT_MESSAGE",
    ],
)  # fmt: skip
def test_known_retriable_codes(name: str) -> None:
    assert BY_NAME[name].retriable


@pytest.mark.parametrize(
    "name",
    ["UNKNOWN_SERVER_ERROR", "NONE", "MESSAGE_TOO_LARGE", "TOPIC_AUTHORIZATION_FAILED", "PRODUCER_FENCED",
     "INVALID_PRODUCER_EPOCH", "TRANSACTION_ABORTABLE", "UNSUPPORTED_VERSION", "REBOOTSTRAP_REQUIRED"],
)  # fmt: skip
def test_known_fatal_codes(name: str) -> None:
    assert not BY_NAME[name].retriable


def test_error_for_known_and_unknown_codes() -> None:
    assert error_for(6) is BY_CODE[6]
    for code in (134, 999, 32767, -2, -32768):
        entry = error_for(code)
        assert isinstance(entry, ErrorCode)
        assert entry.code == code and not entry.retriable and entry.description
        assert entry.name not in BY_NAME and entry.name not in ALIASES


def test_aliases_point_at_other_names_of_real_codes() -> None:
    for alias, code in ALIASES.items():
        assert code in BY_CODE, alias
        assert alias not in BY_NAME, alias
    assert error_named("NOT_LEADER_FOR_PARTITION") is BY_CODE[6]
    assert error_named("NOT_LEADER_OR_FOLLOWER") is BY_CODE[6]
    assert error_named("NO_SUCH_ERROR") is None


# --- kafka-python -------------------------------------------------------------------------------


def _kafka_python_errors() -> dict[int, tuple[str, bool]]:
    errors = pytest.importorskip("kafka.errors")
    out: dict[int, tuple[str, bool]] = {}
    for cls in vars(errors).values():
        if not (inspect.isclass(cls) and issubclass(cls, errors.BrokerResponseError)):
            continue
        info: Any = cls
        if info.errno is None:  # the base class and abstract groupings carry no code
            continue
        out[info.errno] = (info.message, bool(info.retriable))
    assert len(out) > 100, "kafka-python's error classes were not found"
    return out


def test_covers_every_code_kafka_python_knows() -> None:
    assert set(_kafka_python_errors()) - set(BY_CODE) == set()


def test_names_agree_with_kafka_python() -> None:
    for code, (name, _) in sorted(_kafka_python_errors().items()):
        ours = BY_CODE[code].name
        assert name == ours or ALIASES.get(name) == code, f"{code}: kafka-python {name}, ours {ours}"


def test_retriable_agrees_with_kafka_python() -> None:
    for code, (name, retriable) in sorted(_kafka_python_errors().items()):
        if code in RETRIABLE_DIFFERS_FROM_KAFKA_PYTHON:
            assert BY_CODE[code].retriable != retriable, f"{code} {name}: the documented difference is gone"
            continue
        assert BY_CODE[code].retriable == retriable, f"{code} {name}: kafka-python says retriable={retriable}"


# --- confluent-kafka ----------------------------------------------------------------------------


def _confluent_broker_codes() -> dict[int, str]:
    confluent = pytest.importorskip("confluent_kafka")
    out: dict[int, str] = {}
    for name, value in vars(confluent.KafkaError).items():
        if name.isupper() and not name.startswith("_") and isinstance(value, int) and value > 0:
            out[value] = name
    assert len(out) > 100, "confluent-kafka's KafkaError constants were not found"
    return out


def test_covers_every_broker_code_confluent_knows() -> None:
    assert set(_confluent_broker_codes()) - set(BY_CODE) == set()


def test_names_agree_with_confluent() -> None:
    for code, name in sorted(_confluent_broker_codes().items()):
        ours = BY_CODE[code].name
        assert name == ours or ALIASES.get(name) == code, f"{code}: confluent {name}, ours {ours}"
