"""The one codec: turns a `MessageSchema` plus a version into an encoder and a decoder.

Each (schema, version) pair is compiled once into a chain of small closures, so encoding does no
per-field version checks at run time. Values are `Struct`s (dicts with attribute access) that
look the same whatever the version: a field the version lacks decodes to its default.

Decoding trusts nothing: every length and count is checked against the bytes that remain before
anything is allocated, and any malformation raises `DecodeError`.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .primitives import DecodeError, decode_uvarint, encode_uvarint
from .schema import NONE, Array, Field, FieldType, MessageSchema

Buffer = bytes | bytearray | memoryview
Encoder = Callable[[bytearray, Any], None]
Decoder = Callable[[Buffer, int], "tuple[Any, int]"]


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


_INTS: dict[str, struct.Struct] = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"),
    "uint16": struct.Struct(">H"),
    "float64": struct.Struct(">d"),
}
_I16 = _INTS["int16"]
_I32 = _INTS["int32"]


def encode(schema: MessageSchema, version: int, value: Mapping[str, Any]) -> bytes:
    out = bytearray()
    _plan(schema, version)[0](out, value)
    return bytes(out)


def encode_into(out: bytearray, schema: MessageSchema, version: int, value: Mapping[str, Any]) -> None:
    _plan(schema, version)[0](out, value)


def decode(schema: MessageSchema, version: int, data: Buffer, pos: int = 0) -> Struct:
    """Decode a whole message; trailing bytes are an error (the version must have been wrong)."""
    obj, end = decode_from(schema, version, data, pos)
    if end != len(data):
        raise DecodeError(f"{schema.name} v{version}: {len(data) - end} unexpected trailing bytes")
    return obj


def decode_from(schema: MessageSchema, version: int, data: Buffer, pos: int = 0) -> tuple[Struct, int]:
    """Decode one message starting at ``pos``; returns it and the position after it."""
    decoder = _plan(schema, version)[1]
    try:
        obj, end = decoder(data, pos)
    except DecodeError as exc:
        raise DecodeError(f"{schema.name} v{version}: {exc}") from None
    except (struct.error, UnicodeDecodeError, IndexError, ValueError) as exc:
        raise DecodeError(f"{schema.name} v{version}: malformed ({exc})") from None
    return obj, end


def default_struct(fields: tuple[Field, ...]) -> Struct:
    """A struct holding every field's default, as the decoder fills fields a version lacks."""
    return Struct({fld.name: _default_value(fld) for fld in fields})


# --- compilation -------------------------------------------------------------------------------

_PLANS: dict[tuple[int, int], tuple[MessageSchema, Encoder, Decoder]] = {}


def _plan(schema: MessageSchema, version: int) -> tuple[Encoder, Decoder]:
    key = (id(schema), version)
    plan = _PLANS.get(key)
    if plan is None:
        if version not in schema.versions:
            raise UnsupportedFieldError(f"{schema.name} has no version {version} (valid: {schema.versions})")
        flexible = version in schema.flexible
        enc = _struct_encoder(schema.name, schema.fields, version, flexible)
        dec = _struct_decoder(schema.fields, version, flexible)
        plan = (schema, enc, dec)  # holding the schema keeps id() unique while cached
        _PLANS[key] = plan
    return plan[1], plan[2]


def _default_value(fld: Field) -> Any:
    if fld.is_struct and not isinstance(fld.type, Array):
        # A nullable struct (ConsumerGroupHeartbeat's assignment) defaults to null, as in Kafka.
        return None if fld.nullable != NONE else default_struct(fld.struct_fields)
    if isinstance(fld.default, list):
        return list(fld.default)
    return fld.default


def _struct_encoder(where: str, fields: tuple[Field, ...], version: int, flexible: bool) -> Encoder:
    regular: list[tuple[str, Any, Encoder]] = []
    tagged: list[tuple[int, str, Any, Encoder]] = []
    absent: list[tuple[str, Any]] = []
    for fld in fields:
        if version not in fld.versions:
            if not fld.ignorable and not fld.is_struct:
                absent.append((fld.name, fld.default))
            continue
        field_flexible = flexible if fld.flexible is None else version in fld.flexible
        enc = _field_encoder(f"{where}.{fld.name}", fld, version, field_flexible)
        if flexible and fld.tag is not None and version in fld.tagged:
            tagged.append((fld.tag, fld.name, _default_value(fld), enc))
        else:
            regular.append((fld.name, _default_value(fld), enc))
    tagged.sort(key=lambda t: t[0])

    def encode_struct(out: bytearray, obj: Any) -> None:
        if obj is None:
            obj = {}
        get = obj.get
        for name, default, enc in regular:
            enc(out, get(name, default))
        for name, default in absent:
            value = get(name, default)
            if value != default:
                raise UnsupportedFieldError(f"{where}.{name} cannot be sent in version {version}")
        if flexible:
            present = []
            for tag, name, default, enc in tagged:
                value = get(name, default)
                if value != default:
                    buf = bytearray()
                    enc(buf, value)
                    present.append((tag, buf))
            out += encode_uvarint(len(present))
            for tag, buf in present:
                out += encode_uvarint(tag)
                out += encode_uvarint(len(buf))
                out += buf

    return encode_struct


