"""Python values to CEL values and back: what a CEL rule sees of a record, and what it hands back.

Records come as Avro dicts (with fastavro's logical types), JSON documents or protobuf messages.
A value CEL has no type for is given the nearest CEL one (a date is its days since the epoch, a
Decimal a double, a UUID its string) and remembers the Python value it stands for, so a value a
transform passes through unchanged comes back exactly as it went in.
"""

from __future__ import annotations

import datetime
import decimal
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from ...common.serde import RuleError
from ...confluent.type.variant_utils import Variant

__all__ = [
    "DAYS_SHIFT",
    "DURATION",
    "JSON_TYPES",
    "TIMESTAMP",
    "WRAPPERS",
    "FieldDesc",
    "MessageType",
    "from_cel",
    "has_depth",
    "inside_has",
    "is_map",
    "is_repeated",
    "proto_field_to_cel",
    "proto_scalar_to_cel",
    "restore_like",
    "source_of",
    "to_cel",
]

# A protobuf FieldDescriptor: types-protobuf splits the class between the Python and upb runtimes.
FieldDesc = Any
_SOURCE = "kafkawire_source"  # attribute of a CEL value that stands for a Python value
_MISSING = object()
DAYS_SHIFT = datetime.date(1970, 1, 1).toordinal()  # Avro's date is its days since the epoch: an ordinal less this
_MIDNIGHT = datetime.datetime(1970, 1, 1)
_INT64 = (-(2**63), 2**63)
_UINT64_END = 2**64


def source_of(value: Any) -> Any:
    """The Python value (or protobuf message) a CEL value stands for, or None."""
    if isinstance(value, MessageType):
        return value.msg
    return getattr(value, _SOURCE, None)


def _sourced(value: Any, source: Any) -> Any:
    setattr(value, _SOURCE, source)
    return value


def to_cel(value: Any) -> Any:
    """``value`` as CEL sees it; raises RuleError for a type a record cannot hold."""
    if value is None or isinstance(value, Variant):  # a Variant is its own CEL value (variant_funcs)
        return value
    if isinstance(value, Message):
        return _proto_to_cel(value)
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return _int_to_cel(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return celtypes.BytesType(bytes(value))
    if isinstance(value, Mapping):
        return celtypes.MapType({to_cel(k): to_cel(v) for k, v in value.items()})
    if isinstance(value, list):
        return celtypes.ListType([to_cel(v) for v in value])
    if isinstance(value, tuple):  # fastavro's (branch name, value) union notation
        return _sourced(celtypes.ListType([to_cel(v) for v in value]), value)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:  # a local-timestamp: read as UTC, handed back naive
            return _sourced(celtypes.TimestampType(value.replace(tzinfo=datetime.timezone.utc)), value)
        return celtypes.TimestampType(value)
    if isinstance(value, datetime.date):  # Avro's date: an int of days since the epoch
        return _sourced(celtypes.IntType(value.toordinal() - DAYS_SHIFT), value)
    if isinstance(value, datetime.time):  # time-millis/micros: the duration since midnight
        since = datetime.datetime.combine(_MIDNIGHT, value.replace(tzinfo=None)) - _MIDNIGHT
        return _sourced(celtypes.DurationType(since), value)
    if isinstance(value, datetime.timedelta):
        return celtypes.DurationType(value)
    if isinstance(value, decimal.Decimal):
        return _sourced(celtypes.DoubleType(float(value)), value)
    if isinstance(value, uuid.UUID):
        return _sourced(celtypes.StringType(str(value)), value)
    raise RuleError(f"CEL has no value for a {type(value).__name__}")


def _int_to_cel(value: int) -> Any:
    # CEL's ints are 64-bit: a larger unsigned one is a uint, one past that only a double.
    if _INT64[0] <= value < _INT64[1]:
        return celtypes.IntType(value)
    if 0 <= value < _UINT64_END:
        return celtypes.UintType(value)
    return _sourced(celtypes.DoubleType(float(value)), value)


def from_cel(value: Any) -> Any:
    """A CEL result as plain Python values (what a serializer accepts)."""
    source = getattr(value, _SOURCE, _MISSING)
    if source is not _MISSING:
        return source
    if value is None or isinstance(value, (Variant, decimal.Decimal)):  # decimal_funcs' and variant_funcs' values
        return value
    if isinstance(value, (bool, celtypes.BoolType)):  # before int: celpy's BoolType is an int
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, datetime.datetime):  # celpy's zones are its own classes
        offset = value.utcoffset()
        zone = None if offset is None else datetime.timezone.utc if not offset else datetime.timezone(offset)
        fields = (value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond)
        return datetime.datetime(*fields, tzinfo=zone)
    if isinstance(value, datetime.timedelta):
        return datetime.timedelta(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    if isinstance(value, Mapping):
        return {from_cel(k): from_cel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_cel(v) for v in value]
    if isinstance(value, CELEvalError):
        raise RuleError(f"CEL evaluation failed: {str(value)[:500]}")
    raise RuleError(f"a CEL result of type {type(value).__name__} has no Python value")


def restore_like(value: Any, like: Any) -> Any:
    """A CEL answer in the Python type of the value it replaces (a field's date stays a date),
    where it has one: a string that is no UUID stays a string."""
    if (
        isinstance(like, datetime.datetime)
        and like.tzinfo is None
        and isinstance(value, datetime.datetime)
        and value.tzinfo
    ):
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)  # a naive (local) timestamp
    if value is None or isinstance(value, type(like)):
        return value
    try:
        if isinstance(like, decimal.Decimal) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return decimal.Decimal(repr(value)) if isinstance(value, float) else decimal.Decimal(value)
        if isinstance(like, uuid.UUID) and isinstance(value, str):
            return uuid.UUID(value)
        if type(like) is datetime.date and isinstance(value, int) and not isinstance(value, bool):
            return datetime.date.fromordinal(value + DAYS_SHIFT)
        if isinstance(like, datetime.time) and isinstance(value, datetime.timedelta):
            return (_MIDNIGHT + value).time().replace(tzinfo=like.tzinfo)
    except (ValueError, OverflowError):
        pass
    return value


