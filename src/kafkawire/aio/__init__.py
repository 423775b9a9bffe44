"""confluent-kafka's asyncio module path: ``from kafkawire.aio import AIOProducer`` as
``from confluent_kafka.aio import AIOProducer``."""

from ..producer.aio import AIOProducer

__all__ = ["AIOProducer"]