def _struct_decoder(fields: tuple[Field, ...], version: int, flexible: bool) -> Decoder:
    regular: list[tuple[str, Decoder]] = []
    tagged: dict[int, tuple[str, Decoder]] = {}
    defaults: list[Field] = []  # filled before reading: absent fields and tagged ones not sent
    for fld in fields:
        if version not in fld.versions:
            defaults.append(fld)
            continue
        field_flexible = flexible if fld.flexible is None else version in fld.flexible
        dec = _field_decoder(fld, version, field_flexible)
        if flexible and fld.tag is not None and version in fld.tagged:
            tagged[fld.tag] = (fld.name, dec)
            defaults.append(fld)
        else:
            regular.append((fld.name, dec))

    def decode_struct(buf: Buffer, pos: int) -> tuple[Struct, int]:
        obj = Struct()
        for fld in defaults:
            obj[fld.name] = _default_value(fld)
        for name, dec in regular:
            obj[name], pos = dec(buf, pos)
        if flexible:
            count, pos = decode_uvarint(buf, pos)
            for _ in range(count):
                tag, pos = decode_uvarint(buf, pos)
                size, pos = decode_uvarint(buf, pos)
                end = pos + size
                if end > len(buf):
                    raise DecodeError(f"tagged field {tag} overruns the message")
                entry = tagged.get(tag)
                if entry is not None:  # unknown tags are skipped, as Kafka requires
                    name, dec = entry
                    obj[name], stop = dec(buf, pos)
                    if stop != end:
                        raise DecodeError(f"tagged field {name} has {end - stop} stray bytes")
                pos = end
        return obj, pos

    return decode_struct


# --- field encoders ----------------------------------------------------------------------------


def _field_encoder(where: str, fld: Field, version: int, flexible: bool) -> Encoder:
    nullable = version in fld.nullable
    t = fld.type
    if isinstance(t, Array):
        element = _element_encoder(where, t.of, version, flexible)
        return _array_encoder(where, element, nullable, flexible)
    if isinstance(t, tuple):
        encode_struct = _struct_encoder(where, t, version, flexible)
        return _nullable_struct_encoder(encode_struct) if nullable else encode_struct
    return _primitive_encoder(where, t, nullable, flexible)


def _nullable_struct_encoder(encode_struct: Encoder) -> Encoder:
    """A nullable struct travels behind an int8 marker: -1 null, 1 present."""

    def encode_nullable_struct(out: bytearray, obj: Any) -> None:
        if obj is None:
            out += b"\xff"
        else:
            out += b"\x01"
            encode_struct(out, obj)

    return encode_nullable_struct


def _element_encoder(where: str, of: FieldType, version: int, flexible: bool) -> Encoder:
    if isinstance(of, tuple):
        return _struct_encoder(where, of, version, flexible)
    if isinstance(of, str):
        return _primitive_encoder(where, of, False, flexible)
    raise TypeError(f"{where}: nested arrays are not part of the Kafka protocol")


def _null_error(where: str) -> UnsupportedFieldError:
    return UnsupportedFieldError(f"{where} cannot be null in this version")


def _array_encoder(where: str, element: Encoder, nullable: bool, flexible: bool) -> Encoder:
    def encode_array(out: bytearray, items: Any) -> None:
        if items is None:
            if not nullable:
                raise _null_error(where)
            out += b"\x00" if flexible else b"\xff\xff\xff\xff"
            return
        out += encode_uvarint(len(items) + 1) if flexible else _I32.pack(len(items))
        for item in items:
            element(out, item)

    return encode_array


def _primitive_encoder(where: str, type_: str, nullable: bool, flexible: bool) -> Encoder:
    if type_ in _INTS:
        pack = _INTS[type_].pack

        def encode_number(out: bytearray, value: Any) -> None:
            out += pack(value)

        return encode_number
    if type_ == "bool":
        return lambda out, value: out.append(1 if value else 0)
    if type_ == "uuid":

        def encode_uuid(out: bytearray, value: Any) -> None:
            out += value.bytes if isinstance(value, uuid.UUID) else bytes(value)

        return encode_uuid
    if type_ == "string":
        encode_bytes = _bytes_encoder(where, nullable, flexible, short=True)
        return lambda out, value: encode_bytes(out, None if value is None else value.encode())
    return _bytes_encoder(where, nullable, flexible, short=False)  # bytes and records


