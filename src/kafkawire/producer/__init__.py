"""The producer: faces over one engine (`Producer`, `SyncProducer`, `AIOProducer`)."""

from ..base.model import ConsumerGroupMetadata
from .aio import AIOProducer
from .interceptors import ProducerRecord
from .producer import Producer
from .sync import SyncProducer

__all__ = ["AIOProducer", "ConsumerGroupMetadata", "Producer", "ProducerRecord", "SyncProducer"]
