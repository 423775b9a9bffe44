"""`RecordMetadata`, what a Java-style ``send()`` resolves to: a module of its own so that a
producer's start-up, which makes none, does not pay for creating its dataclass (nor for importing
``dataclasses`` and ``inspect``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecordMetadata:
    """What a Java-style ``send()`` resolves to: where the record landed.

    ``offset`` is -1 when unknown (acks=0); ``timestamp`` is -1 when unknown; the sizes are -1
    for a null key or value, as in the Java client.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    serialized_key_size: int
    serialized_value_size: int

    def has_offset(self) -> bool:
        return self.offset != -1

    def has_timestamp(self) -> bool:
        return self.timestamp != -1

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}@{self.offset}"