# --- protobuf ---------------------------------------------------------------------------------

_has_state = threading.local()


def has_depth() -> int:
    """How many ``has()`` this thread is evaluating inside."""
    return int(getattr(_has_state, "depth", 0))


@contextmanager
def inside_has() -> Iterator[None]:
    """Marks the evaluation of CEL's ``has()`` macro on this thread: there an unset protobuf
    field is absent, where elsewhere it reads as its default (celpy tells the two apart only by
    whether the selection fails)."""
    depth = getattr(_has_state, "depth", 0)
    _has_state.depth = depth + 1
    try:
        yield
    finally:
        _has_state.depth = depth


def is_repeated(fd: FieldDesc) -> bool:
    repeated = getattr(fd, "is_repeated", None)
    if repeated is None:  # an older protobuf, which has only the label
        return bool(fd.label == FieldDescriptor.LABEL_REPEATED)
    return bool(repeated)


def is_map(fd: FieldDesc) -> bool:
    return is_repeated(fd) and fd.message_type is not None and fd.message_type.GetOptions().map_entry


def _is_set(msg: Message, fd: FieldDesc) -> bool:
    """Protobuf's own presence, which is what ``has()`` reports."""
    if is_repeated(fd):
        return len(getattr(msg, fd.name)) > 0
    if fd.has_presence:
        return msg.HasField(fd.name)
    return bool(getattr(msg, fd.name) != fd.default_value)


class MessageType(celtypes.MapType):
    """A protobuf message as CEL sees it: a map of its declared fields by name. An unset field
    reads as its default, except inside ``has()``; an unset message field is built on demand,
    since a recursive message type has defaults all the way down."""

    def __init__(self, msg: Message) -> None:
        super().__init__()
        self.msg = msg
        for fd in msg.DESCRIPTOR.fields:
            if fd.message_type is not None and not is_repeated(fd) and not msg.HasField(fd.name):
                super().__setitem__(celtypes.StringType(fd.name), None)
            else:
                super().__setitem__(celtypes.StringType(fd.name), proto_field_to_cel(getattr(msg, fd.name), fd))

    def __getitem__(self, key: Any) -> Any:
        fd = self.msg.DESCRIPTOR.fields_by_name.get(str(key)) if isinstance(key, str) else None
        if fd is None:
            return super().__getitem__(key)
        if has_depth() and not _is_set(self.msg, fd):
            raise KeyError(key)
        if fd.message_type is not None and not is_repeated(fd) and not self.msg.HasField(fd.name):
            return _unset_message(fd)
        return super().__getitem__(key)


WRAPPERS = frozenset(
    f"google.protobuf.{name}Value"
    for name in ("Bool", "Bytes", "Double", "Float", "Int32", "Int64", "String", "UInt32", "UInt64")
)
JSON_TYPES = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})
TIMESTAMP = "google.protobuf.Timestamp"
DURATION = "google.protobuf.Duration"
_UNSIGNED = frozenset(
    {
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
    }
)


def _unset_message(fd: FieldDesc) -> Any:
    """An unset message field's default: null for a wrapper (its point is telling unset from
    zero), else the empty message."""
    if fd.message_type.full_name in WRAPPERS:
        return None
    return _proto_to_cel(message_factory.GetMessageClass(fd.message_type)())


def _proto_to_cel(msg: Message) -> Any:
    name = msg.DESCRIPTOR.full_name
    if name == TIMESTAMP:
        ts = msg.ToDatetime(tzinfo=datetime.timezone.utc)  # type: ignore[attr-defined]
        return _sourced(celtypes.TimestampType(ts), msg)
    if name == DURATION:
        return _sourced(celtypes.DurationType(msg.ToTimedelta()), msg)  # type: ignore[attr-defined]
    if name in WRAPPERS:
        return proto_scalar_to_cel(msg.value, msg.DESCRIPTOR.fields_by_name["value"])  # type: ignore[attr-defined]
    if name in JSON_TYPES:
        return to_cel(json_format.MessageToDict(msg))
    return MessageType(msg)


def proto_field_to_cel(value: Any, fd: FieldDesc) -> Any:
    """A protobuf field's whole value (a repeated field's list, a map field's map) as CEL sees it."""
    if is_map(fd):
        key_fd, value_fd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
        return celtypes.MapType(
            {proto_scalar_to_cel(k, key_fd): proto_scalar_to_cel(v, value_fd) for k, v in value.items()}
        )
    if is_repeated(fd):
        return celtypes.ListType([proto_scalar_to_cel(v, fd) for v in value])
    return proto_scalar_to_cel(value, fd)


def proto_scalar_to_cel(value: Any, fd: FieldDesc) -> Any:
    """One value of a protobuf field, typed by its descriptor (a uint32 is a CEL uint)."""
    if fd.message_type is not None:
        return _proto_to_cel(value)
    if fd.type in _UNSIGNED:
        return celtypes.UintType(value)
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return celtypes.IntType(value)
    if fd.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return celtypes.DoubleType(value)
    return to_cel(value)
