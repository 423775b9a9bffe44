"""The producer: faces over one engine (`Producer`, `SyncProducer`, `AIOProducer`)."""

from typing import TYPE_CHECKING

from .._lazy_names import lazy_names

if TYPE_CHECKING:
    from ..base.model import ConsumerGroupMetadata
    from .aio import AIOProducer
    from .producer import Producer
    from .producer_record import ProducerRecord
    from .sync import SyncProducer

# (lazy: `Producer` alone does not import asyncio for `AIOProducer`)
__getattr__, __dir__ = lazy_names(
    __name__,
    globals(),
    {
        "..base.model": "ConsumerGroupMetadata",
        ".aio": "AIOProducer",
        ".producer_record": "ProducerRecord",
        ".producer": "Producer",
        ".sync": "SyncProducer",
    },
)

__all__ = ["AIOProducer", "ConsumerGroupMetadata", "Producer", "ProducerRecord", "SyncProducer"]
