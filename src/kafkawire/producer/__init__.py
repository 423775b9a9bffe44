"""The producer: faces over one engine (`Producer`, `SyncProducer`, `AIOProducer`)."""

from .aio import AIOProducer
from .interceptors import ProducerRecord
from .producer import ConsumerGroupMetadata, Producer, SyncProducer

__all__ = ["AIOProducer", "ConsumerGroupMetadata", "Producer", "ProducerRecord", "SyncProducer"]
