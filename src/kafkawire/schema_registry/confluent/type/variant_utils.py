"""The Variant binary encoding (Parquet's VariantEncoding.md; Spark's and Iceberg's VARIANT): a value
is two byte strings, a metadata dictionary of the object keys and a self-describing value that
names its keys by their index in it.

``Variant`` reads an encoded value in place, ``VariantBuilder`` writes one, ``parse_json`` makes one
of JSON text and ``Variant.to_json`` gives the JSON back. Names, bytes, JSON text and errors are
those of confluent-kafka's module of this name (Confluent's Java ``VariantUtils`` underneath), so a
value written by either client is read alike by both and by Confluent's other languages.

The grammar (little-endian throughout; a header byte's low 2 bits are the basic type, the high 6
its type info)::

    metadata  := header(version 1 | offset_size-1 << 6) dict_size offset*(dict_size+1) key-bytes
    primitive := (code << 2 | 0) payload         code in PRIMITIVE_WIDTHS below
    short str := (length << 2 | 1) utf-8          length <= 63
    object    := (is_large << 6 | id_size-1 << 4 | offset_size-1 << 2 | 2)
                 count(1 or 4) field_id*count offset*(count+1) values   (ids in key order)
    array     := (is_large << 4 | offset_size-1 << 2 | 3) count(1 or 4) offset*(count+1) values
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
import struct
import uuid as uuid_mod
from collections.abc import Callable
from enum import Enum
from typing import Any

__all__ = [
    "ARRAY",
    "BASIC_TYPE_BITS",
    "BASIC_TYPE_MASK",
    "BINARY",
    "DATE",
    "DECIMAL4",
    "DECIMAL8",
    "DECIMAL16",
    "DOUBLE",
    "FALSE",
    "FLOAT",
    "I8_MAX",
    "I8_MIN",
    "I16_MAX",
    "I16_MIN",
    "I32_MAX",
    "I32_MIN",
    "I64_MAX",
    "I64_MIN",
    "INT1",
    "INT2",
    "INT4",
    "INT8",
    "LONG_STR",
    "MAX_DECIMAL4_PRECISION",
    "MAX_DECIMAL4_VALUE",
    "MAX_DECIMAL8_PRECISION",
    "MAX_DECIMAL8_VALUE",
    "MAX_DECIMAL16_PRECISION",
    "MAX_DECIMAL16_VALUE",
    "MAX_SHORT_STR_SIZE",
    "NULL",
    "OBJECT",
    "PRIMITIVE",
    "SHORT_STR",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMP_NANOS",
    "TIMESTAMP_NANOS_NTZ",
    "TIMESTAMP_NTZ",
    "TRUE",
    "TYPE_INFO_MASK",
    "U8_MAX",
    "U16_MAX",
    "U24_MAX",
    "U24_SIZE",
    "U32_SIZE",
    "UUID",
    "UUID_SIZE",
    "VERSION",
    "VERSION_MASK",
    "Variant",
    "VariantBuilder",
    "VariantError",
    "VariantType",
    "from_bytes",
    "parse_json",
    "to_json_string",
]

BASIC_TYPE_BITS = 2
BASIC_TYPE_MASK = 0x3
TYPE_INFO_MASK = 0x3F
MAX_SHORT_STR_SIZE = 0x3F

# Basic types: the low two bits of a value's header byte.
PRIMITIVE = 0
SHORT_STR = 1
OBJECT = 2
ARRAY = 3

# Primitive type codes: the high six bits of a primitive's header byte.
NULL = 0
TRUE = 1
FALSE = 2
INT1 = 3
INT2 = 4
INT4 = 5
INT8 = 6
DOUBLE = 7
DECIMAL4 = 8
DECIMAL8 = 9
DECIMAL16 = 10
DATE = 11
TIMESTAMP = 12
TIMESTAMP_NTZ = 13
FLOAT = 14
BINARY = 15
LONG_STR = 16
TIME = 17
TIMESTAMP_NANOS = 18
TIMESTAMP_NANOS_NTZ = 19
UUID = 20

VERSION = 1
VERSION_MASK = 0x0F

U8_MAX = 0xFF
U16_MAX = 0xFFFF
U24_MAX = 0xFFFFFF
U24_SIZE = 3
U32_SIZE = 4

I8_MAX = 0x7F
I8_MIN = -0x80
I16_MAX = 0x7FFF
I16_MIN = -0x8000
I32_MAX = 0x7FFFFFFF
I32_MIN = -0x80000000
I64_MAX = 0x7FFFFFFFFFFFFFFF
I64_MIN = -0x8000000000000000

UUID_SIZE = 16

MAX_DECIMAL4_PRECISION = 9
MAX_DECIMAL4_VALUE = 10**MAX_DECIMAL4_PRECISION
MAX_DECIMAL8_PRECISION = 18
MAX_DECIMAL8_VALUE = 10**MAX_DECIMAL8_PRECISION
MAX_DECIMAL16_PRECISION = 38
MAX_DECIMAL16_VALUE = 10**MAX_DECIMAL16_PRECISION

# Every digit kept: an unscaled value of 38 digits would be rounded by the default context (28).
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_EPOCH_DAY = datetime.date(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_LOCAL = datetime.datetime(1970, 1, 1)
_NANOS = 1_000_000_000
# RFC 3339's full-date and partial-time: years 0001-9999, hours 00-23. A DATE or TIME the encoding
# can hold outside them has no JSON form and is refused by name rather than by Python's OverflowError.
_DATE_DAYS = (-719162, 2932896)
_TIME_MICROS = (0, 86_400_000_000 - 1)


class VariantError(ValueError):
    """A Variant value that is malformed, out of the encoding's range, or read as another type."""


