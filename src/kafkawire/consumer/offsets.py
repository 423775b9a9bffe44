"""Where to read: partitions of topics, and offsets by ListOffsets (earliest, latest, a timestamp).

Each partition's question goes to its leader, one request per leader at a time. An answer that
says the leader moved or is not there yet (any retriable code, or a lost connection) refreshes
the metadata and asks again after a short backoff, until the call's deadline.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from ..client.cluster import Client
from ..core import TopicPartitionKey
from ..errors import KafkaError, KafkaException
from ..protocol.apis import LIST_OFFSETS
from ..protocol.codec import Struct

EARLIEST = -2  # ListOffsets' timestamp for the log start
LATEST = -1  # ListOffsets' timestamp for the log end (the last stable offset under read_committed)
READ_UNCOMMITTED = 0
READ_COMMITTED = 1



@dataclass(frozen=True)
class OffsetAnswer:
    """A partition's answer: ``offset`` is -1 when no record has a timestamp at or after the one asked."""

    offset: int
    timestamp: int = -1


def _unwrap(exc: BaseException) -> KafkaError:
    if isinstance(exc, KafkaException) and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return KafkaError(KafkaError._FAIL, str(exc))


def _retriable_locally(error: KafkaError) -> bool:
    return error.retriable() or error.code() in (
        KafkaError._TRANSPORT,
        KafkaError._TIMED_OUT,
        KafkaError._UNKNOWN_BROKER,
        KafkaError._ALL_BROKERS_DOWN,
    )


def partitions_for(client: Client, topics: Iterable[str], timeout: float = 30.0) -> dict[str, list[int]]:
    """Partition ids of each topic, waiting (with metadata refreshes) while a topic has none yet.

    A topic that still has no partitions at the deadline raises UNKNOWN_TOPIC_OR_PARTITION.
    """
    wanted = sorted(set(topics))
    deadline = time.monotonic() + timeout
    while True:
        remaining = max(0.1, deadline - time.monotonic())
        md = client.refresh_metadata(wanted, timeout=remaining).result(remaining + 1)
        found: dict[str, list[int]] = {}
        for topic in wanted:
            info = md.topics.get(topic)
            if info is not None and info.error_code == 0 and info.partitions:
                found[topic] = sorted(info.partitions)
        if len(found) == len(wanted):
            return found
        if time.monotonic() >= deadline:
            missing = [t for t in wanted if t not in found]
            raise KafkaException(
                KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PARTITION, f"no partitions for topic(s) {', '.join(missing)}")
            )
        time.sleep(0.1)


def topics_matching(client: Client, pattern: str, timeout: float = 30.0) -> dict[str, list[int]]:
    """Every non-internal topic whose whole name matches the regular expression, with its partitions."""
    regex = re.compile(pattern)
    md = client.refresh_metadata(None, timeout=timeout).result(timeout + 1)
    return {
        name: sorted(info.partitions)
        for name, info in md.topics.items()
        if not info.is_internal and info.error_code == 0 and info.partitions and regex.fullmatch(name)
    }


def list_offsets(
    client: Client,
    queries: Mapping[TopicPartitionKey, int],
    *,
    isolation_level: int = READ_UNCOMMITTED,
    timeout: float = 30.0,
    backoff: float = 0.1,
) -> dict[TopicPartitionKey, OffsetAnswer]:
    """Ask each partition's leader for the offset of ``EARLIEST``, ``LATEST`` or a timestamp (ms)."""
    pending = dict(queries)
    answers: dict[TopicPartitionKey, OffsetAnswer] = {}
    deadline = time.monotonic() + timeout
    last_error: KafkaError | None = None
    refresh = not all(client.metadata.leader_for(t, p) for t, p in pending)
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            reason = f"ListOffsets for {len(pending)} partition(s) did not finish in {timeout:g} s"
            if last_error is not None:
                reason += f"; last error {last_error.name()}: {last_error.str()}"
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, reason))
        if refresh:
            try:
                client.refresh_metadata(sorted({t for t, _ in pending}), timeout=remaining).result(remaining + 1)
            except KafkaException as exc:
                last_error = _unwrap(exc)
                time.sleep(backoff)
                continue
            refresh = False
        by_leader: dict[int, list[TopicPartitionKey]] = {}
        for tp in pending:
            leader = client.metadata.leader_for(*tp)
            if leader is None:
                last_error = KafkaError(KafkaError.LEADER_NOT_AVAILABLE, f"no leader known for {tp[0]}[{tp[1]}]")
                refresh = True
                continue
            by_leader.setdefault(leader.node_id, []).append(tp)
        futures: list[tuple[list[TopicPartitionKey], Future[Struct]]] = []
        for node_id, tps in by_leader.items():
            body = _request_body(tps, pending, isolation_level, remaining)
            futures.append((tps, client.request(LIST_OFFSETS, body, node=node_id, timeout=remaining)))
        for tps, fut in futures:
            try:
                response = fut.result(remaining + 1)
            except KafkaException as exc:
                error = _unwrap(exc)
                if not _retriable_locally(error):
                    raise
                last_error, refresh = error, True
                continue
            for topic in response.topics:
                for part in topic.partitions:
                    tp = (topic.name, part.partition_index)
                    if tp not in pending:
                        continue
                    if part.error_code:
                        error = KafkaError(part.error_code, f"ListOffsets {tp[0]}[{tp[1]}]: {KafkaError(part.error_code).str()}")
                        if not error.retriable():
                            raise KafkaException(error)
                        last_error, refresh = error, True
                        client.metadata.forget_leader(*tp)
                        continue
                    answers[tp] = OffsetAnswer(part.offset, part.get("timestamp", -1))
                    del pending[tp]
            if any(tp in pending for tp in tps):
                refresh = True
                last_error = last_error or KafkaError(
                    KafkaError.UNKNOWN_TOPIC_OR_PARTITION, "the leader did not answer for every partition asked"
                )
        if pending:
            time.sleep(backoff)
    return answers


def _request_body(
    tps: list[TopicPartitionKey], queries: Mapping[TopicPartitionKey, int], isolation_level: int, remaining: float
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, partition in tps:
        topics.setdefault(topic, []).append({"partition_index": partition, "timestamp": queries[(topic, partition)]})
    return {
        "replica_id": -1,
        "isolation_level": isolation_level,
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
        "timeout_ms": int(remaining * 1000),
    }
