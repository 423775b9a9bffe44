"""The broker's side of a run, through kafkawire's own clients: create the topic, take each
partition's end offset before and after the write, and read back what the run appended.

End offsets are the high watermarks Fetch reports (`consumer.high_watermarks`). The read-back is
the consumer foundation's read_committed range read (`consumer.fetch_range`) from the offsets
before the run to the log end: records of aborted attempts (under --exactly-once) are not counted,
and an open transaction is waited for until its marker.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kafkawire.admin import NewTopic, create_topic_if_missing
from kafkawire.client.cluster import Client
from kafkawire.consumer import FetchSettings, fetch_range, high_watermarks, partitions_for


@dataclass
class ReadBack:
    """What the broker holds from the run: committed data records per partition, and their bytes."""

    records: Counter[int] = field(default_factory=Counter)
    key_bytes: int = 0
    value_bytes: int = 0

    @property
    def total(self) -> int:
        return sum(self.records.values())


def _conf(bootstrap: str, timeout: float) -> dict[str, object]:
    return {"bootstrap.servers": bootstrap, "client.id": "kafkawire-pipeline", "socket.timeout.ms": int(timeout * 1000)}


def ensure_topic(bootstrap: str, topic: str, partitions: int, replication_factor: int, timeout: float) -> bool:
    """Create ``topic`` with kafkawire's AdminClient; True if created, False if it already existed."""
    return create_topic_if_missing(_conf(bootstrap, timeout), NewTopic(topic, partitions, replication_factor), timeout)


def connect(bootstrap: str, topic: str, timeout: float) -> Client:
    """A client that knows ``topic``'s partitions (offset lookups and fetches wait out leaders)."""
    client = Client(_conf(bootstrap, timeout))
    try:
        partitions_for(client, [topic], timeout)
    except BaseException:
        client.close()
        raise
    return client


def end_offsets(client: Client, topic: str, timeout: float) -> dict[int, int]:
    """Each partition's log end offset (high watermark)."""
    return high_watermarks(client, topic, client.metadata.topics[topic].partitions, timeout)


def read_back(client: Client, topic: str, start: dict[int, int], timeout: float) -> ReadBack:
    """Count the committed data records from ``start`` to the end of each partition (see the module doc)."""
    result = ReadBack()
    settings = FetchSettings(read_committed=True, timeout=timeout)
    for partition, offset in sorted(start.items()):
        for _batch, records in fetch_range(client, topic, partition, offset, None, settings):
            result.records[partition] += len(records)
            result.key_bytes += sum(len(r.key) for r in records if r.key is not None)
            result.value_bytes += sum(len(r.value) for r in records if r.value is not None)
    return result
