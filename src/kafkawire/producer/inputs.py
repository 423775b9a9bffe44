"""What ``produce()`` accepts: the checks and conversions of a record's fields, made once here.

Types and ranges follow confluent-kafka (a C int32 partition, a C int64 timestamp: `TypeError` for
a wrong type, `OverflowError` for a number the wire cannot carry). Two refusals are ours and come
as `KafkaException` with ``_INVALID_ARG``: an illegal topic name, and a negative timestamp (a
batch's timestamps are stored as deltas from its first one, and a negative one is no time at all).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..core.kafka_error import KafkaError, KafkaException

_LEGAL_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
Headers = list[tuple[str, bytes | None]]
# A checked record for the bulk paths (`ProducerEngine.queue_checked`): (handle, value, key,
# partition, timestamp, headers, callback); ``handle`` says which record a refusal is about.
Prepared = tuple[Any, bytes | None, bytes | None, int, int, Headers | None, Callable[..., Any] | None]


def to_bytes(value: Any, what: str) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"expected {what} to be str or bytes, not {type(value).__name__}")


def to_headers(headers: Any) -> Headers | None:
    """Headers as a list of (str, bytes|None), from a list of pairs or a dict, as confluent-kafka takes them."""
    if headers is None:
        return None
    items: Iterable[Any]
    if isinstance(headers, Mapping):
        items = headers.items()
    elif isinstance(headers, (list, tuple)):
        items = headers
    else:
        raise TypeError(f"headers must be a list of (key, value) pairs or a dict, not {type(headers).__name__}")
    out: Headers = []
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"header {item!r} is not a (key, value) pair")
        key, value = item
        if not isinstance(key, str):
            raise TypeError(f"header key must be str, not {type(key).__name__}")
        out.append((key, to_bytes(value, f"header {key!r} value")))
    return out


def check_fields(partition: Any, timestamp: Any, callback: Any) -> None:
    """The partition, timestamp and callback of one record (the slow path: produce() skips it when
    the common values make every check pass)."""
    if not isinstance(partition, int):
        raise TypeError(f"partition must be int, not {type(partition).__name__}")
    if not isinstance(timestamp, int):
        raise TypeError(f"timestamp must be int, not {type(timestamp).__name__}")
    if not INT32_MIN <= partition <= INT32_MAX:
        raise OverflowError(f"partition {partition} does not fit in a signed 32-bit integer")
    if not INT64_MIN <= timestamp <= INT64_MAX:
        raise OverflowError(f"timestamp {timestamp} does not fit in a signed 64-bit integer")
    if timestamp < 0:
        raise KafkaException(
            KafkaError(
                KafkaError._INVALID_ARG,
                f"timestamp {timestamp} is negative: give milliseconds since the epoch, or 0 for now",
            )
        )
    if callback is not None and not callable(callback):
        raise TypeError("on_delivery/callback must be callable")


def check_topic(topic: Any) -> str:
    if not isinstance(topic, str):
        raise TypeError(f"topic must be str, not {type(topic).__name__}")
    if not _LEGAL_TOPIC.match(topic) or topic in (".", ".."):
        raise KafkaException(
            KafkaError(
                KafkaError._INVALID_ARG,
                f"invalid topic name {topic!r}: 1-249 characters from [A-Za-z0-9._-], not '.' or '..'",
            )
        )
    return topic


def first_set(*callbacks: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """The first callback given (``is not None``: a callable object may well be falsy)."""
    return next((cb for cb in callbacks if cb is not None), None)


def refusal(exc: BaseException) -> KafkaError:
    """The error interceptors are told of when produce() refuses a record without a KafkaError."""
    if isinstance(exc, BufferError):
        return KafkaError(KafkaError._QUEUE_FULL)
    return KafkaError(KafkaError._INVALID_ARG, str(exc))


_PAYLOADS = (bytes, str, bytearray, memoryview)  # what produce_batch() takes as a key or value


def check_batch(
    messages: list[Any], partition: int, default_cb: Callable[..., Any] | None
) -> tuple[list[Prepared], list[tuple[Any, KafkaError]]]:
    """``produce_batch()``'s messages checked and converted, each to be queued or refused (a value
    produce() refuses with a `KafkaException`). A wrong type raises before anything is queued, as
    confluent-kafka does (no delivery report will come for any of them), with its wording."""
    prepared: list[Prepared] = []
    refused: list[tuple[Any, KafkaError]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise TypeError(f"Message at index {i} must be a dict, not {type(m).__name__}")
        get = m.get
        cb = get("callback")
        if cb is None:
            cb = get("on_delivery", default_cb)
            if cb is None:
                cb = default_cb
        value = get("value")
        key = get("key")
        part = get("partition", partition)
        timestamp = get("timestamp", 0)
        headers = get("headers")
        if value is not None and value.__class__ is not bytes and not isinstance(value, _PAYLOADS):
            raise TypeError(f"Message value at index {i} must be bytes or str, not {type(value).__name__}")
        if key is not None and key.__class__ is not bytes and not isinstance(key, _PAYLOADS):
            raise TypeError(f"Message key at index {i} must be bytes or str, not {type(key).__name__}")
        if part.__class__ is not int and not isinstance(part, int):
            raise TypeError(f"Message partition at index {i} must be int, not {type(part).__name__}")
        try:
            if value is not None and value.__class__ is not bytes:
                value = to_bytes(value, "value")
            if key is not None and key.__class__ is not bytes:
                key = to_bytes(key, "key")
            # The common values pass every check of check_fields (as in produce()).
            if (
                part.__class__ is not int
                or timestamp.__class__ is not int
                or not -1 <= part <= INT32_MAX
                or not 0 <= timestamp <= INT64_MAX
                or (cb is not None and not callable(cb))
            ):
                check_fields(part, timestamp, cb)
            if headers is not None:
                headers = to_headers(headers)
        except (TypeError, OverflowError) as exc:
            raise type(exc)(f"Message at index {i}: {exc}") from None
        except KafkaException as exc:
            refused.append((m, exc.args[0]))
            continue
        prepared.append((m, value, key, part, timestamp, headers, cb))
    return prepared, refused
