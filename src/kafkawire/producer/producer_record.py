"""`ProducerRecord`, the Java client's record, and `send_arguments`, ``Producer.send``'s forms: a
module of its own so that a producer's start-up, which makes no record object, does not pay for
creating its dataclass (nor for importing ``dataclasses`` and ``inspect``)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from ..base.record_metadata import RecordMetadata
from ..core.kafka_error import KafkaError, KafkaException

__all__ = ["ProducerRecord", "RecordMetadata", "SendArguments", "copy_record", "send_arguments"]


@dataclass(init=False)
class ProducerRecord:
    """A record as the application handed it to the producer, before serialization: what
    ``Producer.send(record)`` takes and an interceptor's ``on_send`` sees and returns.

    Positional arguments in the Java client's orders, told apart by their count:
    ``(topic, value)``, ``(topic, key, value)``, ``(topic, partition, key, value)``,
    ``(topic, partition, timestamp, key, value)`` and ``(topic, partition, timestamp, key, value,
    headers)``; or any field by keyword (``topic``, ``key``, ``value``, ``partition``,
    ``timestamp``, ``headers``). A partition or timestamp of None is Java's null: any partition
    (-1), the time of sending (0)."""

    topic: str
    value: Any
    key: Any
    partition: int
    timestamp: int
    headers: Any

    def __init__(self, topic: str, *args: Any, **fields: Any) -> None:
        try:
            names = _JAVA_ORDERS[len(args)]
        except KeyError:
            raise TypeError(f"ProducerRecord takes 1 to 6 positional arguments, not {len(args) + 1}") from None
        given = dict(zip(names, args, strict=True))
        unknown = set(fields) - _FIELDS
        if unknown:
            raise TypeError(f"ProducerRecord got an unexpected keyword argument {sorted(unknown)[0]!r}")
        twice = set(given) & set(fields)
        if twice:
            raise TypeError(f"ProducerRecord got multiple values for argument {sorted(twice)[0]!r}")
        given.update(fields)
        partition, timestamp = given.get("partition"), given.get("timestamp")
        self.topic = topic
        self.value = given.get("value")
        self.key = given.get("key")
        self.partition = -1 if partition is None else partition
        self.timestamp = 0 if timestamp is None else timestamp
        self.headers = given.get("headers")


# The Java client's constructors by the count of arguments after the topic.
_JAVA_ORDERS: dict[int, tuple[str, ...]] = {
    0: (),
    1: ("value",),
    2: ("key", "value"),
    3: ("partition", "key", "value"),
    4: ("partition", "timestamp", "key", "value"),
    5: ("partition", "timestamp", "key", "value", "headers"),
}
_FIELDS = frozenset(("key", "value", "partition", "timestamp", "headers"))


# send()'s arguments in the order the producer queues them: topic, value, key, partition,
# timestamp, headers, and the delivery callback.
SendArguments = tuple[str, Any, Any, int, int, Any, Callable[..., Any] | None]


def send_arguments(
    topic: str | ProducerRecord, value: Any, rest: tuple[Any, int, int, Any], fut: Future[RecordMetadata]
) -> SendArguments:
    """`Producer.send`'s arguments: a topic and the record's fields as given (``rest``: key,
    partition, timestamp, headers), or the Java client's ``send(record, callback)``, whose
    ``callback`` (in ``value``'s place) is Java's ``onCompletion(metadata, exception)``: the
    `RecordMetadata` and None, or None and the `KafkaException`. It runs as a delivery callback
    does (``poll()``, ``flush()``, ``close()``, the report thread); the record's future is settled
    before its report is queued. Beside a record, the other arguments stay at their defaults."""
    if not isinstance(topic, ProducerRecord):
        return (topic, value, *rest, None)
    record, callback = topic, value
    if rest != (None, -1, 0, None):
        raise TypeError("send(record, callback) takes no other record fields: they are the record's")
    fields = (record.topic, record.value, record.key, record.partition, record.timestamp, record.headers)
    if callback is None:
        return (*fields, None)
    if not callable(callback):
        raise TypeError(f"callback must be callable, not {type(callback).__name__}")

    def report(err: KafkaError | None, _msg: Any) -> None:
        if err is None:
            callback(fut.result(), None)
        else:
            callback(None, KafkaException(err))

    return (*fields, report)


def copy_record(record: ProducerRecord) -> ProducerRecord:
    """The record as one interceptor's ``on_send`` gets it: its own copy, headers included."""
    headers = record.headers
    if isinstance(headers, (list, dict)):
        headers = headers.copy()
    return replace(record, headers=headers)
