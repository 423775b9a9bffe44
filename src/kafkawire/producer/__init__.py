"""The producer: faces over one engine (`Producer`, `SyncProducer`, `AIOProducer`)."""

from .aio import AIOProducer
from .interceptors import ProducerRecord
from .producer import Producer, SyncProducer

__all__ = ["AIOProducer", "Producer", "ProducerRecord", "SyncProducer"]
