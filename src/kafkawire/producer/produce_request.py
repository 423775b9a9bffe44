"""The Produce request's shape: its body at a version, and the versions the producer may use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple
from uuid import UUID

from .. import records
from ..core.accumulator import ProducerBatch
from .batch_stats import BatchStats

# Produce v3 carries RecordBatch v2 (Kafka 0.11). Below it, as librdkafka picks its MsgVersion:
# v2 carries a magic 1 MessageSet (timestamps), v0-v1 magic 0; headers, producer id and sequences
# have no place there and are left out, zstd is sent uncompressed. (A broker that old has no
# InitProducerId either: an idempotent producer fails before it sends.)
RECORD_BATCH_PRODUCE_VERSION = 3
TIMESTAMPED_PRODUCE_VERSION = 2
TOPIC_NAMES_MAX_PRODUCE_VERSION = 12  # v13+ names topics by id only
TRANSACTIONAL_MAX_PRODUCE_VERSION = 11  # v12+ belongs to KIP-890's transaction v2


class SenderSettings(NamedTuple):
    """(A named tuple: made once per producer; the frozen dataclass cost ~1 ms of every start-up.)"""

    acks: int
    request_timeout: float
    message_timeout: float
    retries: int
    retry_backoff_ms: int
    retry_backoff_max_ms: int
    max_in_flight: int
    max_request_bytes: int
    unsent_limit: int = 1  # queue.buffering.backpressure.threshold
    auto_create_topics: bool = True  # allow.auto.create.topics
    gapless: bool = False  # enable.gapless.guarantee (with idempotence)
    topic_propagation: float = 0.0  # topic.metadata.propagation.max.ms, in seconds


def max_produce_version(transactional: bool, ids_known: bool) -> int | None:
    """Stay below v13 unless every topic id is known; inside transactions stay at v11."""
    if transactional:
        return TRANSACTIONAL_MAX_PRODUCE_VERSION
    return None if ids_known else TOPIC_NAMES_MAX_PRODUCE_VERSION


def produce_body(
    topics: dict[str, list[ProducerBatch]],
    topic_ids: dict[str, UUID],
    transactional_id: str | None,
    settings: SenderSettings,
    node: int = -1,
    stats: BatchStats | None = None,
) -> Callable[[int], dict[str, Any]]:
    """The request body as a function of the version the connection negotiates: made when the
    request goes on the wire to ``node``, which is when statistics count its batches."""

    def body(version: int) -> dict[str, Any]:
        legacy = version < RECORD_BATCH_PRODUCE_VERSION
        if stats is not None:
            stats.framed(node, topics)
        topic_data = []
        for topic, batches in topics.items():
            partition_data = []  # (a loop: a comprehension is a call of its own)
            for b in batches:
                partition_data.append(
                    {"index": b.partition, "records": message_set(b.payload, version) if legacy else b.payload}
                )
            entry: dict[str, Any] = {"name": topic, "partition_data": partition_data}
            if topic in topic_ids:
                entry["topic_id"] = topic_ids[topic]
            topic_data.append(entry)
        return {
            "transactional_id": transactional_id,
            "acks": settings.acks,
            "timeout_ms": int(settings.request_timeout * 1000),
            "topic_data": topic_data,
        }

    return body


def message_set(payload: bytes | bytearray | None, version: int) -> bytes:
    """A batch built as RecordBatch v2, rewritten as the MessageSet a Produce ``version`` below 3
    carries (legacy brokers only: the batch is decoded again each time it is sent)."""
    assert payload is not None, "a batch is built before its request is framed"
    batches = records.decode_batches(payload)  # (records' decoders load here, not with the producer)
    codec = batches[0].compression
    rows = [(r.timestamp, r.key, r.value) for batch in batches for r in batch.records]
    magic = 1 if version >= TIMESTAMPED_PRODUCE_VERSION else 0
    return records.encode_message_set(magic, rows, records.NONE if codec == records.ZSTD else codec)
