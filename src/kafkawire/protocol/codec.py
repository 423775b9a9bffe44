"""The one codec: turns a `MessageSchema` plus a version into an encoder and a decoder.

Each (schema, version) pair is walked once into a plan (plan.py): plain data that the C extension's
interpreter runs (native_c/protocol_codec.c) or, without it, that is compiled into a chain of small
closures, its pure-Python twin; either way, encoding does no per-field version checks at run time.
Values are `Struct`s (dicts with attribute access) that look the same whatever the version: a field
the version lacks decodes to its default.

Decoding trusts nothing (`decoding.py`): lengths and counts are checked against the bytes left and
charged to a `DecodeBudget` before anything is allocated; any malformation raises `DecodeError`.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from ..native import native
from .decoding import Decoder, struct_decoder
from .frame import SPLICE_MIN, Frame
from .plan import ARRAY, BOOL, RECORDS, STRING, STRUCT, TYPE_NAMES, UUID, Op, StructPlan, message_plan
from .primitives import DecodeBudget, DecodeError, encode_uvarint
from .schema import MessageSchema
from .values import INTS, Buffer, Struct, UnsupportedFieldError, default_struct

__all__ = ["Buffer", "Struct", "UnsupportedFieldError", "default_struct"]  # the values, re-exported

Encoder = Callable[[bytearray, Any], None]

# A decoding given no budget may allocate this much per byte decoded, plus a constant: real
# answers take 5-20 times their size in Python objects, an array of the smallest elements up to ~40.
ALLOCATION_PER_BYTE = 64
ALLOCATION_SLACK = 1 << 20

_I16 = INTS["int16"]
_I32 = INTS["int32"]


def encode(schema: MessageSchema, version: int, value: Mapping[str, Any]) -> bytes:
    out = bytearray()
    _plan(schema, version)[0](out, value)
    return bytes(out)


def encode_into(out: bytearray, schema: MessageSchema, version: int, value: Mapping[str, Any]) -> None:
    _plan(schema, version)[0](out, value)


def encoder(schema: MessageSchema, version: int) -> Encoder:
    """What `encode_into` runs for (schema, version): ``encoder(out, value)``, for a caller that keeps it."""
    return _plan(schema, version)[0]


def allocation_limit(size: int) -> int:
    """What decoding ``size`` bytes may allocate when the caller sets no budget of its own."""
    return ALLOCATION_PER_BYTE * size + ALLOCATION_SLACK


def decode(
    schema: MessageSchema, version: int, data: Buffer, pos: int = 0, budget: DecodeBudget | None = None
) -> Struct:
    """Decode a whole message; trailing bytes are an error (the version must have been wrong)."""
    obj, end = decode_from(schema, version, data, pos, budget)
    if end != len(data):
        raise DecodeError(f"{schema.name} v{version}: {len(data) - end} unexpected trailing bytes")
    return obj


def decode_from(
    schema: MessageSchema, version: int, data: Buffer, pos: int = 0, budget: DecodeBudget | None = None
) -> tuple[Struct, int]:
    """Decode one message starting at ``pos``; returns it and the position after it. Without a
    ``budget`` it may allocate `ALLOCATION_PER_BYTE` per byte left, plus `ALLOCATION_SLACK`."""
    decoder = _plan(schema, version)[1]
    if budget is None:
        budget = DecodeBudget(allocation_limit(len(data) - pos))
    try:
        return decoder(data, pos, budget)
    except DECODING_ERRORS as exc:
        raise named_error(schema, version, exc) from None


def decoder(schema: MessageSchema, version: int) -> Decoder:
    """What `decode_from` runs for (schema, version): ``decoder(data, pos, budget)``, for a caller
    that keeps it (and names what it raises with `named_error`)."""
    return _plan(schema, version)[1]


# What a decoder raises on bytes that are not the message: `decode_from` names them all DecodeError.
DECODING_ERRORS = (DecodeError, struct.error, UnicodeDecodeError, IndexError, ValueError)


def named_error(schema: MessageSchema, version: int, exc: Exception) -> DecodeError:
    """A decoder's ``exc`` as a DecodeError naming the message (a DecodeBudgetError stays one)."""
    if isinstance(exc, DecodeError):
        return type(exc)(f"{schema.name} v{version}: {exc}")
    return DecodeError(f"{schema.name} v{version}: malformed ({exc})")