class VariantType(Enum):
    """What a Variant value is, each integer, decimal and timestamp width its own member (as Java's
    ``Variant.Type``)."""

    OBJECT = "OBJECT"
    ARRAY = "ARRAY"
    NULL = "NULL"
    BOOLEAN = "BOOLEAN"
    BYTE = "BYTE"
    SHORT = "SHORT"
    INT = "INT"
    LONG = "LONG"
    STRING = "STRING"
    DOUBLE = "DOUBLE"
    DECIMAL4 = "DECIMAL4"
    DECIMAL8 = "DECIMAL8"
    DECIMAL16 = "DECIMAL16"
    DATE = "DATE"
    TIMESTAMP_TZ = "TIMESTAMP_TZ"
    TIMESTAMP_NTZ = "TIMESTAMP_NTZ"
    FLOAT = "FLOAT"
    BINARY = "BINARY"
    TIME = "TIME"
    TIMESTAMP_NANOS_TZ = "TIMESTAMP_NANOS_TZ"
    TIMESTAMP_NANOS_NTZ = "TIMESTAMP_NANOS_NTZ"
    UUID = "UUID"


# Each primitive type code: its type, and the width of its fixed-size payload (0 for none; the
# strings and binaries carry a 4-byte length, the decimals a scale byte before it).
_PRIMITIVES: dict[int, tuple[VariantType, int]] = {
    NULL: (VariantType.NULL, 0),
    TRUE: (VariantType.BOOLEAN, 0),
    FALSE: (VariantType.BOOLEAN, 0),
    INT1: (VariantType.BYTE, 1),
    INT2: (VariantType.SHORT, 2),
    INT4: (VariantType.INT, 4),
    INT8: (VariantType.LONG, 8),
    DOUBLE: (VariantType.DOUBLE, 8),
    DECIMAL4: (VariantType.DECIMAL4, 4),
    DECIMAL8: (VariantType.DECIMAL8, 8),
    DECIMAL16: (VariantType.DECIMAL16, 16),
    DATE: (VariantType.DATE, 4),
    TIMESTAMP: (VariantType.TIMESTAMP_TZ, 8),
    TIMESTAMP_NTZ: (VariantType.TIMESTAMP_NTZ, 8),
    FLOAT: (VariantType.FLOAT, 4),
    BINARY: (VariantType.BINARY, 0),
    LONG_STR: (VariantType.STRING, 0),
    TIME: (VariantType.TIME, 8),
    TIMESTAMP_NANOS: (VariantType.TIMESTAMP_NANOS_TZ, 8),
    TIMESTAMP_NANOS_NTZ: (VariantType.TIMESTAMP_NANOS_NTZ, 8),
    UUID: (VariantType.UUID, UUID_SIZE),
}

# The integer-backed codes each getter reads, each a narrower one widened as Java's getters widen.
_BYTE_CODES = frozenset({INT1})
_SHORT_CODES = _BYTE_CODES | {INT2}
_INT_CODES = _SHORT_CODES | {INT4}
_LONG_CODES = _INT_CODES | {INT8, DATE, TIMESTAMP, TIMESTAMP_NTZ, TIME, TIMESTAMP_NANOS, TIMESTAMP_NANOS_NTZ}

# Each decimal code: its unscaled width, and the largest precision (and scale) it holds.
_DECIMALS: dict[int, tuple[int, int]] = {
    DECIMAL4: (4, MAX_DECIMAL4_PRECISION),
    DECIMAL8: (8, MAX_DECIMAL8_PRECISION),
    DECIMAL16: (16, MAX_DECIMAL16_PRECISION),
}

