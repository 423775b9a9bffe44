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

from kafkawire.admin import AdminClient, ConfigResource, NewTopic, create_topic_if_missing
from kafkawire.client.cluster import Client
from kafkawire.consumer import FetchSettings, fetch_range, high_watermarks, partitions_for
from kafkawire.errors import KafkaError, KafkaException


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
    """Create ``topic`` with kafkawire's AdminClient; True if created, False if it already existed.

    ``replication_factor`` -1 asks the broker for its default, which brokers before 2.4 (CreateTopics
    before v4, KIP-464) refuse as INVALID_REPLICATION_FACTOR: then the broker's
    ``default.replication.factor`` is read and asked for explicitly, as that broker would have applied it.
    """
    conf = _conf(bootstrap, timeout)
    try:
        return create_topic_if_missing(conf, NewTopic(topic, partitions, replication_factor), timeout)
    except KafkaException as exc:
        error = exc.args[0]
        if replication_factor != -1 or not isinstance(error, KafkaError) or error.code() != KafkaError.INVALID_REPLICATION_FACTOR:
            raise
    replication = _default_replication_factor(conf, timeout)
    return create_topic_if_missing(conf, NewTopic(topic, partitions, replication), timeout)


def _default_replication_factor(conf: dict[str, object], timeout: float) -> int:
    with AdminClient(dict(conf)) as admin:
        broker = min(admin.list_topics(timeout=timeout).brokers)
        resource = ConfigResource(ConfigResource.Type.BROKER, str(broker))
        entries = admin.describe_configs([resource], request_timeout=timeout)[resource].result(timeout)
    return int(entries["default.replication.factor"].value or "1")  # unset: Kafka's own default, 1


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