# --- compilation -------------------------------------------------------------------------------

_PLANS: dict[tuple[int, int], tuple[MessageSchema, Encoder, Decoder]] = {}


def _plan(schema: MessageSchema, version: int) -> tuple[Encoder, Decoder]:
    key = (id(schema), version)
    compiled = _PLANS.get(key)
    if compiled is None:
        enc, dec = _compile(message_plan(schema, version))
        compiled = (schema, enc, dec)  # holding the schema keeps id() unique while cached
        _PLANS[key] = compiled
    return compiled[1], compiled[2]


def _compile(plan: StructPlan) -> tuple[Encoder, Decoder]:
    """The C interpreter over the plan when the extension is built, else the closures compiled
    from it (its pure-Python twin)."""
    if native is None:
        return _struct_encoder(plan), struct_decoder(plan)
    program = (plan, _NATIVE_TYPES)
    return partial(native.encode_struct, program), partial(native.decode_struct, program)


# What the C interpreter makes and raises, in the order protocol_codec.c reads them.
_NATIVE_TYPES = (Struct, uuid.UUID, Frame, SPLICE_MIN, struct.error, DecodeError, UnsupportedFieldError)


def _struct_encoder(plan: StructPlan) -> Encoder:
    regular = [(name, default, _field_encoder(op)) for name, default, op in plan.fields]
    tagged = [(tag, name, default, _field_encoder(op)) for tag, name, default, op in plan.tagged]
    absent = plan.absent
    flexible = plan.flexible

    def encode_struct(out: bytearray, obj: Any) -> None:
        if obj is None:
            obj = {}
        get = obj.get
        for name, default, enc in regular:
            enc(out, get(name, default))
        for name, default, error in absent:
            value = get(name, default)
            if value != default:
                raise UnsupportedFieldError(error)
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


# --- field encoders ----------------------------------------------------------------------------


def _field_encoder(op: Op) -> Encoder:
    if op.kind == ARRAY:
        return _array_encoder(op.where, _field_encoder(op.sub), op.nullable, op.flexible)
    if op.kind == STRUCT:
        encode_struct = _struct_encoder(op.sub)
        return _nullable_struct_encoder(encode_struct) if op.nullable else encode_struct
    return _primitive_encoder(op)


def _nullable_struct_encoder(encode_struct: Encoder) -> Encoder:
    """A nullable struct travels behind an int8 marker: -1 null, 1 present."""

    def encode_nullable_struct(out: bytearray, obj: Any) -> None:
        if obj is None:
            out += b"\xff"
        else:
            out += b"\x01"
            encode_struct(out, obj)

    return encode_nullable_struct


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


def _primitive_encoder(op: Op) -> Encoder:
    kind = op.kind
    if kind < BOOL:
        pack = INTS[TYPE_NAMES[kind]].pack

        def encode_number(out: bytearray, value: Any) -> None:
            out += pack(value)

        return encode_number
    if kind == BOOL:
        return lambda out, value: out.append(1 if value else 0)
    if kind == UUID:

        def encode_uuid(out: bytearray, value: Any) -> None:
            out += value.bytes if isinstance(value, uuid.UUID) else bytes(value)

        return encode_uuid
    if kind == STRING:
        encode_bytes = _bytes_encoder(op, short=True)
        return lambda out, value: encode_bytes(out, None if value is None else value.encode())
    return _bytes_encoder(op, short=False, splice=kind == RECORDS)


def _bytes_encoder(op: Op, *, short: bool, splice: bool = False) -> Encoder:
    """Strings carry an int16 length, bytes an int32 one; compact forms a varint of length + 1.
    ``splice`` (record batches): written into a `Frame`, a large value is referenced in place
    rather than copied (a Produce request's batches)."""
    where, nullable, flexible = op.where, op.nullable, op.flexible
    null = b"\x00" if flexible else (b"\xff\xff" if short else b"\xff\xff\xff\xff")
    pack_len = _I16.pack if short else _I32.pack

    def encode_bytes(out: bytearray, value: Any) -> None:
        if value is None:
            if not nullable:
                raise _null_error(where)
            out += null
            return
        out += encode_uvarint(len(value) + 1) if flexible else pack_len(len(value))
        if splice and len(value) >= SPLICE_MIN and isinstance(out, Frame):
            out.refer(value)
        else:
            out += value

    return encode_bytes
