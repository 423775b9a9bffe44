"""The one walk over a schema at a version: its plan, as plain data (tuples of names, ints, defaults).

Which fields a version carries, in which order, which travel tagged (sorted by tag), which it lacks
(and must be left at their default), what a decoded struct holds before reading (constants shared,
mutable defaults made anew), and what each array costs the `DecodeBudget`: all decided here, once.
The pure-Python codec compiles a plan into closures (codec.py encodes, decoding.py decodes); the C
extension's twin (native_c/protocol_codec.c) walks the same tuples at run time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NamedTuple

from .schema import Array, Field, FieldType, MessageSchema
from .values import INTS, Struct, UnsupportedFieldError, default_maker, default_value

# What a field holds: the plan's opcodes (protocol_codec.c numbers them the same). The numbers come
# first, in INTS' order: a kind below BOOL is a fixed-size number.
INT8, INT16, INT32, INT64, UINT16, FLOAT64, BOOL, UUID, STRING, BYTES, RECORDS, STRUCT, ARRAY = range(13)
KINDS = {
    "int8": INT8,
    "int16": INT16,
    "int32": INT32,
    "int64": INT64,
    "uint16": UINT16,
    "float64": FLOAT64,
    "bool": BOOL,
    "uuid": UUID,
    "string": STRING,
    "bytes": BYTES,
    "records": RECORDS,
}
TYPE_NAMES = {kind: name for name, kind in KINDS.items()}


class Op(NamedTuple):
    """How one value is written and read. ``where``: its dotted name from the message's name (for
    encoding errors); ``path``: from the message's top (the budget's count limits name it so).
    ``sub``: a STRUCT's `StructPlan`, an ARRAY's element `Op`. ``cost`` and ``min_size``: an ARRAY's
    element, as charged to the budget and as the fewest bytes it takes."""

    kind: int
    nullable: bool
    flexible: bool
    where: str
    path: str
    sub: Any = None
    cost: int = 0
    min_size: int = 0


class StructPlan(NamedTuple):
    """A struct at one version. ``fields``: (name, default, op) in wire order; ``absent``: (name,
    default, error message) of the fields the version cannot carry; ``tagged``: (tag, name,
    default, op) sorted by tag; ``constants`` and ``fresh``: what a decoded struct holds before its
    fields are read, in order: (name, value) shared, then (name, maker) called for each struct."""

    flexible: bool
    fields: tuple[tuple[str, Any, Op], ...]
    absent: tuple[tuple[str, Any, str], ...]
    tagged: tuple[tuple[int, str, Any, Op], ...]
    constants: tuple[tuple[str, Any], ...]
    fresh: tuple[tuple[str, Callable[[], Any]], ...]


def message_plan(schema: MessageSchema, version: int) -> StructPlan:
    if version not in schema.versions:
        raise UnsupportedFieldError(f"{schema.name} has no version {version} (valid: {schema.versions})")
    return _struct_plan(schema.name, "", schema.fields, version, version in schema.flexible)


def _struct_plan(where: str, path: str, fields: tuple[Field, ...], version: int, flexible: bool) -> StructPlan:
    """``where``: the struct's dotted name from the message's name; ``path``: from its top ("")."""
    regular: list[tuple[str, Any, Op]] = []
    absent: list[tuple[str, Any, str]] = []
    tagged: list[tuple[int, str, Any, Op]] = []
    constants: list[tuple[str, Any]] = []
    fresh: list[tuple[str, Callable[[], Any]]] = []
    for fld in fields:
        in_version = version in fld.versions
        is_tagged = in_version and flexible and fld.tag is not None and version in fld.tagged
        if in_version:
            field_flexible = flexible if fld.flexible is None else version in fld.flexible
            field_path = f"{path}.{fld.name}" if path else fld.name
            op = _field_op(f"{where}.{fld.name}", field_path, fld, version, field_flexible)
            if is_tagged:
                tagged.append((fld.tag, fld.name, default_value(fld), op))  # type: ignore[arg-type]
            else:
                regular.append((fld.name, default_value(fld), op))
        elif not fld.ignorable and not fld.is_struct:
            absent.append((fld.name, fld.default, f"{where}.{fld.name} cannot be sent in version {version}"))
        if not in_version or is_tagged:
            if fld.is_struct or isinstance(fld.default, list):
                fresh.append((fld.name, default_maker(fld)))
            else:
                constants.append((fld.name, fld.default))
    tagged.sort(key=lambda t: t[0])
    return StructPlan(flexible, tuple(regular), tuple(absent), tuple(tagged), tuple(constants), tuple(fresh))


def _field_op(where: str, path: str, fld: Field, version: int, flexible: bool) -> Op:
    nullable = version in fld.nullable
    t = fld.type
    if isinstance(t, Array):
        of = t.of
        if isinstance(of, tuple):
            element = Op(STRUCT, False, flexible, where, path, _struct_plan(where, path, of, version, flexible))
        elif isinstance(of, str):
            element = Op(KINDS[of], False, flexible, where, path)
        else:
            raise TypeError(f"{where}: nested arrays are not part of the Kafka protocol")
        size = max(1, _min_size(of, version, flexible))
        return Op(ARRAY, nullable, flexible, where, path, element, _object_cost(of, version), size)
    if isinstance(t, tuple):
        return Op(STRUCT, nullable, flexible, where, path, _struct_plan(where, path, t, version, flexible))
    return Op(KINDS[t], nullable, flexible, where, path)


_FIXED_SIZES = {"bool": 1, "uuid": 16, **{name: s.size for name, s in INTS.items()}}


def _min_size(type_: FieldType, version: int, flexible: bool) -> int:
    """The fewest bytes a value of ``type_`` takes in ``version`` (a null or empty one)."""
    if isinstance(type_, str):
        if type_ in _FIXED_SIZES:
            return _FIXED_SIZES[type_]
        return 1 if flexible else (2 if type_ == "string" else 4)  # the length alone
    if isinstance(type_, Array):
        return 1 if flexible else 4
    size = 1 if flexible else 0  # the tagged-field count
    for fld in type_:
        if version in fld.versions and not (flexible and fld.tag is not None and version in fld.tagged):
            size += _min_size(fld.type, version, flexible if fld.flexible is None else version in fld.flexible)
    return size


# What a decoded value costs in Python objects beyond its bytes (a str's or bytes' content is at
# most the message's own size): measured with sys.getsizeof on CPython 3.11, rounded up.
_VALUE_COSTS = {
    "bool": 0,
    "int8": 0,
    "int16": 32,
    "int32": 32,
    "int64": 32,
    "uint16": 32,
    "float64": 24,
    "uuid": 104,
    "string": 56,
    "bytes": 40,
    "records": 40,
}
_LIST_COST = 56
_SLOT_COST = 8  # an element's pointer in its list


def _object_cost(type_: FieldType, version: int) -> int:
    """The estimated size of one decoded value of ``type_`` (an array's elements are charged when
    that array is decoded, so an array field costs its empty list here)."""
    if isinstance(type_, str):
        return _SLOT_COST + _VALUE_COSTS.get(type_, 56)
    if isinstance(type_, Array):
        return _SLOT_COST + _LIST_COST
    cost = _SLOT_COST + sys.getsizeof(Struct.fromkeys(range(len(type_))))
    for fld in type_:
        if version in fld.versions or isinstance(fld.default, list):
            cost += _object_cost(fld.type, version)
    return cost
