"""`RecordMetadata`, what a Java-style ``send()`` resolves to: a module of its own so that a
producer's start-up, which makes none, does not pay for creating its dataclass (nor for importing
``dataclasses`` and ``inspect``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecordMetadata:
    """What a Java-style ``send()`` resolves to: where the record landed.

    ``offset`` is -1 when unknown (acks=0); ``timestamp`` is -1 when unknown; the sizes are -1
    for a null key or value, as in the Java client. ``record_id`` is the id the record was sent
    with (`ProducerRecord`'s ``id``, the C++ client's ``recordId()``), None when it had none.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    serialized_key_size: int
    serialized_value_size: int
    record_id: int | None = None

    def has_offset(self) -> bool:
        return self.offset != -1

    def has_timestamp(self) -> bool:
        return self.timestamp != -1

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}@{self.offset}"
