"""A CEL transform's answer for a protobuf record, rebuilt as a message of the record's type.

The answer is the whole new message: a field it does not name is left unset, as is one it gives
null; a key the type does not declare is ignored (as a JSON parse of the map would). A value the
rule passed through unchanged is copied from the message it was read from (a Timestamp keeps its
nanoseconds, a Decimal its scale); a computed Decimal is written at its own scale (as Java's
BigDecimal), a Variant as its own bytes.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from ...common.protobuf_fields import DECIMAL_TYPE_NAME, TIMESTAMP_TYPE_NAME, set_decimal_message, set_timestamp_message
from ...common.protobuf_fields import MAX_ENCODABLE_COEFFICIENT_DIGITS as MAX_ENCODABLE_COEFFICIENT_DIGITS
from ...common.serde import RuleError
from ...confluent.type.decimal_utils import unscaled_to_bytes as unscaled_to_bytes
from ...confluent.type.variant_utils import Variant
from .cel_values import DURATION, JSON_TYPES, WRAPPERS, FieldDesc, from_cel, is_map, is_repeated, source_of

__all__ = ["convert"]

_VARIANT = "confluent.type.Variant"


def convert(result: Any, msg: Any) -> Any:
    """``result`` (a CEL map) as a message of ``msg``'s type; ``msg`` itself when the rule
    answered with the record it was given."""
    if isinstance(source_of(result), Message) and type(source_of(result)) is type(msg):
        return source_of(result)
    if not isinstance(result, Mapping):
        raise RuleError(f"a CEL transform of a protobuf message gave a {type(result).__name__}, not a map")
    out = type(msg)()
    _fill(out, result)
    return out


def _fill(out: Message, values: Mapping[Any, Any]) -> None:
    desc = out.DESCRIPTOR
    by_json_name = {fd.json_name: fd for fd in desc.fields}
    for key, value in values.items():
        fd: FieldDesc = desc.fields_by_name.get(str(key)) or by_json_name.get(str(key))
        if fd is None or value is None:
            continue
        if is_map(fd):
            target_map = getattr(out, fd.name)
            value_fd = fd.message_type.fields_by_name["value"]
            for k, v in value.items():
                if value_fd.message_type is not None:
                    _set_message(target_map[from_cel(k)], v)
                else:
                    target_map[from_cel(k)] = _scalar(value_fd, v)
        elif is_repeated(fd):
            target_list = getattr(out, fd.name)
            for v in value:
                if fd.message_type is not None:
                    _set_message(target_list.add(), v)
                else:
                    target_list.append(_scalar(fd, v))
        elif fd.message_type is not None:
            _set_message(getattr(out, fd.name), value)
        else:
            setattr(out, fd.name, _scalar(fd, value))


_INT32 = range(-(2**31), 2**31)


def _set_decimal(target: Message, value: decimal.Decimal) -> None:
    """A rule's decimal result; its operators compute far past what the scale field holds (a
    product of two 1E+2147483647 is exact), so a scale beyond int32 is named here, as
    confluent-kafka names it, rather than left to the protobuf runtime's bare error."""
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and -exponent not in _INT32:
        raise ValueError(
            f"decimal needs a scale of {-exponent}, which does not fit the int32 scale field of {DECIMAL_TYPE_NAME}"
        )
    set_decimal_message(target, value)


def _set_message(target: Message, value: Any) -> None:
    name = target.DESCRIPTOR.full_name
    source = source_of(value)
    if isinstance(source, Message) and source.DESCRIPTOR.full_name == name:
        target.CopyFrom(source)
    elif name == DECIMAL_TYPE_NAME and isinstance(value, decimal.Decimal):
        _set_decimal(target, value)
    elif name == _VARIANT and isinstance(value, Variant):
        target.metadata, target.value = value.metadata, value.standalone_value_bytes()  # type: ignore[attr-defined]
    elif name == TIMESTAMP_TYPE_NAME and isinstance(value, datetime.datetime):
        set_timestamp_message(target, value)
    elif name == DURATION and isinstance(value, datetime.timedelta):
        target.FromTimedelta(value)  # type: ignore[attr-defined]
    elif name in WRAPPERS:
        target.value = _scalar(target.DESCRIPTOR.fields_by_name["value"], value)  # type: ignore[attr-defined]
    elif name in JSON_TYPES:
        json_format.ParseDict(from_cel(value), target)
    elif isinstance(value, Mapping):
        _fill(target, value)
        target.SetInParent()
    else:
        raise RuleError(f"a {type(value).__name__} cannot stand for a {name} message")


def _scalar(fd: FieldDesc, value: Any) -> Any:
    plain = from_cel(value)
    if fd.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE) and type(plain) is int:
        return float(plain)
    return plain
