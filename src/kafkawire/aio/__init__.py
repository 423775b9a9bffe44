"""confluent-kafka's asyncio module path: ``from kafkawire.aio import AIOProducer, AIOConsumer`` as
``from confluent_kafka.aio import AIOProducer, AIOConsumer``, and the serializing faces over them,
``AsyncSerializingProducer`` and ``AsyncDeserializingConsumer`` (made with ``await``)."""

from ..producer.aio import AIOProducer
from ._AIOConsumer import AIOConsumer
from ._AsyncDeserializingConsumer import AsyncDeserializingConsumer
from ._AsyncSerializingProducer import AsyncSerializingProducer

__all__ = ["AIOConsumer", "AIOProducer", "AsyncDeserializingConsumer", "AsyncSerializingProducer"]
