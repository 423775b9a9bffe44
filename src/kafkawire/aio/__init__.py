"""confluent-kafka's asyncio module path: ``from kafkawire.aio import AIOProducer, AIOConsumer`` as
``from confluent_kafka.aio import AIOProducer, AIOConsumer``."""

from ..producer.aio import AIOProducer
from ._AIOConsumer import AIOConsumer

__all__ = ["AIOConsumer", "AIOProducer"]
