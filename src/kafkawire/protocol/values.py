"""The values the codec reads and writes: `Struct`, the fixed-size numbers, fields' defaults."""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any

from .schema import NONE, Array, Field

Buffer = bytes | bytearray | memoryview


class Struct(dict[str, Any]):
    """A decoded (or to-be-encoded) message: a dict whose keys also read as attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


class UnsupportedFieldError(ValueError):
    """A field was given a value in a version that cannot carry it."""


INTS: dict[str, struct.Struct] = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"),
    "uint16": struct.Struct(">H"),
    "float64": struct.Struct(">d"),
}
INT_FORMATS = {name: s.format[1:] for name, s in INTS.items()}  # "int32" -> "i"
FORMAT_TYPES = {fmt: name for name, fmt in INT_FORMATS.items()}


def default_struct(fields: tuple[Field, ...]) -> Struct:
    """A struct holding every field's default, as the decoder fills fields a version lacks."""
    return Struct({fld.name: default_value(fld) for fld in fields})


def default_value(fld: Field) -> Any:
    """A field's default as a decoded message holds it (a fresh list or struct each time)."""
    return default_maker(fld)()


def default_maker(fld: Field) -> Callable[[], Any]:
    """What makes ``fld``'s default, its schema walked once: a decoder calls it for every struct it
    reads that lacks the field (each partition of a Fetch v11 answer lacks three structs of later
    versions), where walking the schema each time took most of the decoding."""
    if fld.is_struct and not isinstance(fld.type, Array):
        if fld.nullable != NONE:  # a nullable struct (ConsumerGroupHeartbeat's assignment): null, as in Kafka
            return _null
        fields = fld.struct_fields
        template = {f.name: f.default for f in fields}  # the fields in order; the fresh ones replaced
        fresh = [(f.name, default_maker(f)) for f in fields if f.is_struct or isinstance(f.default, list)]
        if not fresh:  # only shared defaults: a copy of the template, made without a Python frame
            return functools.partial(Struct, template)

        def make_struct() -> Struct:
            obj = Struct(template)
            for name, make in fresh:
                obj[name] = make()
            return obj

        return make_struct
    default = fld.default
    if isinstance(default, list):
        return default.copy  # a fresh list per call (a C method: no frame)
    return lambda: default


def _null() -> None:
    return None
