"""Exactly-once writes: one Kafka transaction per task, fenced by a stable id, and commit markers.

Each task writes its rows inside one transaction whose ``transactional.id`` is
``<prefix>-<scope>-<partition id>``: the scope is the streaming query's id (kept in its
checkpoint, so it survives restarts) or, for a batch write, an id drawn once per job on the driver.
No attempt number goes in, so a retried or speculative attempt of the same task calls
``init_transactions()`` with the same id: the coordinator aborts whatever the earlier attempt left
open and fences it (its later produce/commit fail).

That alone leaves one gap: an attempt whose transaction *committed* but whose task still failed
(lost before Spark heard of it), or a micro-batch Spark replays after a driver restart. So every
transaction also writes a marker to a compacted control topic, key ``<scope>:<partition id>``,
value the batch id (``0`` for a batch job). After ``init_transactions()`` (which waits until the
id's previous transaction is finished, markers written) the task reads that key's last committed
marker and skips the batch when its id is already there. Keys stay one per (scope, partition), so
compaction keeps the topic at one record per task slot rather than one per micro-batch.

The marker is read with the consumer foundation's read_committed range read
(`kafkawire.range_reader.fetch_range`), which applies the COMMIT/ABORT control markers per producer.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from ..base.config import CONNECTION_OPTIONS, option_index
from ..client.network_client import Client
from ..core.kafka_error import KafkaError, KafkaException
from ..range_reader import EARLIEST, FetchSettings, fetch_range, list_offsets, partitions_for

DEFAULT_CONTROL_TOPIC = "kafkawire-spark-commits"
WAIT = 30.0


def transactional_id(prefix: str, scope: str, partition_id: int) -> str:
    """The task's transactional id: stable across its attempts, distinct per task slot."""
    return f"{prefix}-{scope}-{partition_id}"


def marker_key(scope: str, partition_id: int) -> str:
    return f"{scope}:{partition_id}"


def marker_value(batch_id: int, rows: int, attempt: int) -> bytes:
    return json.dumps({"batch": batch_id, "rows": rows, "attempt": attempt}, separators=(",", ":")).encode()


def marker_partition(key: str, partitions: int) -> int:
    """Where a key's markers live: a fixed partition per key (CRC-32 of the key, as any stable hash)."""
    return zlib.crc32(key.encode()) % max(1, partitions)


def ensure_control_topic(params: Mapping[str, str], topic: str, timeout: float = WAIT) -> None:
    """Create the compacted control topic when it is missing (driver side, once per write)."""
    from ..admin import NewTopic, create_topic_if_missing

    new = NewTopic(topic, 1, -1, config={"cleanup.policy": "compact"})
    create_topic_if_missing(_connection_params(params), new, timeout)


def _connection_params(params: Mapping[str, str]) -> dict[str, str]:
    """The connection part of a producer config (bootstrap, security, timeouts): what the admin
    client and the marker reader take. Producer-only options (acks, linger.ms, ...) stay out."""
    known = option_index(CONNECTION_OPTIONS)
    return {k: v for k, v in params.items() if k in known}


@dataclass(frozen=True)
class MarkerLookup:
    partition: int  # the control topic partition holding this key
    batch_id: int | None  # the last committed marker's batch id, None when there is none


def committed_marker(params: Mapping[str, str], topic: str, key: str, timeout: float = WAIT) -> MarkerLookup:
    """The last committed marker of ``key`` in the control topic, read with read_committed."""
    wanted = key.encode()
    with Client(_connection_params(params)) as client:
        partitions = partitions_for(client, [topic], timeout).get(topic)
        if not partitions:
            raise KafkaException(
                KafkaError(KafkaError._UNKNOWN_TOPIC, f"exactly-once control topic {topic!r} is not available")
            )
        partition = marker_partition(key, len(partitions))
        tp = (topic, partition)
        start = list_offsets(client, {tp: EARLIEST}, timeout=timeout)[tp].offset
        # Other tasks' transactions may be open here; only this key's (finished) ones matter.
        settings = FetchSettings(read_committed=True, timeout=timeout, wait_for_open_transactions=False)
        last: int | None = None
        for _batch, records in fetch_range(client, topic, partition, start, None, settings):
            for record in records:
                if record.key == wanted:
                    last = _batch_id(record.value)
        return MarkerLookup(partition, last)


def _batch_id(value: bytes | None) -> int:
    try:
        return int(json.loads(value or b"{}")["batch"])
    except (ValueError, KeyError, TypeError):
        return -1
