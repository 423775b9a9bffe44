"""ListOffsets, once for every client: each partition's earliest, latest or by-timestamp offset
asked of its leader through the request driver (the admin client and the readers use it)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.kafka_error import KafkaError
from ..core.policy import ErrorPolicy
from ..core.policy.offsets import LIST_OFFSETS as READER_POLICY
from ..protocol import error_codes as ec
from ..protocol.apis import LIST_OFFSETS
from ..protocol.codec import Struct
from .driver import ONCE, Cluster, Operation, Tries
from .routers import LEADERS, topic_partition

K = TypeVar("K", bound=Hashable)

EARLIEST = -2  # ListOffsets' timestamp for the log start
LATEST = -1  # ListOffsets' timestamp for the log end (the last stable offset under read_committed)
MAX_TIMESTAMP = -3  # the record with the largest timestamp (KIP-734)
READ_UNCOMMITTED = 0
READ_COMMITTED = 1


@dataclass(frozen=True)
class OffsetAnswer:
    """A partition's answer: ``offset`` is -1 when no record has a timestamp at or after the one asked."""

    offset: int
    timestamp: int = -1
    leader_epoch: int = -1


def list_offsets_operation(
    client: Cluster,
    queries: Mapping[K, int],
    *,
    isolation_level: int = READ_UNCOMMITTED,
    deadline: float,
    backoff_ms: tuple[int, int] = (100, 1000),
    policy: ErrorPolicy = READER_POLICY,
    live: set[Operation[Any]] | None = None,
    tries: Tries = ONCE,
) -> Operation[K]:
    """An Operation (not started) asking for each key's offset; keys are (topic, partition) tuples
    or TopicPartitions, values EARLIEST, LATEST, MAX_TIMESTAMP or a timestamp in ms."""
    made: list[Operation[K]] = []  # (the body asks the operation how long it has left)

    def body(keys: list[K], version: int) -> dict[str, Any]:
        topics: dict[str, list[dict[str, Any]]] = {}
        for key in keys:
            topic, partition = topic_partition(key)
            topics.setdefault(topic, []).append({"partition_index": partition, "timestamp": queries[key]})
        return {
            "replica_id": -1,
            "isolation_level": isolation_level,
            "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
            "timeout_ms": max(0, int(made[0].remaining() * 1000)),
        }

    def parse(response: Struct, keys: list[K], node: int | None) -> dict[K, Any]:
        by_tp = {topic_partition(key): key for key in keys}
        out: dict[K, Any] = {}
        for t in response.topics:
            for p in t.partitions:
                key = by_tp.get((t.name, p.partition_index))
                if key is None:
                    continue
                if p.error_code:
                    out[key] = KafkaError(
                        p.error_code, f"ListOffsets {t.name}[{p.partition_index}]: {KafkaError(p.error_code).str()}"
                    )
                else:
                    out[key] = OffsetAnswer(p.offset, p.get("timestamp", -1), p.get("leader_epoch", -1))
        for key in keys:  # a leader that does not answer for a partition no longer leads it
            out.setdefault(key, KafkaError(ec.UNKNOWN_TOPIC_OR_PARTITION, f"the leader did not answer for {key}"))
        return out

    made.append(
        Operation(
            client,
            queries,
            api=LIST_OFFSETS,
            router=LEADERS,
            body=body,
            parse=parse,
            policy=policy,
            deadline=deadline,
            backoff_ms=backoff_ms,
            live=live,
            tries=tries,
        )
    )
    return made[0]


def answers(futures: Mapping[K, Future[Any]]) -> dict[K, OffsetAnswer]:
    """The answers of a finished operation, raising the first failure."""
    return {key: fut.result(0) for key, fut in futures.items()}
