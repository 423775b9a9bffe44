"""Produce, Fetch and ListOffsets: the partition logs as a leader (or a follower) serves them."""

from __future__ import annotations

from typing import Any

from kafkawire.protocol import error_codes as E
from kafkawire.protocol.schema import ZERO_UUID

from .fetch_sessions import PartitionKey, changed
from .log import split_batches
from .state import Partition
from .world import Answer, Handler, Parked, Request, World

READ_COMMITTED = 1
LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
VALID_ACKS = (-1, 0, 1)


def produce(world: World, req: Request) -> Answer:
    body = req.body
    state = world.state
    if body.transactional_id is not None and body.transactional_id not in world.transactions.by_id:
        error_all: int | None = E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    else:
        error_all = None if body.acks in VALID_ACKS else E.INVALID_REQUIRED_ACKS
    responses = []
    for t in body.topic_data:
        topic = state.topic(t.name, t.topic_id)
        answers = []
        for p in t.partition_data:
            answer = {"index": p.index, "base_offset": -1, "log_start_offset": -1}
            partition = topic.partitions[p.index] if topic and 0 <= p.index < len(topic.partitions) else None
            if error_all is not None:
                answer["error_code"] = error_all
            elif partition is None:
                answer["error_code"] = E.UNKNOWN_TOPIC_OR_PARTITION
            elif partition.leader != req.broker_id:
                answer["error_code"] = E.NOT_LEADER_OR_FOLLOWER
            else:
                error, base = _append(world, partition, (topic.name if topic else ""), p.records)
                answer.update(error_code=error, base_offset=base, log_start_offset=partition.log.log_start)
            answers.append(answer)
        responses.append({"name": t.name, "topic_id": t.topic_id, "partition_responses": answers})
    if body.acks == 0:
        return None  # Kafka sends nothing back to acks=0
    return {"responses": responses}


def _append(world: World, partition: Partition, topic: str, records: Any) -> tuple[int, int]:
    if records is None:
        return E.CORRUPT_MESSAGE, -1
    batches, error = split_batches(records)
    if error:
        return error, -1
    log = partition.log
    for _, info in batches:
        error, duplicate = log.check_producer(info)
        if error:
            return error, -1
        if duplicate is not None:
            return E.NONE, duplicate
        if info.transactional:
            txn = world.transactions.owner_of(info.producer_id)
            if txn is None or (topic, partition.index) not in txn.partitions:
                return E.INVALID_TXN_STATE, -1
    bases = [log.append(batch, info) for batch, info in batches]
    return E.NONE, bases[0]


def fetch(world: World, req: Request) -> Answer:
    body = req.body
    state = world.state
    entries: dict[PartitionKey, dict[str, Any]] = {}
    for t in body.topics:
        topic = state.topic(t.topic, t.topic_id)
        name = topic.name if topic else (t.topic or str(t.topic_id))
        for p in t.partitions:
            entries[(name, p.partition)] = {
                "fetch_offset": p.fetch_offset,
                "max_bytes": p.partition_max_bytes,
                "topic_id": t.topic_id,
            }
    forgotten = []
    for t in body.forgotten_topics_data:
        topic = state.topic(t.topic, t.topic_id)
        forgotten += [(topic.name if topic else (t.topic or str(t.topic_id)), p) for p in t.partitions]
    error, session, wanted = world.sessions.open(body.session_id, body.session_epoch, entries, forgotten)
    if error:
        return {"error_code": error, "session_id": 0}
    session_id = session.session_id if session else 0

    def answer(now_ms: int, expired: bool) -> dict[str, Any] | None:
        budget = body.max_bytes
        topics: dict[str, list[dict[str, Any]]] = {}
        found = 0
        for (name, index), entry in wanted.items():
            part = _read_partition(world, req, name, index, entry, budget)
            found += len(part.get("records") or b"")
            budget -= len(part.get("records") or b"")
            if changed(session, (name, index), part, (name, index) in entries):
                topics.setdefault(name, []).append(part)
        if not found and not expired and body.min_bytes > 0:
            return None
        return {
            "session_id": session_id,
            "responses": [
                {"topic": name, "topic_id": _topic_id(world, name), "partitions": parts}
                for name, parts in topics.items()
            ],
        }

    first = answer(req.now_ms, body.max_wait_ms <= 0)
    if first is not None:
        return first
    return Parked(answer, req.now_ms + body.max_wait_ms)


