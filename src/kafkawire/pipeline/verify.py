"""The broker's side of a run, through kafkawire's own clients: create the topic, take each
partition's end offset before and after the write, and read back what the run appended.

End offsets come from Fetch's ``high_watermark`` (fetching at the offset ListOffsets "latest"
answers): Tansu's ListOffsets answers the last batch's base offset + 1 instead of the log end, its
Fetch high watermark is right, and on Kafka both agree.

The read-back counts the data records between the two end offsets and applies transaction markers
itself, as a read_committed consumer would: a transactional producer's records are held until its
COMMIT (counted) or ABORT (dropped) marker. Kafka writes markers just after EndTxn answers, so
while a transaction is still open at the end it keeps fetching for ``marker_wait`` seconds.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kafkawire.admin import AdminClient, NewTopic
from kafkawire.errors import KafkaError, KafkaException
from kafkawire.io.client import Client
from kafkawire.protocol.apis import FETCH, LIST_OFFSETS
from kafkawire.records import decode_batches, decode_transaction_marker

_FETCH_BYTES = 8 << 20
_LATEST = -1


@dataclass
class ReadBack:
    """What the broker holds from the run: committed data records per partition, and their bytes."""

    records: Counter[int] = field(default_factory=Counter)
    key_bytes: int = 0
    value_bytes: int = 0
    aborted: int = 0  # records of aborted transactions (a failed task attempt's, under --exactly-once)
    open_transactions: int = 0  # records still waiting for a marker when the read-back gave up

    @property
    def total(self) -> int:
        return sum(self.records.values())


def ensure_topic(bootstrap: str, topic: str, partitions: int, replication_factor: int, timeout: float) -> bool:
    """Create ``topic`` with kafkawire's AdminClient; True if created, False if it already existed."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kafkawire-pipeline",
                         "socket.timeout.ms": int(timeout * 1000)})  # fmt: skip
    try:
        new = NewTopic(topic, partitions, replication_factor)
        admin.create_topics([new], request_timeout=timeout)[topic].result(timeout + 5)
        return True
    except KafkaException as exc:
        error = exc.args[0]
        if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        raise
    finally:
        admin.close()


def connect(bootstrap: str, topic: str, timeout: float) -> Client:
    client = Client({"bootstrap.servers": bootstrap, "client.id": "kafkawire-pipeline",
                     "socket.timeout.ms": int(timeout * 1000)})  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while True:
            client.refresh_metadata([topic]).result(timeout)
            info = client.metadata.topics.get(topic)
            if info is not None and info.partitions and all(
                client.metadata.leader_for(topic, p) is not None for p in info.partitions
            ):
                return client
            if time.monotonic() >= deadline:
                raise KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART, f"topic {topic!r} has no leaders"))
            time.sleep(0.1)
    except BaseException:
        client.close()
        raise


def _by_leader(client: Client, topic: str, partitions: list[int]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for p in partitions:
        leader = client.metadata.leader_for(topic, p)
        if leader is None:
            raise KafkaException(KafkaError(KafkaError.LEADER_NOT_AVAILABLE, f"{topic}[{p}] has no leader"))
        groups.setdefault(leader.node_id, []).append(p)
    return groups


def _check(code: int, what: str) -> None:
    if code:
        raise KafkaException(KafkaError(code, what))


def _fetch(client: Client, topic: str, node: int, offsets: dict[int, int], max_bytes: int, timeout: float) -> Any:
    info = client.metadata.topics[topic]
    body = {
        "max_wait_ms": 100,
        "min_bytes": 1,  # Tansu answers no topics at all to min_bytes 0
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "topics": [{
            "topic": topic,
            "topic_id": info.topic_id,
            "partitions": [{"partition": p, "fetch_offset": o, "partition_max_bytes": max_bytes} for p, o in offsets.items()],
        }],
    }  # fmt: skip
    response = client.request(FETCH, body, node=node).result(timeout)
    _check(response.error_code or 0, f"fetching {topic}")
    return [part for answer in response.responses for part in answer.partitions]


def end_offsets(client: Client, topic: str, timeout: float) -> dict[int, int]:
    """Each partition's log end offset (high watermark)."""
    partitions = sorted(client.metadata.topics[topic].partitions)
    ends: dict[int, int] = {}
    for node, group in _by_leader(client, topic, partitions).items():
        body = {"replica_id": -1, "isolation_level": 0,
                "topics": [{"name": topic, "partitions": [{"partition_index": p, "timestamp": _LATEST} for p in group]}]}  # fmt: skip
        response = client.request(LIST_OFFSETS, body, node=node).result(timeout)
        latest = {}
        for answer in response.topics:
            for part in answer.partitions:
                _check(part.error_code, f"ListOffsets {topic}[{part.partition_index}]")
                latest[part.partition_index] = max(0, part.offset)
        for part in _fetch(client, topic, node, latest, 1, timeout):
            _check(part.error_code, f"fetching {topic}[{part.partition_index}]")
            ends[part.partition_index] = part.high_watermark
    return ends


def read_back(
    client: Client, topic: str, start: dict[int, int], timeout: float, marker_wait: float = 10.0
) -> ReadBack:
    """Count the committed data records from ``start`` to the end of each partition (see the module doc)."""
    result = ReadBack()
    position = dict(start)
    ends = end_offsets(client, topic, timeout)
    pending: dict[tuple[int, int], list[int]] = {}  # (partition, producer id) -> [records, key bytes, value bytes]
    give_up = None
    stalled = 0
    while True:
        todo = {p: o for p, o in position.items() if o < ends.get(p, 0)}
        if stalled > 50:  # fifty fetches in a row without progress: about five seconds
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"read-back of {topic} stalled at {todo}"))
        if not todo:
            if not pending:
                break
            now = time.monotonic()
            give_up = give_up or now + marker_wait
            if now >= give_up:
                break
            time.sleep(0.1)
            ends = end_offsets(client, topic, timeout)
            continue
        before = dict(position)
        for node, group in _by_leader(client, topic, sorted(todo)).items():
            for part in _fetch(client, topic, node, {p: todo[p] for p in group}, _FETCH_BYTES, timeout):
                p = part.partition_index
                _check(part.error_code, f"fetching {topic}[{p}]")
                for batch in decode_batches(part.records or b""):
                    if batch.next_offset <= position[p]:
                        continue
                    records = [r for r in batch.records if r.offset >= position[p]]
                    position[p] = batch.next_offset
                    if batch.is_control:
                        held = pending.pop((p, batch.producer_id), None)
                        if held is None or not records:
                            continue
                        if decode_transaction_marker(records[0]).commit:
                            result.records[p] += held[0]
                            result.key_bytes += held[1]
                            result.value_bytes += held[2]
                        else:
                            result.aborted += held[0]
                        continue
                    keys = sum(len(r.key) for r in records if r.key is not None)
                    values = sum(len(r.value) for r in records if r.value is not None)
                    if batch.is_transactional:
                        held = pending.setdefault((p, batch.producer_id), [0, 0, 0])
                        held[0] += len(records)
                        held[1] += keys
                        held[2] += values
                    else:
                        result.records[p] += len(records)
                        result.key_bytes += keys
                        result.value_bytes += values
        stalled = stalled + 1 if position == before else 0
    result.open_transactions = sum(held[0] for held in pending.values())
    return result
