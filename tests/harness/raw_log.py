"""A partition's raw log, decoded by kafka-python (an independent decoder), and its committed view.

Neither Tansu nor the mock hides aborted transactions from read_committed consumers, but both
write COMMIT/ABORT control markers: so transactions are judged here, from the raw batches and the
markers, the way a read_committed consumer is specified to see them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka.record import MemoryRecords

from kafkawire.client.network_client import Client
from kafkawire.protocol.apis import FETCH

WAIT = 30.0


@dataclass(frozen=True)
class LogBatch:
    base_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    control: bool
    commit: bool  # for a control batch: COMMIT (True) or ABORT (False)
    values: list[bytes]


def raw_log(bootstrap: str, topic: str, partition: int = 0) -> list[LogBatch]:
    """Every batch of a partition, fetched as bytes and decoded by kafka-python (not by us)."""
    batches: list[LogBatch] = []
    with Client({"bootstrap.servers": bootstrap}) as client:
        info = client.refresh_metadata([topic]).result(WAIT).topics[topic]
        leader = client.metadata.leader_for(topic, partition)
        assert leader is not None
        offset = 0
        while True:
            body = {
                # Tansu answers min_bytes 0 with no topics at all: ask for 1 byte, wait at most 100 ms.
                "max_wait_ms": 100,
                "min_bytes": 1,
                "isolation_level": 0,  # read_uncommitted: everything, markers included
                "topics": [
                    {
                        "topic": topic,
                        "topic_id": info.topic_id,
                        "partitions": [
                            {"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                        ],
                    }
                ],
            }
            responses = client.request(FETCH, body, node=leader.node_id).result(WAIT).responses
            if not responses or not responses[0].partitions:
                return batches  # Tansu answers a fetch at the end of the log with no partitions
            data = responses[0].partitions[0]
            assert data.error_code == 0, f"fetch error {data.error_code}"
            records = MemoryRecords(bytes(data.records or b""))
            fetched = 0
            while records.has_next():
                batch = records.next_batch()
                if batch is None:
                    break
                entries = list(batch)
                control = bool(batch.is_control_batch)
                batches.append(
                    LogBatch(
                        batch.base_offset,
                        batch.producer_id,
                        batch.producer_epoch,
                        batch.base_sequence,
                        bool(batch.is_transactional),
                        control,
                        control and bool(entries) and bool(entries[0].commit),
                        [] if control else [bytes(r.value) for r in entries if r.value is not None],
                    )
                )
                offset = batch.base_offset + batch.last_offset_delta + 1
                fetched += 1
            if not fetched:
                return batches


def committed_view(batches: list[LogBatch]) -> list[bytes]:
    """What read_committed must show: plain data, and transactional data whose producer's next
    marker is COMMIT (data still open at the end of the log is not shown)."""
    shown: list[bytes] = []
    open_txn: dict[int, list[bytes]] = {}
    for b in batches:
        if b.control:
            pending = open_txn.pop(b.producer_id, [])
            if b.commit:
                shown += pending
        elif b.transactional:
            open_txn.setdefault(b.producer_id, []).extend(b.values)
        else:
            shown += b.values
    return shown
