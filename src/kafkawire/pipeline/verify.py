"""The broker's side of a run, through kafkawire's own clients: create the topic, take each
partition's end offset before and after the write, and read back what the run appended.

End offsets are the high watermarks Fetch reports (`consumer.high_watermarks`). The read-back is
the consumer foundation's read_committed range read (`consumer.fetch_range`) from the offsets
before the run to the log end: records of aborted attempts (under --exactly-once) are not counted,
and an open transaction is waited for until its marker.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from kafkawire.admin import NewTopic, create_topic_if_missing
from kafkawire.client.network_client import Client
from kafkawire.range_reader import FetchSettings, fetch_range, high_watermarks, partitions_for


@dataclass
class ReadBack:
    """What the broker holds from the run: committed data records per partition, and their bytes."""

    records: Counter[int] = field(default_factory=Counter)
    key_bytes: int = 0
    value_bytes: int = 0
    decoded: int = 0  # values the decoder read (with a Schema Registry)

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


def registry_decoder(url: str, topic: str) -> Callable[[bytes], object]:
    """The registry's AvroDeserializer for ``topic``'s values: a value it cannot read raises."""
    from kafkawire.schema_registry import SchemaRegistryClient
    from kafkawire.schema_registry.avro import AvroDeserializer
    from kafkawire.serialization import MessageField, SerializationContext

    deserializer = AvroDeserializer(SchemaRegistryClient({"url": url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    return lambda value: deserializer(value, ctx)


def read_back(
    client: Client, topic: str, start: dict[int, int], timeout: float, decode: Callable[[bytes], object] | None = None
) -> ReadBack:
    """Count the committed data records from ``start`` to the end of each partition (see the module
    doc); with ``decode``, each value is decoded too (a failure names its partition and offset)."""
    result = ReadBack()
    settings = FetchSettings(read_committed=True, timeout=timeout)
    for partition, offset in sorted(start.items()):
        for _batch, records in fetch_range(client, topic, partition, offset, None, settings):
            result.records[partition] += len(records)
            result.key_bytes += sum(len(r.key) for r in records if r.key is not None)
            result.value_bytes += sum(len(r.value) for r in records if r.value is not None)
            if decode is not None:
                for r in records:
                    if r.value is not None:
                        try:
                            decode(r.value)
                        except Exception as e:
                            raise ValueError(f"{topic} [{partition}] offset {r.offset}: {e}") from e
                        result.decoded += 1
    return result
