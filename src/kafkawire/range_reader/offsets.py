"""Where to read, for the blocking readers (Spark, the pipeline): partitions of topics, and offsets
by ListOffsets (earliest, latest, a timestamp).

Each question is one request-driver operation (`kafkawire.client.driver`): ListOffsets goes to each
partition's leader (`client/list_offsets.py`), answers that say the leader moved or is not there yet
refresh the metadata and ask again until the call's deadline; the caller's thread only waits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..client import routers
from ..client.driver import ONCE, Body, Callback, Operation, Tries, wait
from ..client.list_offsets import (
    EARLIEST,
    LATEST,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    OffsetAnswer,
    answers,
    list_offsets_operation,
)
from ..client.network_client import Client
from ..core import TopicPartitionKey
from ..core.kafka_error import KafkaError, KafkaException
from ..core.policy import LOST_ANSWER, Action, ErrorPolicy
from ..protocol import error_codes as ec
from ..protocol.apis import METADATA
from ..protocol.codec import Struct

__all__ = [
    "EARLIEST",
    "LATEST",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "OffsetAnswer",
    "list_offsets",
    "partitions_for",
    "topics_matching",
]

# A topic without partitions yet (just created, or auto-created) is asked about again.
_PARTITIONS = ErrorPolicy(
    "topic partitions",
    {ec.UNKNOWN_TOPIC_OR_PARTITION: Action.RETRY, **dict.fromkeys(LOST_ANSWER, Action.RETRY)},
)


def partitions_for(
    client: Client, topics: Iterable[str], timeout: float = 30.0, tries: Tries = ONCE
) -> dict[str, list[int]]:
    """Partition ids of each topic, asking the metadata again while a topic has none yet.

    A topic that still has no partitions at the deadline (of its last try) raises
    UNKNOWN_TOPIC_OR_PARTITION.
    """
    wanted = sorted(set(topics))

    def send(node: int | None, body: Body, done: Callback, request_timeout: float) -> None:
        client.refresh_metadata_io(wanted, done, timeout=request_timeout)

    def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
        md = client.metadata  # the refresh folded the answer into the cache
        out: dict[str, Any] = {}
        for topic in keys:
            info = md.topics.get(topic)
            if info is not None and info.error_code == 0 and info.partitions:
                out[topic] = sorted(info.partitions)
            else:
                code = info.error_code if info is not None and info.error_code else ec.UNKNOWN_TOPIC_OR_PARTITION
                out[topic] = KafkaError(code, f"no partitions for topic {topic}")
        return out

    op: Operation[str] = Operation(
        client,
        wanted,
        api=METADATA,
        router=routers.ANY_BROKER,
        body=lambda keys, version: {},
        parse=parse,
        policy=_PARTITIONS,
        deadline=client.engine.now() + timeout,
        backoff_ms=(100, 1000),
        send=send,
        tries=tries,
    ).start()
    found: dict[str, list[int]] = {}
    missing: list[str] = []
    for topic, fut in op.futures.items():
        try:
            found[topic] = wait(fut, tries.span(timeout))
        except KafkaException as exc:
            if exc.args[0].code() not in (KafkaError._TIMED_OUT, ec.UNKNOWN_TOPIC_OR_PARTITION):
                raise
            missing.append(topic)
    if missing:
        raise KafkaException(
            KafkaError(ec.UNKNOWN_TOPIC_OR_PARTITION, f"no partitions for topic(s) {', '.join(missing)}")
        )
    return found


def topics_matching(client: Client, pattern: str, timeout: float = 30.0, tries: Tries = ONCE) -> dict[str, list[int]]:
    """Every non-internal topic whose whole name matches the regular expression, with its partitions."""
    regex = re.compile(pattern)
    md = wait(client.refresh_metadata(None, timeout=timeout, tries=tries), tries.span(timeout))
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
    tries: Tries = ONCE,
) -> dict[TopicPartitionKey, OffsetAnswer]:
    """Ask each partition's leader for the offset of ``EARLIEST``, ``LATEST`` or a timestamp (ms)."""
    backoff_ms = max(1, int(backoff * 1000))
    op = list_offsets_operation(
        client,
        queries,
        isolation_level=isolation_level,
        deadline=client.engine.now() + timeout,
        backoff_ms=(backoff_ms, max(backoff_ms, 1000)),
        tries=tries,
    ).start()
    for fut in op.futures.values():
        wait(fut, tries.span(timeout))
    return answers(op.futures)
