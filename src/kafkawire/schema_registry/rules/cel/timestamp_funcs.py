"""``timestamp(...)`` as Confluent's CEL environment declares it, over celpy's own.

celpy's ``timestamp`` reads RFC 3339 text and datetime parts (three or more ints); Confluent's
clients add ``timestamp(int)`` (seconds since the epoch, cel-java's overload), ``timestamp(int,
precision)`` (the epoch in seconds, millis, micros or nanos: precision 0, 3, 6 or 9, as Flink
writes it), and the values a record's field holds: a ``google.protobuf.Timestamp`` and a datetime
with a zone. A naive datetime (Avro's local-timestamp) is refused rather than read as UTC.
A datetime's grain is the microsecond: nanoseconds are floored away, before 1970 as after.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError, base_functions

__all__ = ["TIMESTAMP_FUNCS", "format_timestamp"]

_CELPY_TIMESTAMP: Any = base_functions.get("timestamp", celtypes.TimestampType)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# Microseconds per unit of each precision (nanoseconds: a divisor).
_PER_UNIT: dict[int, tuple[int, int]] = {0: (1_000_000, 1), 3: (1_000, 1), 6: (1, 1), 9: (1, 1_000)}
_TIMESTAMP_MESSAGE = "google.protobuf.Timestamp"


def _is_int(value: Any) -> bool:
    """A CEL int (celpy's bool and uint are Python ints too, and distinct CEL types)."""
    return isinstance(value, int) and not isinstance(value, (bool, celtypes.BoolType, celtypes.UintType))


def _from_epoch(value: int, precision: int) -> celtypes.TimestampType:
    if precision not in _PER_UNIT:
        raise CELEvalError(
            f"timestamp: unknown precision {precision}; expected 0 (seconds), 3 (millis), 6 (micros) or 9 (nanos)"
        )
    times, divisor = _PER_UNIT[precision]
    return celtypes.TimestampType(_EPOCH + timedelta(microseconds=value * times // divisor))


def _from_message(message: Any) -> celtypes.TimestampType:
    """A protobuf Timestamp, exactly (a nanos field past a second rolls into the next, as cel-java)."""
    seconds, nanos = int(message.seconds), int(message.nanos)
    try:
        return celtypes.TimestampType(_EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1_000))
    except (OverflowError, ValueError) as e:
        raise CELEvalError(f"timestamp: proto Timestamp out of range: {seconds}s {nanos}ns") from e


def _one(value: Any) -> Any:
    if value is None:
        raise CELEvalError("timestamp: cannot convert null to Timestamp")
    if isinstance(value, (bool, celtypes.BoolType)):
        raise CELEvalError("timestamp: cannot convert bool to Timestamp")
    if isinstance(value, celtypes.TimestampType):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise CELEvalError(
                "timestamp: naive datetime (no timezone) cannot be converted. "
                "Use the regular timestamp-* logical type (UTC by spec), or pass "
                "an offset-adjusted epoch value via timestamp(value, precision)."
            )
        return celtypes.TimestampType(value)
    source = getattr(value, "msg", value)  # the view of a protobuf message in CEL
    if getattr(getattr(source, "DESCRIPTOR", None), "full_name", "") == _TIMESTAMP_MESSAGE:
        return _from_message(source)
    if isinstance(value, celtypes.UintType):
        raise CELEvalError("timestamp: expected an int epoch, got uint")
    if isinstance(value, int):
        try:
            return _from_epoch(int(value), 0)
        except (OverflowError, ValueError) as e:
            raise CELEvalError(f"timestamp: epoch seconds value out of range: {int(value)}") from e
    return _CELPY_TIMESTAMP(value)


def _timestamp(*args: Any) -> Any:
    if len(args) == 1:
        return _one(args[0])
    if len(args) != 2:  # celpy's datetime parts
        return _CELPY_TIMESTAMP(*args)
    value, precision = args
    if not _is_int(value):
        raise CELEvalError(f"timestamp: epoch value must be int, got {type(value).__name__}")
    if not _is_int(precision):
        raise CELEvalError(f"timestamp: precision must be int, got {type(precision).__name__}")
    try:
        return _from_epoch(int(value), int(precision))
    except (OverflowError, ValueError) as e:
        raise CELEvalError(f"timestamp: epoch value out of range: {int(value)}") from e


def format_timestamp(t: datetime) -> str:
    """``t`` in UTC as every Confluent client's ``string(timestamp)`` writes it: RFC 3339 with a
    ``Z``, its fraction in 3 digits when whole milliseconds, else 6, none when zero (celpy's own
    drops the fraction)."""
    u = t.astimezone(timezone.utc)
    text = f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}"
    if u.microsecond:
        text += f".{u.microsecond // 1000:03d}" if not u.microsecond % 1000 else f".{u.microsecond:06d}"
    return text + "Z"


# By the names CEL expressions call them.
TIMESTAMP_FUNCS: dict[str, Any] = {"timestamp": _timestamp}
