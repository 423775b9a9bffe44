"""The broker's side of a run, through kafkawire's own clients: create the topic, take each
partition's end offset before and after the write, and read back what the run appended.

End offsets are the high watermarks Fetch reports (`consumer.high_watermarks`). The read-back is
the consumer foundation's read_committed range read (`consumer.fetch_range`) from the offsets
before the run to the log end: records of aborted attempts (under --exactly-once) are not counted,
and an open transaction is waited for until its marker.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from kafkawire.admin import NewTopic, create_topic_if_missing
from kafkawire.consumer import FetchSettings, fetch_range, high_watermarks
from kafkawire.errors import KafkaError, KafkaException
from kafkawire.io.client import Client


@dataclass
class ReadBack:
    """What the broker holds from the run: committed data records per partition, and their bytes."""

    records: Counter[int] = field(default_factory=Counter)
    key_bytes: int = 0
    value_bytes: int = 0

    @property
    def total(self) -> int:
        return sum(self.records.values())


def ensure_topic(bootstrap: str, topic: str, partitions: int, replication_factor: int, timeout: float) -> bool:
    """Create ``topic`` with kafkawire's AdminClient; True if created, False if it already existed."""
    conf = {"bootstrap.servers": bootstrap, "client.id": "kafkawire-pipeline", "socket.timeout.ms": int(timeout * 1000)}
    return create_topic_if_missing(conf, NewTopic(topic, partitions, replication_factor), timeout)


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
