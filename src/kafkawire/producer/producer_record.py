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

__all__ = [
    "ProducerRecord",
    "RecordFuture",
    "RecordMetadata",
    "SendArguments",
    "checked_id",
    "copy_record",
    "send_arguments",
]


@dataclass(init=False)
class ProducerRecord:
    """A record as the application handed it to the producer, before serialization: what
    ``Producer.send(record)`` takes and an interceptor's ``on_send`` sees and returns.

    Positional arguments in the Java client's orders, told apart by their count:
    ``(topic, value)``, ``(topic, key, value)``, ``(topic, partition, key, value)``,
    ``(topic, partition, timestamp, key, value)`` and ``(topic, partition, timestamp, key, value,
    headers)``; or any field by keyword (``topic``, ``key``, ``value``, ``partition``,
    ``timestamp``, ``headers``). A partition or timestamp of None is Java's null: any partition
    (-1), the time of sending (0). ``id``, by keyword only: the C++ client's record id, an
    unsigned 64-bit number the application picks to know the record again; its `RecordMetadata`
    echoes it as ``record_id`` (None: no id)."""

    topic: str
    value: Any
    key: Any
    partition: int
    timestamp: int
    headers: Any
    id: int | None

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
        self.id = checked_id(given.get("id"))


# The Java client's constructors by the count of arguments after the topic.
_JAVA_ORDERS: dict[int, tuple[str, ...]] = {
    0: (),
    1: ("value",),
    2: ("key", "value"),
    3: ("partition", "key", "value"),
    4: ("partition", "timestamp", "key", "value"),
    5: ("partition", "timestamp", "key", "value", "headers"),
}
_FIELDS = frozenset(("key", "value", "partition", "timestamp", "headers", "id"))
_ID_LIMIT = 1 << 64  # the C++ client's ProducerRecord::Id is a std::uint64_t


def checked_id(record_id: Any) -> int | None:
    """A record id as given, or TypeError / ValueError naming it: None, or an int in [0, 2**64)."""
    if record_id is None:
        return None
    if not isinstance(record_id, int) or isinstance(record_id, bool):
        raise TypeError(f"ProducerRecord id must be an int or None, not {type(record_id).__name__}")
    if not 0 <= record_id < _ID_LIMIT:
        raise ValueError(f"ProducerRecord id must be in [0, 2**64), not {record_id}")
    return int(record_id)


class RecordFuture(Future[RecordMetadata]):
    """``send()``'s future, and the id of the record it reports (`ProducerRecord`'s ``id``, None
    when none): the `RecordMetadata` it resolves to carries it as ``record_id``."""

    def __init__(self, record_id: int | None = None) -> None:
        super().__init__()
        self.record_id = record_id


# send()'s arguments in the order the producer queues them: topic, value, key, partition,
# timestamp, headers, and the delivery callback.
SendArguments = tuple[str, Any, Any, int, int, Any, Callable[..., Any] | None]


def send_arguments(
    topic: str | ProducerRecord, value: Any, rest: tuple[Any, int, int, Any]
) -> tuple[SendArguments, RecordFuture]:
    """`Producer.send`'s arguments and the future it returns: a topic and the record's fields as
    given (``rest``: key, partition, timestamp, headers), or the Java client's ``send(record,
    callback)``, whose ``callback`` (in ``value``'s place) is Java's ``onCompletion(metadata,
    exception)``: the `RecordMetadata` and None, or None and the `KafkaException`. It runs as a
    delivery callback does (``poll()``, ``flush()``, ``close()``, the report thread); the record's
    future is settled before its report is queued. Beside a record, the other arguments stay at
    their defaults; the record's ``id`` goes with the future (checked again: it may have been set
    since the record was made)."""
    if not isinstance(topic, ProducerRecord):
        return (topic, value, *rest, None), RecordFuture()
    record, callback = topic, value
    if rest != (None, -1, 0, None):
        raise TypeError("send(record, callback) takes no other record fields: they are the record's")
    fut = RecordFuture(checked_id(record.id))
    fields = (record.topic, record.value, record.key, record.partition, record.timestamp, record.headers)
    if callback is None:
        return (*fields, None), fut
    if not callable(callback):
        raise TypeError(f"callback must be callable, not {type(callback).__name__}")

    def report(err: KafkaError | None, _msg: Any) -> None:
        if err is None:
            callback(fut.result(), None)
        else:
            callback(None, KafkaException(err))

    return (*fields, report), fut


def copy_record(record: ProducerRecord) -> ProducerRecord:
    """The record as one interceptor's ``on_send`` gets it: its own copy, headers included."""
    headers = record.headers
    if isinstance(headers, (list, dict)):
        headers = headers.copy()
    return replace(record, headers=headers)