# The smallest signed integer code a whole number fits: INT1, INT2, INT4, INT8.
_INTEGERS = (
    (INT1, 1, I8_MIN, I8_MAX),
    (INT2, 2, I16_MIN, I16_MAX),
    (INT4, 4, I32_MIN, I32_MAX),
    (INT8, 8, I64_MIN, I64_MAX),
)


def _bounds(pos: int, length: int) -> None:
    if not 0 <= pos < length:
        raise VariantError("malformed variant: index out of bounds")


def _uint(data: bytes, pos: int, size: int, *, signed: bool = False) -> int:
    _bounds(pos, len(data))
    _bounds(pos + size - 1, len(data))
    return int.from_bytes(data[pos : pos + size], "little", signed=signed)


def _metadata_key(metadata: bytes, key_id: int) -> str:
    """The ``key_id``-th key of the metadata dictionary."""
    _bounds(0, len(metadata))
    size = (metadata[0] >> 6 & 0x3) + 1
    count = _uint(metadata, 1, size)
    if key_id >= count:
        raise VariantError("malformed variant: field id out of range")
    strings = 1 + (count + 2) * size
    start = _uint(metadata, 1 + (key_id + 1) * size, size)
    end = _uint(metadata, 1 + (key_id + 2) * size, size)
    if start > end:
        raise VariantError("malformed variant: non-monotonic metadata offsets")
    _bounds(strings + end - 1, len(metadata))
    return metadata[strings + start : strings + end].decode("utf-8")


