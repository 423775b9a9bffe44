"""Fault injection, as librdkafka's mock cluster offers it: errors pushed per API (cluster-wide, or
per broker with a delay each), brokers down, round-trip times, advertised version ranges.

An injected error answers the request without touching the cluster: the answer is built from the
request alone. `ECHOES` says, per API, which request array each response array mirrors (topics
into topics, partitions into partitions) and which keys carry over; every error field of the
result then gets the error. Sans-IO.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.protocol.schema import Api, Array, Field

TRANSPORT_ERROR = -195  # librdkafka's _TRANSPORT: the broker drops the connection instead of answering
ERROR_FIELDS = frozenset({"error_code", "partition_error_code"})


@dataclass(frozen=True)
class Echo:
    """A response array built from a request array: one element per request element, with the
    ``keys`` (request name -> response name; None: the element itself) copied over."""

    request: str
    response: str
    keys: tuple[tuple[str | None, str], ...]
    inner: tuple[Echo, ...] = ()


_TOPIC_KEYS = (("name", "name"), ("topic_id", "topic_id"))
ECHOES: dict[int, tuple[Echo, ...]] = {
    0: (
        Echo(
            "topic_data",
            "responses",
            _TOPIC_KEYS,
            (Echo("partition_data", "partition_responses", (("index", "index"),)),),
        ),
    ),
    1: (
        Echo(
            "topics",
            "responses",
            (("topic", "topic"), ("topic_id", "topic_id")),
            (Echo("partitions", "partitions", (("partition", "partition_index"),)),),
        ),
    ),
    2: (
        Echo(
            "topics",
            "topics",
            _TOPIC_KEYS,
            (Echo("partitions", "partitions", (("partition_index", "partition_index"),)),),
        ),
    ),
    3: (Echo("topics", "topics", _TOPIC_KEYS),),
    8: (
        Echo(
            "topics",
            "topics",
            _TOPIC_KEYS,
            (Echo("partitions", "partitions", (("partition_index", "partition_index"),)),),
        ),
    ),
    9: (
        Echo("topics", "topics", _TOPIC_KEYS, (Echo("partition_indexes", "partitions", ((None, "partition_index"),)),)),
        Echo(
            "groups",
            "groups",
            (("group_id", "group_id"),),
            (
                Echo(
                    "topics",
                    "topics",
                    _TOPIC_KEYS,
                    (Echo("partition_indexes", "partitions", ((None, "partition_index"),)),),
                ),
            ),
        ),
    ),
    10: (Echo("coordinator_keys", "coordinators", ((None, "key"),)),),
    19: (Echo("topics", "topics", (("name", "name"),)),),
    20: (Echo("topic_names", "responses", ((None, "name"),)), Echo("topics", "responses", _TOPIC_KEYS)),
    24: (
        Echo(
            "v3_and_below_topics",
            "results_by_topic_v3_and_below",
            (("name", "name"),),
            (Echo("partitions", "results_by_partition", ((None, "partition_index"),)),),
        ),
        Echo(
            "transactions",
            "results_by_transaction",
            (("transactional_id", "transactional_id"),),
            (
                Echo(
                    "topics",
                    "topic_results",
                    (("name", "name"),),
                    (Echo("partitions", "results_by_partition", ((None, "partition_index"),)),),
                ),
            ),
        ),
    ),
    28: (
        Echo(
            "topics",
            "topics",
            (("name", "name"),),
            (Echo("partitions", "partitions", (("partition_index", "partition_index"),)),),
        ),
    ),
    13: (Echo("members", "members", (("member_id", "member_id"), ("group_instance_id", "group_instance_id"))),),
    15: (Echo("groups", "groups", ((None, "group_id"),)),),
    21: (
        Echo(
            "topics",
            "topics",
            (("name", "name"),),
            (Echo("partitions", "partitions", (("partition_index", "partition_index"),)),),
        ),
    ),
    33: (Echo("resources", "responses", (("resource_type", "resource_type"), ("resource_name", "resource_name"))),),
    37: (Echo("topics", "results", (("name", "name"),)),),
    42: (Echo("groups_names", "results", ((None, "group_id"),)),),
    44: (Echo("resources", "responses", (("resource_type", "resource_type"), ("resource_name", "resource_name"))),),
    32: (Echo("resources", "results", (("resource_type", "resource_type"), ("resource_name", "resource_name"))),),
}


def error_response(api: Api, version: int, request: Mapping[str, Any], code: int) -> dict[str, Any]:
    """The answer a broker gives when the whole request fails with ``code``."""
    body = _echo(ECHOES.get(api.key, ()), request)
    _stamp(api.response.fields, version, body, code)
    return body


def _echo(echoes: tuple[Echo, ...], request: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for echo in echoes:
        items = []
        for element in request.get(echo.request) or ():
            item = {to: (element if src is None else element.get(src)) for src, to in echo.keys}
            if echo.inner and isinstance(element, Mapping):
                item.update(_echo(echo.inner, element))
            items.append(item)
        if items:
            out[echo.response] = items
    return out


def _stamp(fields: tuple[Field, ...], version: int, obj: dict[str, Any], code: int) -> None:
    for fld in fields:
        if version not in fld.versions:
            continue
        if fld.name in ERROR_FIELDS:
            obj[fld.name] = code
        elif fld.type == "records":
            obj.setdefault(fld.name, b"")  # empty, never null: as Kafka answers (librdkafka rejects null)
        elif isinstance(fld.type, Array) and isinstance(fld.type.of, tuple):
            for item in obj.get(fld.name, ()):
                _stamp(fld.type.of, version, item, code)


class Faults:
    """What the test asked to go wrong, consumed by the dispatcher request by request."""

    def __init__(self) -> None:
        self.cluster_errors: dict[int, deque[tuple[int, int]]] = {}
        self.broker_errors: dict[tuple[int, int], deque[tuple[int, int]]] = {}
        self.rtt_ms: dict[int, int] = {}
        self.down: set[int] = set()
        self.versions: dict[int, tuple[int, int]] = {}

    def push(self, api_key: int, errors: list[tuple[int, int]]) -> None:
        self.cluster_errors.setdefault(api_key, deque()).extend(errors)

    def push_broker(self, broker_id: int, api_key: int, errors: list[tuple[int, int]]) -> None:
        self.broker_errors.setdefault((broker_id, api_key), deque()).extend(errors)

    def clear(self, api_key: int) -> None:
        self.cluster_errors.pop(api_key, None)
        for key in [k for k in self.broker_errors if k[1] == api_key]:
            del self.broker_errors[key]

    def next_error(self, broker_id: int, api_key: int) -> tuple[int, int]:
        """(error, extra delay in ms) for the next request; broker pushes come first."""
        stack = self.broker_errors.get((broker_id, api_key))
        if stack:
            return stack.popleft()
        errors = self.cluster_errors.get(api_key)
        if errors:
            return errors.popleft()
        return 0, 0

    def pending(self, broker_id: int, api_key: int) -> int:
        return len(self.broker_errors.get((broker_id, api_key), ()))
