"""What a protobuf message is in a CEL rule, under the names of confluent-kafka's module (which
protovalidate's ``constraints`` gave them): a message is a ``MessageType`` (a map of its declared
fields, presence-aware under ``has()``), a Timestamp or Duration its CEL value, a wrapper the
value it holds. The conversions themselves are cel_values'; a value a rule passes through keeps
the message it came from, so writing it back loses none of its nanoseconds.
"""

from __future__ import annotations

from typing import Any

from celpy import celtypes
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from ...common.protobuf_fields import PROTOBUF_MAJOR_VERSION as PROTOBUF_MAJOR_VERSION
from .cel_field_presence import in_has
from .cel_values import MessageType, to_cel
from .string_format import format_value

__all__ = [
    "PROTOBUF_MAJOR_VERSION",
    "CompilationError",
    "MessageType",
    "check_field_type",
    "in_has",
    "make_duration",
    "make_key_path",
    "make_timestamp",
    "unwrap",
]


class CompilationError(Exception):
    """A field whose type a rule cannot take."""


def make_key_path(field_name: str, key: Any) -> str:
    """The path of a map entry in a violation: ``field["key"]``, ``field[3]``."""
    return f"{field_name}[{format_value(key)}]"


def make_duration(msg: Message) -> celtypes.DurationType:
    """A ``google.protobuf.Duration`` as a CEL duration."""
    duration: celtypes.DurationType = to_cel(msg)
    return duration


def make_timestamp(msg: Message) -> celtypes.TimestampType:
    """A ``google.protobuf.Timestamp`` as a CEL timestamp."""
    timestamp: celtypes.TimestampType = to_cel(msg)
    return timestamp


def unwrap(msg: Message) -> Any:
    """A wrapper message (``google.protobuf.Int64Value`` ...) as the CEL value it holds."""
    return to_cel(msg)


def check_field_type(field: Any, expected: int, wrapper_name: str | None = None) -> None:
    """Refuse ``field`` unless it is of the ``expected`` FieldDescriptor type, or the wrapper
    message ``wrapper_name`` that holds one."""
    if field.type == expected:
        return
    if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name == wrapper_name:
        return
    raise CompilationError(f"field {field.name} has type {field.type} but expected {expected}")