class Variant:
    """One encoded value, read in place at ``pos`` of ``value`` (a field or element of a larger
    value shares its buffers: navigating copies nothing)."""

    _BINARY_SEARCH_THRESHOLD = 32  # fields past which a key is looked up by bisection

    def __init__(self, value: bytes, metadata: bytes, pos: int = 0) -> None:
        self.value = bytes(value)
        self.metadata = bytes(metadata)
        self.pos = pos
        _bounds(0, len(self.metadata))
        if self.metadata[0] & VERSION_MASK != VERSION:
            raise VariantError(f"unsupported variant metadata version: {self.metadata[0] & VERSION_MASK}")

    def standalone_value_bytes(self) -> bytes:
        """This value's bytes without the parent's before it (what an encoder is handed: ``value``
        is the whole shared buffer). Later siblings stay after it, which a reader never reaches."""
        return self.value[self.pos :] if self.pos else self.value

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Variant):
            return NotImplemented
        return self.metadata == other.metadata and self.standalone_value_bytes() == other.standalone_value_bytes()

    def __hash__(self) -> int:
        return hash((self.standalone_value_bytes(), self.metadata))

    def __repr__(self) -> str:
        return f"Variant(value={self.standalone_value_bytes()!r}, metadata={self.metadata!r})"

    # -- what it is

    def _header(self) -> tuple[int, int]:
        _bounds(self.pos, len(self.value))
        header = self.value[self.pos]
        return header & BASIC_TYPE_MASK, header >> BASIC_TYPE_BITS & TYPE_INFO_MASK

    def get_type(self) -> VariantType:
        basic, info = self._header()
        if basic == SHORT_STR:
            return VariantType.STRING
        if basic == OBJECT:
            return VariantType.OBJECT
        if basic == ARRAY:
            return VariantType.ARRAY
        if info not in _PRIMITIVES:
            raise VariantError(f"unknown variant primitive type: {info}")
        return _PRIMITIVES[info][0]

    def _code(self) -> int:
        basic, info = self._header()
        if basic != PRIMITIVE:
            raise VariantError("expected a primitive variant value")
        return info

    # -- primitives

    def _integer(self, codes: frozenset[int], kind: str) -> int:
        code = self._code()
        if code not in codes:
            raise VariantError(f"variant is not {kind}")
        return _uint(self.value, self.pos + 1, _PRIMITIVES[code][1], signed=True)

    def get_boolean(self) -> bool:
        code = self._code()
        if code not in (TRUE, FALSE):
            raise VariantError("variant is not a boolean")
        return code == TRUE

    def get_byte(self) -> int:
        return self._integer(_BYTE_CODES, "a byte-width integer")

    def get_short(self) -> int:
        return self._integer(_SHORT_CODES, "a short-width integer")

    def get_int(self) -> int:
        return self._integer(_INT_CODES, "an int-width integer")

    def get_long(self) -> int:
        """Any integer, and the raw count of a date (days), time or timestamp (micros or nanos)."""
        return self._integer(_LONG_CODES, "an integer-backed type")

    def _packed(self, code: int, fmt: str, kind: str) -> float:
        if self._code() != code:
            raise VariantError(f"variant is not a {kind}")
        width = struct.calcsize(fmt)
        _bounds(self.pos + width, len(self.value))
        value: float = struct.unpack(fmt, self.value[self.pos + 1 : self.pos + 1 + width])[0]
        return value

    def get_float(self) -> float:
        """A FLOAT's 32-bit value (exactly, as a Python float); a DOUBLE is not narrowed."""
        return self._packed(FLOAT, "<f", "float")

    def get_double(self) -> float:
        """A DOUBLE; a FLOAT is not widened (``get_float`` reads it)."""
        return self._packed(DOUBLE, "<d", "double")

    def get_decimal(self) -> decimal.Decimal:
        code = self._code()
        if code not in _DECIMALS:
            raise VariantError("variant is not a decimal")
        width, precision = _DECIMALS[code]
        scale = _uint(self.value, self.pos + 1, 1)
        unscaled = _uint(self.value, self.pos + 2, width, signed=True)
        if abs(unscaled) >= 10**precision or scale > precision:
            raise VariantError("malformed variant: decimal out of range")
        return decimal.Decimal(unscaled).scaleb(-scale, context=_EXACT)

    def _sized(self, start: int, length: int) -> bytes:
        _bounds(start + length - 1, len(self.value))
        return self.value[start : start + length]

    def get_binary(self) -> bytes:
        if self._code() != BINARY:
            raise VariantError("variant is not binary")
        return self._sized(self.pos + 1 + U32_SIZE, _uint(self.value, self.pos + 1, U32_SIZE))

    def get_uuid(self) -> uuid_mod.UUID:
        if self._code() != UUID:
            raise VariantError("variant is not a uuid")
        return uuid_mod.UUID(bytes=self._sized(self.pos + 1, UUID_SIZE))

    def get_string(self) -> str:
        basic, info = self._header()
        if basic == SHORT_STR:
            return self._sized(self.pos + 1, info).decode("utf-8")
        if basic == PRIMITIVE and info == LONG_STR:
            return self._sized(self.pos + 1 + U32_SIZE, _uint(self.value, self.pos + 1, U32_SIZE)).decode("utf-8")
        raise VariantError("variant is not a string")

    # -- objects and arrays

    def _object(self) -> tuple[int, int, int, int, int, int]:
        """(count, id size, offset size, where the ids start, where the offsets, where the values)."""
        basic, info = self._header()
        if basic != OBJECT:
            raise VariantError("variant is not an object")
        count_size = U32_SIZE if info >> 4 & 0x1 else 1
        count = _uint(self.value, self.pos + 1, count_size)
        id_size, offset_size = (info >> 2 & 0x3) + 1, (info & 0x3) + 1
        ids = self.pos + 1 + count_size
        offsets = ids + count * id_size
        return count, id_size, offset_size, ids, offsets, offsets + (count + 1) * offset_size

    def _array(self) -> tuple[int, int, int, int]:
        """(count, offset size, where the offsets start, where the values)."""
        basic, info = self._header()
        if basic != ARRAY:
            raise VariantError("variant is not an array")
        count_size = U32_SIZE if info >> 2 & 0x1 else 1
        count = _uint(self.value, self.pos + 1, count_size)
        offset_size = (info & 0x3) + 1
        offsets = self.pos + 1 + count_size
        return count, offset_size, offsets, offsets + (count + 1) * offset_size

    def num_object_fields(self) -> int:
        return self._object()[0]

    def num_array_elements(self) -> int:
        return self._array()[0]

    def _field(self, index: int) -> tuple[str, Variant]:
        _, id_size, offset_size, ids, offsets, values = self._object()
        key = _metadata_key(self.metadata, _uint(self.value, ids + index * id_size, id_size))
        at = values + _uint(self.value, offsets + index * offset_size, offset_size)
        return key, Variant(self.value, self.metadata, at)

    def get_field_by_key(self, key: str) -> Variant | None:
        """The field named ``key``, or None. Fields are in key order: a large object is bisected."""
        count = self._object()[0]
        if count < self._BINARY_SEARCH_THRESHOLD:
            for index in range(count):
                name, value = self._field(index)
                if name == key:
                    return value
            return None
        low, high = 0, count - 1
        while low <= high:
            middle = (low + high) // 2
            name, value = self._field(middle)
            if name == key:
                return value
            if name < key:
                low = middle + 1
            else:
                high = middle - 1
        return None

    def get_field_at_index(self, idx: int) -> tuple[str, Variant]:
        """The ``idx``-th field (in key order) and its name."""
        return self._field(idx)

    def get_element_at_index(self, index: int) -> Variant | None:
        """The ``index``-th element, or None past either end."""
        count, offset_size, offsets, values = self._array()
        if not 0 <= index < count:
            return None
        return Variant(
            self.value, self.metadata, values + _uint(self.value, offsets + index * offset_size, offset_size)
        )

    # -- JSON

    def to_json(self) -> str:
        """JSON text as every Confluent client writes it: temporal values as ISO-8601 strings with
        their seconds, binaries in base64, decimals in plain notation, non-finite doubles bare."""
        kind = self.get_type()
        if kind is VariantType.OBJECT:
            fields = (self.get_field_at_index(i) for i in range(self.num_object_fields()))
            return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + v.to_json() for k, v in fields) + "}"
        if kind is VariantType.ARRAY:
            items = []
            for index in range(self.num_array_elements()):
                element = self.get_element_at_index(index)
                if element is None:
                    raise VariantError("array element count exceeds the encoded elements")
                items.append(element.to_json())
            return "[" + ",".join(items) + "]"
        return _JSON[kind](self)