def _topic_id(world: World, name: str) -> Any:
    topic = world.state.topics.get(name)
    return topic.topic_id if topic else ZERO_UUID


def _read_partition(
    world: World, req: Request, name: str, index: int, entry: dict[str, Any], budget: int
) -> dict[str, Any]:
    out: dict[str, Any] = {"partition_index": index, "error_code": E.NONE, "high_watermark": -1, "records": b""}
    partition = world.state.partition(name, index)
    if partition is None:
        out["error_code"] = E.UNKNOWN_TOPIC_ID if req.version >= 13 else E.UNKNOWN_TOPIC_OR_PARTITION
        return out
    if not partition.serves(req.broker_id):
        out["error_code"] = E.NOT_LEADER_OR_FOLLOWER
        return out
    log = partition.log
    start, high = log.log_start, log.end
    if req.broker_id != partition.leader and partition.follower_wmarks is not None:
        start, high = partition.follower_wmarks
    stable = min(log.last_stable, high)
    out.update(high_watermark=high, last_stable_offset=stable, log_start_offset=start)
    offset = entry["fetch_offset"]
    if offset < start or offset > high:
        out["error_code"] = E.OFFSET_OUT_OF_RANGE
        return out
    if req.version >= 11 and partition.follower != -1 and req.broker_id == partition.leader and req.body.rack_id:
        out["preferred_read_replica"] = partition.follower
        return out
    committed = req.body.isolation_level == READ_COMMITTED
    limit = stable if committed else high
    data = log.read(offset, min(entry["max_bytes"], max(budget, 0)), limit) if offset < limit else b""
    out["records"] = data
    if committed:
        out["aborted_transactions"] = [
            {"producer_id": pid, "first_offset": first} for pid, first in log.aborted_between(offset, limit)
        ]
    return out


def list_offsets(world: World, req: Request) -> dict[str, Any]:
    committed = req.body.isolation_level == READ_COMMITTED
    topics = []
    for t in req.body.topics:
        parts = []
        for p in t.partitions:
            partition = world.state.partition(t.name, p.partition_index)
            entry: dict[str, Any] = {"partition_index": p.partition_index, "error_code": E.NONE}
            if partition is None:
                entry["error_code"] = E.UNKNOWN_TOPIC_OR_PARTITION
            elif partition.leader != req.broker_id:
                entry["error_code"] = E.NOT_LEADER_OR_FOLLOWER
            else:
                log = partition.log
                if p.timestamp == LATEST:
                    offset, stamp = (log.last_stable if committed else log.end), -1
                elif p.timestamp == EARLIEST:
                    offset, stamp = log.log_start, -1
                elif p.timestamp == MAX_TIMESTAMP:
                    offset, stamp = log.max_timestamp()
                else:
                    offset, stamp = log.offset_for_time(p.timestamp)
                entry.update(offset=offset, timestamp=stamp, leader_epoch=log.leader_epoch)
            parts.append(entry)
        topics.append({"name": t.name, "partitions": parts})
    return {"topics": topics}


def delete_records(world: World, req: Request) -> dict[str, Any]:
    topics = []
    for t in req.body.topics:
        parts = []
        for p in t.partitions:
            partition = world.state.partition(t.name, p.partition_index)
            entry: dict[str, Any] = {"partition_index": p.partition_index, "low_watermark": -1, "error_code": E.NONE}
            if partition is None:
                entry["error_code"] = E.UNKNOWN_TOPIC_OR_PARTITION
            elif partition.leader != req.broker_id:
                entry["error_code"] = E.NOT_LEADER_OR_FOLLOWER
            elif p.offset > partition.log.end:
                entry["error_code"] = E.OFFSET_OUT_OF_RANGE
            else:
                partition.log.delete_before(partition.log.end if p.offset == LATEST else p.offset)
                entry["low_watermark"] = partition.log.log_start
            parts.append(entry)
        topics.append({"name": t.name, "partitions": parts})
    return {"topics": topics}


HANDLERS: dict[int, tuple[Handler, int, int]] = {
    0: (produce, 3, 12),
    1: (fetch, 4, 16),
    2: (list_offsets, 1, 9),
    21: (delete_records, 0, 2),
}
