"""confluent_kafka.avro.serializer's errors, for code written against the legacy Avro API."""

from __future__ import annotations

__all__ = ["KeySerializerError", "SerializerError", "ValueSerializerError"]


class SerializerError(Exception):
    """Generic error from the legacy Avro serializer; ``message`` says what went wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(error={self.message})"

    def __str__(self) -> str:
        return self.message


class KeySerializerError(SerializerError):
    pass


class ValueSerializerError(SerializerError):
    pass