def _fraction(nanos: int) -> str:
    """A nanosecond fraction in 3, 6 or 9 digits, as Java's Instant.toString() groups it."""
    if not nanos:
        return ""
    if not nanos % 1_000_000:
        return f".{nanos // 1_000_000:03d}"
    if not nanos % 1_000:
        return f".{nanos // 1_000:06d}"
    return f".{nanos:09d}"


def _date_time(nanos: int, zone: str) -> str:
    """An instant (``zone`` "Z") or a local date-time (``zone`` "") of nanoseconds since the epoch,
    its seconds always written (Java's LocalDateTime drops zero seconds; Confluent's clients don't)."""
    seconds, fraction = divmod(nanos, _NANOS)  # floors, so before 1970 counts back as Java's floorMod
    m = (_EPOCH_UTC if zone else _EPOCH_LOCAL) + datetime.timedelta(seconds=seconds)
    return f'"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}{_fraction(fraction)}{zone}"'


def _date(days: int) -> str:
    if not _DATE_DAYS[0] <= days <= _DATE_DAYS[1]:
        raise VariantError(f"date epoch day ({days}) must be in range [{_DATE_DAYS[0]}, {_DATE_DAYS[1]}]")
    return f'"{(_EPOCH_DAY + datetime.timedelta(days=days)).isoformat()}"'


def _time(micros: int) -> str:
    if not _TIME_MICROS[0] <= micros <= _TIME_MICROS[1]:
        raise VariantError(
            f"time microseconds of day ({micros}) must be in range [{_TIME_MICROS[0]}, {_TIME_MICROS[1]}]"
        )
    seconds, fraction = divmod(micros * 1000, _NANOS)
    minutes, second = divmod(seconds, 60)
    return f'"{minutes // 60:02d}:{minutes % 60:02d}:{second:02d}{_fraction(fraction)}"'


def _non_finite(number: float) -> str | None:
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return None


def _whole(number: float) -> str | None:
    """``N.0`` for a whole number below 1e16, as Java's Double.toString writes it (-0.0 is left to
    ``repr``, which keeps its sign)."""
    if number.is_integer() and abs(number) < 1e16 and not (number == 0 and math.copysign(1.0, number) < 0):
        return f"{int(number)}.0"
    return None


def _double(number: float) -> str:
    return _non_finite(number) or _whole(number) or repr(number)


def _float(number: float) -> str:
    """The fewest digits that read back as the same 32-bit float (Java's Float.toString), not the
    double's: 0.1f is "0.1", not "0.10000000149011612"."""
    text = _non_finite(number) or _whole(number)
    if text:
        return text
    for digits in range(1, 10):
        candidate = float(f"{number:.{digits}g}")
        try:
            narrowed = struct.unpack("<f", struct.pack("<f", candidate))[0]
        except OverflowError:  # rounded past the float range: more digits
            continue
        if narrowed == number:
            return repr(candidate)
    return repr(number)


