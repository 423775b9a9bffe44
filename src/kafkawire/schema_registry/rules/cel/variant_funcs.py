"""The Variant functions Confluent's CEL environment adds: ``variant(...)`` makes one of a field
(a ``confluent.type.Variant`` message, an Avro variant record's map) or of its two byte strings,
and ``variants.*`` read it.

Two nulls, as in Confluent's other clients: CEL null is *absent* (no such field, an index past the
end, a step into a scalar, an unset field), a Variant of type NULL is *present and null*;
``variants.isNull`` answers only the second. A Variant travels through CEL as the Python object,
as a ``decimal.Decimal`` does. celpy has one function per name, so each binding checks its own
arguments' types where a typed CEL would pick no overload.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from ...confluent.type import variant_utils
from ...confluent.type.variant_utils import Variant, VariantType
from . import variant_path

__all__ = ["VARIANT_FUNCS"]

_VARIANT_MESSAGE = "confluent.type.Variant"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_INT32_MAX = 2**31 - 1
# The instants a CEL timestamp holds, in seconds since the epoch: 0001-01-01 to 9999-12-31.
_EPOCH_SECONDS = (-62135596800, 253402300799)

# What ``variants.type`` calls each type: the widths of a kind share its name.
_LABELS = {
    VariantType.OBJECT: "object",
    VariantType.ARRAY: "array",
    VariantType.NULL: "null",
    VariantType.BOOLEAN: "boolean",
    VariantType.BYTE: "int",
    VariantType.SHORT: "int",
    VariantType.INT: "int",
    VariantType.LONG: "int",
    VariantType.FLOAT: "double",
    VariantType.DOUBLE: "double",
    VariantType.DECIMAL4: "decimal",
    VariantType.DECIMAL8: "decimal",
    VariantType.DECIMAL16: "decimal",
    VariantType.DATE: "date",
    VariantType.TIME: "time",
    VariantType.TIMESTAMP_TZ: "timestamp",
    VariantType.TIMESTAMP_NTZ: "timestamp",
    VariantType.TIMESTAMP_NANOS_TZ: "timestamp",
    VariantType.TIMESTAMP_NANOS_NTZ: "timestamp",
    VariantType.STRING: "string",
    VariantType.BINARY: "bytes",
    VariantType.UUID: "uuid",
}
_MICROS = frozenset({VariantType.TIMESTAMP_TZ, VariantType.TIMESTAMP_NTZ})


def _timestamp(v: Variant) -> celtypes.TimestampType | None:
    """A timestamp variant as a CEL timestamp, its nanoseconds floored to micros (a datetime's
    grain); None outside the years 1-9999 a CEL timestamp holds."""
    raw = v.get_long()
    micros = raw if v.get_type() in _MICROS else raw // 1000
    if not _EPOCH_SECONDS[0] <= micros // 1_000_000 <= _EPOCH_SECONDS[1]:
        return None
    return celtypes.TimestampType(_EPOCH + datetime.timedelta(microseconds=micros))


# ``variants.as``'s type names: the label each reads, and how.
_EXTRACT: dict[str, Callable[[Variant], Any]] = {
    "string": lambda v: celtypes.StringType(v.get_string()),
    "int": lambda v: celtypes.IntType(v.get_long()),
    "double": lambda v: celtypes.DoubleType(v.get_float() if v.get_type() is VariantType.FLOAT else v.get_double()),
    "boolean": lambda v: celtypes.BoolType(v.get_boolean()),
    "decimal": Variant.get_decimal,
    "timestamp": _timestamp,
    "bytes": lambda v: celtypes.BytesType(v.get_binary()),
}
_NOT_EXTRACTABLE = frozenset({"object", "array", "null", "date", "time", "uuid"})


def _bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise CELEvalError(f"variant: expected bytes, got {type(value).__name__}")


def _of(value: bytes, metadata: bytes) -> Variant | None:
    """None for no metadata at all: an unset field, or an Avro variant record left empty."""
    return Variant(value, metadata) if metadata else None


def _is_variant_message(value: Any) -> bool:
    return getattr(getattr(value, "DESCRIPTOR", None), "full_name", "") == _VARIANT_MESSAGE


def _to_variant(value: Any) -> Variant | None:
    """``variant(dyn)``: what a record's variant field is in a rule, as a Variant."""
    if value is None or isinstance(value, Variant):
        return value
    for message in (value, getattr(value, "msg", None)):  # .msg: the view of a message in CEL
        if message is not None and _is_variant_message(message):
            return _of(_bytes(message.value), _bytes(message.metadata))
    if isinstance(value, Mapping):
        metadata, encoded = value.get("metadata", None), value.get("value", None)
        if metadata is not None and encoded is not None:
            return _of(_bytes(encoded), _bytes(metadata))
        if metadata is not None or encoded is not None:
            absent = "value" if encoded is None else "metadata"
            raise CELEvalError(f"variant: cannot convert map to Variant: missing '{absent}' entry")
    if isinstance(value, str):
        raise CELEvalError(
            "variant: cannot convert string to Variant; use variants.parseJson(s) for "
            "strict JSON parsing or variants.tryParseJson(s) for soft mode"
        )
    raise CELEvalError(f"variant: cannot convert {type(value).__name__} to Variant")


