"""The client errors that carry a cause (confluent_kafka.error's API).

Serializing clients raise these: a `KafkaError` code saying what failed (for example
``_VALUE_SERIALIZATION``) plus the exception that caused it and, when consuming, the message.
"""

from __future__ import annotations

from typing import Any

from .base.model import Message
from .core.kafka_error import KafkaError, KafkaException
from .serialization import SerializationError

__all__ = [
    "ConsumeError",
    "KafkaError",
    "KafkaException",
    "KeyDeserializationError",
    "KeySerializationError",
    "Message",
    "ProduceError",
    "ValueDeserializationError",
    "ValueSerializationError",
]


class _KafkaClientError(KafkaException):
    """A `KafkaError` plus its cause (``exception``) and the message concerned (``kafka_message``)."""

    def __init__(self, kafka_error: KafkaError, exception: BaseException | None = None, kafka_message: Any = None):
        super().__init__(kafka_error)
        self.exception = exception
        self.kafka_message = kafka_message

    @property
    def code(self) -> int:
        err: KafkaError = self.args[0]
        return err.code()

    @property
    def name(self) -> str:
        err: KafkaError = self.args[0]
        return err.name()


class ConsumeError(_KafkaClientError):
    """Consuming a message failed."""

    def __init__(self, kafka_error: KafkaError, exception: BaseException | None = None, kafka_message: Any = None):
        super().__init__(kafka_error, exception, kafka_message)


class KeyDeserializationError(ConsumeError, SerializationError):
    """The key deserializer failed; ``kafka_message`` is the message as it came from the broker."""

    def __init__(self, exception: BaseException | None = None, kafka_message: Any = None):
        super().__init__(
            KafkaError(KafkaError._KEY_DESERIALIZATION, str(exception)),
            exception=exception,
            kafka_message=kafka_message,
        )


class ValueDeserializationError(ConsumeError, SerializationError):
    """The value deserializer failed; ``kafka_message`` is the message as it came from the broker."""

    def __init__(self, exception: BaseException | None = None, kafka_message: Any = None):
        super().__init__(
            KafkaError(KafkaError._VALUE_DESERIALIZATION, str(exception)),
            exception=exception,
            kafka_message=kafka_message,
        )


class ProduceError(_KafkaClientError):
    """Producing a message failed before it was queued."""

    def __init__(self, kafka_error: KafkaError, exception: BaseException | None = None):
        super().__init__(kafka_error, exception, None)


class KeySerializationError(ProduceError, SerializationError):
    """The key serializer failed; nothing was queued."""

    def __init__(self, exception: BaseException | None = None):
        super().__init__(KafkaError(KafkaError._KEY_SERIALIZATION, str(exception)), exception=exception)


class ValueSerializationError(ProduceError, SerializationError):
    """The value serializer failed; nothing was queued."""

    def __init__(self, exception: BaseException | None = None):
        super().__init__(KafkaError(KafkaError._VALUE_SERIALIZATION, str(exception)), exception=exception)