# Each primitive type's JSON text.
_JSON: dict[VariantType, Callable[[Variant], str]] = {
    VariantType.NULL: lambda v: "null",
    VariantType.BOOLEAN: lambda v: "true" if v.get_boolean() else "false",
    VariantType.STRING: lambda v: json.dumps(v.get_string(), ensure_ascii=False),
    VariantType.BYTE: lambda v: str(v.get_long()),
    VariantType.SHORT: lambda v: str(v.get_long()),
    VariantType.INT: lambda v: str(v.get_long()),
    VariantType.LONG: lambda v: str(v.get_long()),
    VariantType.FLOAT: lambda v: _float(v.get_float()),
    VariantType.DOUBLE: lambda v: _double(v.get_double()),
    VariantType.DECIMAL4: lambda v: format(v.get_decimal(), "f"),
    VariantType.DECIMAL8: lambda v: format(v.get_decimal(), "f"),
    VariantType.DECIMAL16: lambda v: format(v.get_decimal(), "f"),
    VariantType.DATE: lambda v: _date(v.get_long()),
    VariantType.TIMESTAMP_TZ: lambda v: _date_time(v.get_long() * 1000, "Z"),
    VariantType.TIMESTAMP_NTZ: lambda v: _date_time(v.get_long() * 1000, ""),
    VariantType.TIMESTAMP_NANOS_TZ: lambda v: _date_time(v.get_long(), "Z"),
    VariantType.TIMESTAMP_NANOS_NTZ: lambda v: _date_time(v.get_long(), ""),
    VariantType.TIME: lambda v: _time(v.get_long()),
    VariantType.BINARY: lambda v: '"' + base64.b64encode(v.get_binary()).decode("ascii") + '"',
    VariantType.UUID: lambda v: f'"{v.get_uuid()}"',
}


def from_bytes(value: bytes, metadata: bytes) -> Variant:
    return Variant(value, metadata)


def to_json_string(variant: Variant) -> str:
    return variant.to_json()


def parse_json(json_str: str) -> Variant:
    """JSON text as a Variant, numbers as Java's Jackson reads them: a fraction is a DOUBLE, a whole
    number the narrowest INT1-INT8, one past 64 bits a decimal of scale 0."""
    builder = VariantBuilder()
    builder.append_json(json.loads(json_str))
    return builder.build()


def _size_of(largest: int) -> int:
    """The bytes (1-4) an offset or id up to ``largest`` is written in."""
    for size, limit in ((1, U8_MAX), (2, U16_MAX), (U24_SIZE, U24_MAX)):
        if largest <= limit:
            return size
    return U32_SIZE


def _le(number: int, size: int) -> bytes:
    return number.to_bytes(size, "little")


class _Container:
    """An object or array being written: its values' bytes so far, and where each starts."""

    def __init__(self, is_object: bool) -> None:
        self.is_object = is_object
        self.data = bytearray()
        self.starts: list[int] = []
        self.keys: list[tuple[str, int]] = []  # an object's (key, key id), one per value
        self.key: tuple[str, int] | None = None  # an object's key waiting for its value