def _bytes_encoder(where: str, nullable: bool, flexible: bool, *, short: bool) -> Encoder:
    """Strings carry an int16 length, bytes an int32 one; compact forms a varint of length + 1."""
    null = b"\x00" if flexible else (b"\xff\xff" if short else b"\xff\xff\xff\xff")
    pack_len = _I16.pack if short else _I32.pack

    def encode_bytes(out: bytearray, value: Any) -> None:
        if value is None:
            if not nullable:
                raise _null_error(where)
            out += null
            return
        out += encode_uvarint(len(value) + 1) if flexible else pack_len(len(value))
        out += value

    return encode_bytes


# --- field decoders ----------------------------------------------------------------------------


def _field_decoder(fld: Field, version: int, flexible: bool) -> Decoder:
    nullable = version in fld.nullable
    t = fld.type
    if isinstance(t, Array):
        of = t.of
        if isinstance(of, tuple):
            element = _struct_decoder(of, version, flexible)
        elif isinstance(of, str):
            element = _primitive_decoder(of, False, flexible)
        else:
            raise TypeError("nested arrays are not part of the Kafka protocol")
        return _array_decoder(element, max(1, _min_size(of, version, flexible)), nullable, flexible)
    if isinstance(t, tuple):
        decode_struct = _struct_decoder(t, version, flexible)
        return _nullable_struct_decoder(decode_struct) if nullable else decode_struct
    return _primitive_decoder(t, nullable, flexible)


def _nullable_struct_decoder(decode_struct: Decoder) -> Decoder:
    def decode_nullable_struct(buf: Buffer, pos: int) -> tuple[Any, int]:
        if pos >= len(buf):
            raise DecodeError("a nullable struct's marker is missing")
        if buf[pos] >= 0x80:  # a negative int8 means null, as Kafka reads it
            return None, pos + 1
        return decode_struct(buf, pos + 1)

    return decode_nullable_struct


def _read_length(buf: Buffer, pos: int, flexible: bool, short: bool) -> tuple[int, int]:
    """Read a length or count; -1 means null. Lengths past the end of the buffer are rejected."""
    if flexible:
        raw, pos = decode_uvarint(buf, pos, 5)
        n = raw - 1
    elif short:
        (n,), pos = _I16.unpack_from(buf, pos), pos + 2
    else:
        (n,), pos = _I32.unpack_from(buf, pos), pos + 4
    if n < -1:
        raise DecodeError(f"negative length {n}")
    if n > len(buf) - pos:
        raise DecodeError(f"length {n} exceeds the {len(buf) - pos} bytes left")
    return n, pos


_FIXED_SIZES = {"bool": 1, "uuid": 16, **{name: s.size for name, s in _INTS.items()}}


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


def _array_decoder(element: Decoder, min_element_size: int, nullable: bool, flexible: bool) -> Decoder:
    """Arrays whose count could not fit in the bytes left (``min_element_size`` each) are refused
    before anything is allocated: a count is a promise of bytes, not of objects."""

    def decode_array(buf: Buffer, pos: int) -> tuple[Any, int]:
        n, pos = _read_length(buf, pos, flexible, False)
        if n == -1:
            if not nullable:
                raise DecodeError("null array where none is allowed")
            return None, pos
        if n > (len(buf) - pos) // min_element_size:
            raise DecodeError(f"{n} elements of at least {min_element_size} bytes exceed the {len(buf) - pos} left")
        items = []
        for _ in range(n):
            item, pos = element(buf, pos)
            items.append(item)
        return items, pos

    return decode_array


def _primitive_decoder(type_: str, nullable: bool, flexible: bool) -> Decoder:
    if type_ in _INTS:
        s = _INTS[type_]
        unpack, size = s.unpack_from, s.size

        def decode_number(buf: Buffer, pos: int) -> tuple[Any, int]:
            return unpack(buf, pos)[0], pos + size

        return decode_number
    if type_ == "bool":

        def decode_bool(buf: Buffer, pos: int) -> tuple[Any, int]:
            return buf[pos] != 0, pos + 1

        return decode_bool
    if type_ == "uuid":

        def decode_uuid(buf: Buffer, pos: int) -> tuple[Any, int]:
            if pos + 16 > len(buf):
                raise DecodeError("truncated uuid")
            return uuid.UUID(bytes=bytes(buf[pos : pos + 16])), pos + 16

        return decode_uuid
    short = type_ == "string"

    def decode_bytes(buf: Buffer, pos: int) -> tuple[Any, int]:
        n, pos = _read_length(buf, pos, flexible, short)
        if n == -1:
            if not nullable:
                raise DecodeError(f"null {type_} where none is allowed")
            return None, pos
        raw = bytes(buf[pos : pos + n])
        return (raw.decode() if short else raw), pos + n

    return decode_bytes
