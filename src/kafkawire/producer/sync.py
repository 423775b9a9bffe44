"""`SyncProducer`: the blocking face (the seeds' KafkaSyncProducer) over `Producer.send`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.model import ClusterMetadata
from ..base.record_metadata import RecordMetadata
from .producer import Producer

if TYPE_CHECKING:
    from .producer_record import ProducerRecord


class SyncProducer:
    """Blocking producer: ``send()`` returns the record's metadata or raises `KafkaException`; it
    takes a topic and the record's fields, or a `ProducerRecord` (the C++ client's ``send(record)``,
    its ``id`` echoed as the metadata's ``record_id``)."""

    def __init__(self, config: Mapping[str, Any], **kwargs: Any) -> None:
        conf = dict(config)
        conf.setdefault("linger.ms", 0)  # nothing else will join a batch while we wait for it
        self._producer = Producer(conf, **kwargs)

    def send(
        self,
        topic: str | ProducerRecord,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        timestamp: int = 0,
        headers: Any = None,
        timeout: float | None = None,
    ) -> RecordMetadata:
        fut = self._producer.send(topic, value, key, partition, timestamp, headers)
        return fut.result(timeout)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        return self._producer.list_topics(topic, timeout)

    def close(self, timeout: float = -1) -> None:
        self._producer.close(timeout)

    def __enter__(self) -> SyncProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