class VariantBuilder:
    """Writes one Variant: each ``append_*`` or ``start_*`` fills the next slot, the root value,
    the next array element, or the value of the key ``append_key`` gave. ``build()`` returns it.

    Objects are written with their fields in key order (the encoding's canonical form, which lets a
    reader bisect), keeping each value's bytes where it was written; the metadata dictionary holds
    every key once, in the order first met.
    """

    DEFAULT_SIZE_LIMIT = 16 * 1024 * 1024

    def __init__(self, size_limit: int = DEFAULT_SIZE_LIMIT) -> None:
        self.size_limit = size_limit
        self._root = bytearray()
        self._written = 0  # bytes in the root and every open container, held to size_limit
        self._open: list[_Container] = []
        self._key_ids: dict[str, int] = {}
        self._root_written = False

    # -- the slots

    def _slot(self) -> None:
        """Claim the slot the next value fills."""
        if not self._open:
            if self._root_written:
                raise VariantError("cannot append multiple root values")
            self._root_written = True
            return
        container = self._open[-1]
        if container.is_object:
            if container.key is None:
                raise VariantError("a value in an object must follow append_key")
            container.keys.append(container.key)
            container.key = None
        container.starts.append(len(container.data))

    def _write(self, *parts: bytes | int) -> None:
        """Append a value's bytes (a header byte as an int) where the slot is, within the limit."""
        size = sum(1 if isinstance(part, int) else len(part) for part in parts)
        if self._written + size > self.size_limit:
            raise VariantError("variant size limit exceeded")
        self._written += size
        out = self._open[-1].data if self._open else self._root
        for part in parts:
            if isinstance(part, int):
                out.append(part)
            else:
                out += part

    def _primitive(self, code: int, payload: bytes = b"") -> None:
        self._write(code << BASIC_TYPE_BITS | PRIMITIVE, payload)

    def _fixed(self, code: int, value: int, width: int) -> None:
        if self._written + 1 + width > self.size_limit:
            raise VariantError("variant size limit exceeded")
        try:
            payload = int(value).to_bytes(width, "little", signed=True)
        except OverflowError:
            raise VariantError(f"integer value out of range for a {width}-byte width") from None
        self._primitive(code, payload)

    # -- primitives

    def append_null(self) -> None:
        self._slot()
        self._primitive(NULL)

    def append_boolean(self, b: bool) -> None:
        self._slot()
        self._primitive(TRUE if b else FALSE)

    def append_byte(self, value: int) -> None:
        self._slot()
        self._fixed(INT1, value, 1)

    def append_short(self, value: int) -> None:
        self._slot()
        self._fixed(INT2, value, 2)

    def append_int(self, value: int) -> None:
        self._slot()
        self._fixed(INT4, value, 4)

    def append_long(self, value: int) -> None:
        self._slot()
        self._fixed(INT8, value, 8)

    def _append_integer(self, value: int) -> None:
        """The narrowest of INT1-INT8 that holds ``value``; past 64 bits, a decimal of scale 0."""
        for code, width, low, high in _INTEGERS:
            if low <= value <= high:
                self._fixed(code, value, width)
                return
        self._decimal(decimal.Decimal(value))

    def append_float(self, value: float) -> None:
        self._slot()
        if self._written + 5 > self.size_limit:
            raise VariantError("variant size limit exceeded")
        self._primitive(FLOAT, struct.pack("<f", value))

    def append_double(self, value: float) -> None:
        self._slot()
        self._primitive(DOUBLE, struct.pack("<d", value))

    def append_decimal(self, unscaled: Any, scale: int | None = None) -> None:
        """A decimal, in the narrowest of DECIMAL4/8/16 that holds it: a ``decimal.Decimal`` (its own
        scale), or an unscaled value (an int, or big-endian two's complement bytes) and its scale."""
        self._slot()
        if isinstance(unscaled, decimal.Decimal):
            if scale is not None:
                raise VariantError("scale must not be given with a Decimal value")
            self._decimal(unscaled)
            return
        if isinstance(unscaled, (bytes, bytearray)):
            if scale is None:
                raise VariantError("scale is required when appending a decimal from bytes")
            self._unscaled(int.from_bytes(bytes(unscaled), "big", signed=True), scale)
        elif isinstance(unscaled, int):
            if scale is None:
                raise VariantError("scale is required when appending an unscaled integer")
            self._unscaled(unscaled, scale)
        else:
            raise VariantError("invalid append_decimal arguments")

    def _decimal(self, value: decimal.Decimal) -> None:
        sign, digits, exponent = value.as_tuple()
        if not isinstance(exponent, int):
            raise VariantError("cannot encode non-finite decimal")
        if len(digits) > MAX_DECIMAL16_PRECISION:  # before int(): its 4300-digit limit is not ours
            raise VariantError("decimal exceeds maximum precision (38)")
        unscaled = int("".join(map(str, digits)) or "0")
        self._unscaled(-unscaled if sign else unscaled, -exponent)

    def _unscaled(self, unscaled: int, scale: int) -> None:
        if scale < 0:
            raise VariantError("cannot encode decimal with negative scale")
        if unscaled.bit_length() <= 128:  # past it, more than 38 digits without counting them
            precision = len(str(abs(unscaled)))
            for code, (width, largest) in _DECIMALS.items():
                if scale <= largest and precision <= largest:
                    if self._written + 2 + width > self.size_limit:
                        raise VariantError("variant size limit exceeded")
                    self._primitive(code, bytes([scale]) + unscaled.to_bytes(width, "little", signed=True))
                    return
        raise VariantError("decimal exceeds maximum precision (38)")

    def append_string(self, s: str) -> None:
        self._slot()
        self._string(s)

    def _string(self, s: str) -> None:
        text = s.encode("utf-8")
        if len(text) > MAX_SHORT_STR_SIZE:
            self._write(LONG_STR << BASIC_TYPE_BITS | PRIMITIVE, _le(len(text), U32_SIZE), text)
        else:
            self._write(len(text) << BASIC_TYPE_BITS | SHORT_STR, text)

    def append_binary(self, data: bytes) -> None:
        self._slot()
        data = bytes(data)
        self._primitive(BINARY, _le(len(data), U32_SIZE) + data)

    def append_uuid(self, value: Any) -> None:
        """A ``uuid.UUID``, or its 16 bytes (big-endian, as ``UUID.bytes``)."""
        self._slot()
        raw = value.bytes if isinstance(value, uuid_mod.UUID) else bytes(value)
        if len(raw) != UUID_SIZE:
            raise VariantError("uuid must be 16 bytes")
        self._primitive(UUID, raw)

    def append_date(self, days_since_epoch: int) -> None:
        self._slot()
        self._fixed(DATE, days_since_epoch, 4)

    def append_time(self, micros_since_midnight: int) -> None:
        self._slot()
        self._fixed(TIME, micros_since_midnight, 8)

    def append_timestamp_tz(self, micros: int) -> None:
        self._slot()
        self._fixed(TIMESTAMP, micros, 8)

    def append_timestamp_ntz(self, micros: int) -> None:
        self._slot()
        self._fixed(TIMESTAMP_NTZ, micros, 8)

    def append_timestamp_nanos_tz(self, nanos: int) -> None:
        self._slot()
        self._fixed(TIMESTAMP_NANOS, nanos, 8)

    def append_timestamp_nanos_ntz(self, nanos: int) -> None:
        self._slot()
        self._fixed(TIMESTAMP_NANOS_NTZ, nanos, 8)

    # -- containers

    def start_object(self) -> None:
        self._slot()
        self._open.append(_Container(is_object=True))

    def append_key(self, key: str) -> None:
        if not self._open or not self._open[-1].is_object:
            raise VariantError("append_key called outside of an object")
        container = self._open[-1]
        if container.key is not None:
            raise VariantError("append_key called twice without an intervening value")
        key_id = self._key_ids.setdefault(key, len(self._key_ids))
        container.key = (key, key_id)

    def end_object(self) -> None:
        if not self._open or not self._open[-1].is_object:
            raise VariantError("end_object without a matching start_object")
        if self._open[-1].key is not None:
            raise VariantError("end_object with a dangling append_key (no value)")
        container = self._open.pop()
        names = [key for key, _ in container.keys]
        if len(set(names)) != len(names):
            raise VariantError("duplicate key in a variant object")
        order = sorted(range(len(names)), key=names.__getitem__)
        count = len(order)
        id_size = _size_of(max((key_id for _, key_id in container.keys), default=0))
        offset_size = _size_of(len(container.data))
        large = count > U8_MAX
        header = (large << 6) | (id_size - 1) << 4 | (offset_size - 1) << 2 | OBJECT
        head = bytearray([header]) + _le(count, U32_SIZE if large else 1)
        for index in order:
            head += _le(container.keys[index][1], id_size)
        for index in order:
            head += _le(container.starts[index], offset_size)
        head += _le(len(container.data), offset_size)
        self._close(container, head)

    def start_array(self) -> None:
        self._slot()
        self._open.append(_Container(is_object=False))

    def end_array(self) -> None:
        if not self._open or self._open[-1].is_object:
            raise VariantError("end_array without a matching start_array")
        container = self._open.pop()
        count = len(container.starts)
        offset_size = _size_of(len(container.data))
        large = count > U8_MAX
        head = bytearray([(large << 4) | (offset_size - 1) << 2 | ARRAY]) + _le(count, U32_SIZE if large else 1)
        for start in (*container.starts, len(container.data)):
            head += _le(start, offset_size)
        self._close(container, head)

    def _close(self, container: _Container, head: bytearray) -> None:
        """Hand a finished container's header and values to its parent, within the limit."""
        self._written -= len(container.data)
        self._write(bytes(head), bytes(container.data))

    # -- JSON-shaped values

    def append_json(self, value: Any) -> None:
        """A parsed JSON value (dicts, lists, str, bool, int, float, Decimal, None) in one slot."""
        if isinstance(value, dict):
            self.start_object()
            for key, item in value.items():
                self.append_key(key)
                self.append_json(item)
            self.end_object()
        elif isinstance(value, list):
            self.start_array()
            for item in value:
                self.append_json(item)
            self.end_array()
        elif isinstance(value, str):
            self.append_string(value)
        elif isinstance(value, bool):
            self.append_boolean(value)
        elif isinstance(value, int):
            self._slot()
            self._append_integer(value)
        elif isinstance(value, float):
            self.append_double(value)
        elif isinstance(value, decimal.Decimal):
            self.append_decimal(value)
        elif value is None:
            self.append_null()
        else:
            raise VariantError(f"unsupported JSON value: {type(value)!r}")

    # -- the end

    def build(self) -> Variant:
        if self._open:
            raise VariantError("cannot build with an open container")
        if not self._root_written:
            raise VariantError("cannot build an empty variant")
        return Variant(bytes(self._root), self._metadata())

    def _metadata(self) -> bytes:
        keys = [key.encode("utf-8") for key in self._key_ids]
        strings = sum(map(len, keys))
        if max(strings, len(keys)) > self.size_limit:
            raise VariantError("variant size limit exceeded")
        size = _size_of(max(strings, len(keys)))
        if 1 + size + (len(keys) + 1) * size + strings > self.size_limit:
            raise VariantError("variant size limit exceeded")
        out = bytearray([VERSION | (size - 1) << 6]) + _le(len(keys), size)
        offset = 0
        for key in keys:
            out += _le(offset, size)
            offset += len(key)
        out += _le(offset, size)
        for key in keys:
            out += key
        return bytes(out)