def _variant(*args: Any) -> Variant | None:
    """``variant(dyn)`` (null stays null), or ``variant(value bytes, metadata bytes)``."""
    if len(args) == 2:
        metadata = _bytes(args[1])
        if not metadata:  # given explicitly, empty metadata is a mistake, not an absent field
            raise CELEvalError("variant(value, metadata): metadata is empty, so there is no variant to read")
        return Variant(_bytes(args[0]), metadata)
    if len(args) != 1:
        raise CELEvalError(f"variant: expected 1 or 2 args, got {len(args)}")
    return _to_variant(args[0])


def _argument(value: Any, function: str) -> Variant | None:
    """A ``variants.*`` receiver: null passes as None, a variant field is read as one."""
    try:
        return _to_variant(value)
    except CELEvalError as e:
        raise CELEvalError(f"{function}: expected Variant, got {type(value).__name__}") from e


def _string(value: Any, function: str, what: str) -> str:
    if not isinstance(value, str):
        raise CELEvalError(f"{function}: expected a {what}, got {type(value).__name__}")
    return str(value)


def _parse_json(text: Any) -> Variant:
    if not isinstance(text, str):
        raise CELEvalError("variants.parseJson: expected a string")
    try:
        return variant_utils.parse_json(str(text))
    except ValueError as e:  # VariantError is one, as is json's JSONDecodeError
        raise CELEvalError(f"variants.parseJson: {e}") from e


def _try_parse_json(text: Any) -> Variant | None:
    """Soft about the JSON, not about the argument: a number is still a mistake."""
    if not isinstance(text, str):
        raise CELEvalError("variants.tryParseJson: expected a string")
    try:
        return variant_utils.parse_json(str(text))
    except Exception:  # any text that does not parse (or nests too deep) is null
        return None


def _type(value: Any) -> Any:
    v = _argument(value, "variants.type")
    return None if v is None else celtypes.StringType(_LABELS[v.get_type()])


def _is_null(value: Any) -> celtypes.BoolType:
    """True for a Variant of type NULL only; never an error."""
    try:
        v = _to_variant(value)
    except Exception:
        return celtypes.BoolType(False)
    return celtypes.BoolType(v is not None and v.get_type() is VariantType.NULL)


def _path(value: Any, path: Any) -> Variant | None:
    # The argument is checked before the receiver: a mistyped call fails even on a null one.
    text = _string(path, "variants.path", "string path")
    v = _argument(value, "variants.path")
    if v is None:
        return None
    try:
        return variant_path.walk(v, text)
    except ValueError as e:
        raise CELEvalError(f"variants.path: {e}") from e


def _field(value: Any, key: Any) -> Variant | None:
    name = _string(key, "variants.field", "string key")
    v = _argument(value, "variants.field")
    if v is None or v.get_type() is not VariantType.OBJECT:
        return None
    return v.get_field_by_key(name)


def _index(value: Any, index: Any) -> Variant | None:
    # celpy's bool and uint are ints in Python; CEL's index is an int and nothing else.
    if not isinstance(index, int) or isinstance(index, (bool, celtypes.BoolType, celtypes.UintType)):
        raise CELEvalError(f"variants.index: expected an int index, got {type(index).__name__}")
    v = _argument(value, "variants.index")
    if v is None or v.get_type() is not VariantType.ARRAY or not 0 <= index <= _INT32_MAX:
        return None
    return v.get_element_at_index(int(index))


def _extract(value: Any, type_name: Any, *, soft: bool) -> Any:
    """``variants.as`` (``soft``: ``variants.tryAs``, null on a mismatch) of a named type."""
    function = "variants.tryAs" if soft else "variants.as"
    wanted = _string(type_name, function, "string type name")
    v = _argument(value, function)
    if v is None:
        return None
    if wanted in _NOT_EXTRACTABLE:
        raise CELEvalError(
            f"variants.as: type '{wanted}' is not supported for extraction "
            "(use variants.type/variants.path/variants.field/variants.index instead)"
        )
    if wanted not in _EXTRACT:
        if soft:
            return None
        raise CELEvalError(
            f"variants.as: unknown type '{wanted}' (expected one of: string, int, "
            "double, boolean, decimal, timestamp, bytes)"
        )
    kind = v.get_type()
    if _LABELS[kind] != wanted:
        if soft:
            return None
        raise CELEvalError(f"variants.as: variant is not {wanted}-typed (type={kind.value})")
    extracted = _EXTRACT[wanted](v)
    if extracted is None and not soft:  # a timestamp past the years CEL holds
        raise CELEvalError(
            f"variants.as: timestamp {v.get_long()} is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999999Z"
        )
    return extracted


def _to_json(value: Any) -> Any:
    v = _argument(value, "variants.toJson")
    return None if v is None else celtypes.StringType(v.to_json())


# By the names CEL expressions call them.
VARIANT_FUNCS: dict[str, Any] = {
    "variant": _variant,
    "variants.parseJson": _parse_json,
    "variants.tryParseJson": _try_parse_json,
    "variants.type": _type,
    "variants.isNull": _is_null,
    "variants.path": _path,
    "variants.field": _field,
    "variants.index": _index,
    "variants.as": lambda value, type_name: _extract(value, type_name, soft=False),
    "variants.tryAs": lambda value, type_name: _extract(value, type_name, soft=True),
    "variants.toJson": _to_json,
}
