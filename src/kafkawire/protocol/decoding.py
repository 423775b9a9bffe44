"""Decoders compiled from a plan (plan.py): closures over (buffer, position, budget); the pure-Python
twin of the C interpreter's decode_struct (native_c/protocol_codec.c).

Decoding trusts nothing: every length and count is checked against the bytes that remain before
anything is allocated, and any malformation raises `DecodeError`. Each array is charged to a
`DecodeBudget` before its elements are built (their estimated size in Python objects, and a count
limit per field path when the caller sets one), so an answer promising millions of elements fails
before it allocates them.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from .plan import ARRAY, BOOL, STRUCT, TYPE_NAMES, Op, StructPlan
from .primitives import DecodeBudget, DecodeError, decode_uvarint
from .values import FORMAT_TYPES, INT_FORMATS, INTS, Buffer, Struct

Decoder = Callable[[Buffer, int, DecodeBudget], "tuple[Any, int]"]

_I16 = INTS["int16"]
_I32 = INTS["int32"]


def struct_decoder(plan: StructPlan) -> Decoder:
    """The decoder of a struct (a whole message's at the top). Runs of two or more fixed-size
    numbers are read by one struct.unpack_from."""
    steps: list[tuple[Any, Any, int]] = []  # (name, decoder, 0) or (names, unpack_from, size)
    run: list[tuple[str, str]] = []  # the numbers read so far in a row: (name, struct format)
    flexible = plan.flexible
    tagged = {tag: (name, _field_decoder(op)) for tag, name, _default, op in plan.tagged}
    constants = list(plan.constants)  # filled before reading: absent fields and tagged ones not
    fresh = plan.fresh  # sent (a mutable default is made anew each time)

    def end_run() -> None:
        if len(run) == 1:
            name, _fmt = run[0]
            steps.append((name, _primitive_decoder(FORMAT_TYPES[_fmt], False, flexible), 0))
        elif run:
            unpacker = struct.Struct(">" + "".join(fmt for _name, fmt in run))
            steps.append((tuple(name for name, _fmt in run), unpacker.unpack_from, unpacker.size))
        run.clear()

    for name, _default, op in plan.fields:
        if op.kind < BOOL:
            run.append((name, INT_FORMATS[TYPE_NAMES[op.kind]]))
        else:
            end_run()
            steps.append((name, _field_decoder(op), 0))
    end_run()

    def decode_struct(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Struct, int]:
        obj = Struct(constants)
        for name, make in fresh:
            obj[name] = make()
        for name, dec, size in steps:
            if size:
                obj.update(zip(name, dec(buf, pos), strict=True))
                pos += size
            else:
                obj[name], pos = dec(buf, pos, budget)
        if flexible:
            if pos < len(buf) and buf[pos] == 0:  # no tagged fields: nearly every struct
                return obj, pos + 1
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
                    obj[name], stop = dec(buf, pos, budget)
                    if stop != end:
                        raise DecodeError(f"tagged field {name} has {end - stop} stray bytes")
                pos = end
        return obj, pos

    return decode_struct


# --- field decoders ----------------------------------------------------------------------------


def _field_decoder(op: Op) -> Decoder:
    if op.kind == ARRAY:
        element = op.sub
        if element.kind < BOOL:
            fmt = INT_FORMATS[TYPE_NAMES[element.kind]]
            return _number_array_decoder(op.path, fmt, op.cost, op.nullable, op.flexible)
        return _array_decoder(op.path, _field_decoder(element), op.min_size, op.cost, op.nullable, op.flexible)
    if op.kind == STRUCT:
        decode_struct = struct_decoder(op.sub)
        return _nullable_struct_decoder(decode_struct) if op.nullable else decode_struct
    return _primitive_decoder(TYPE_NAMES[op.kind], op.nullable, op.flexible)


def _nullable_struct_decoder(decode_struct: Decoder) -> Decoder:
    def decode_nullable_struct(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
        if pos >= len(buf):
            raise DecodeError("a nullable struct's marker is missing")
        if buf[pos] >= 0x80:  # a negative int8 means null, as Kafka reads it
            return None, pos + 1
        return decode_struct(buf, pos + 1, budget)

    return decode_nullable_struct


def _read_length(buf: Buffer, pos: int, flexible: bool, short: bool) -> tuple[int, int]:
    """Read a length or count; -1 means null. Lengths past the end of the buffer are rejected."""
    if flexible:
        if pos < len(buf) and buf[pos] < 0x80:  # one byte: nearly every length
            n = buf[pos] - 1
            pos += 1
        else:
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


def _take(budget: DecodeBudget, where: str, count: int, cost: int) -> None:
    """`DecodeBudget.take` with its common case first (it runs for every array of every answer)."""
    counts = budget.counts
    amount = count * cost
    if amount > budget.remaining or (counts is not None and count > counts.get(where, count)):
        budget.take(where, count, cost)  # raises
    budget.remaining -= amount


def _array_decoder(
    where: str, element: Decoder, min_element_size: int, cost: int, nullable: bool, flexible: bool
) -> Decoder:
    """Arrays whose count could not fit in the bytes left (``min_element_size`` each) are refused
    before anything is allocated: a count is a promise of bytes, not of objects. The count is then
    charged to the budget (``cost`` bytes each, and the limit the caller sets for ``where``)."""

    def decode_array(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
        n, pos = _read_length(buf, pos, flexible, False)
        if n == -1:
            if not nullable:
                raise DecodeError("null array where none is allowed")
            return None, pos
        if n > (len(buf) - pos) // min_element_size:
            raise DecodeError(f"{n} elements of at least {min_element_size} bytes exceed the {len(buf) - pos} left")
        if n:
            _take(budget, where, n, cost)
        items = []
        for _ in range(n):
            item, pos = element(buf, pos, budget)
            items.append(item)
        return items, pos

    return decode_array


def _number_array_decoder(where: str, fmt: str, cost: int, nullable: bool, flexible: bool) -> Decoder:
    """An array of fixed-size numbers (replica lists, partition ids): read by one unpack_from."""
    size = struct.calcsize(">" + fmt)

    def decode_numbers(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
        n, pos = _read_length(buf, pos, flexible, False)
        if n == -1:
            if not nullable:
                raise DecodeError("null array where none is allowed")
            return None, pos
        if n > (len(buf) - pos) // size:
            raise DecodeError(f"{n} elements of {size} bytes exceed the {len(buf) - pos} left")
        if not n:
            return [], pos
        _take(budget, where, n, cost)
        return list(struct.unpack_from(f">{n}{fmt}", buf, pos)), pos + n * size

    return decode_numbers


def _primitive_decoder(type_: str, nullable: bool, flexible: bool) -> Decoder:
    if type_ in INTS:
        s = INTS[type_]
        unpack, size = s.unpack_from, s.size

        def decode_number(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
            return unpack(buf, pos)[0], pos + size

        return decode_number
    if type_ == "bool":

        def decode_bool(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
            return buf[pos] != 0, pos + 1

        return decode_bool
    if type_ == "uuid":

        def decode_uuid(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
            if pos + 16 > len(buf):
                raise DecodeError("truncated uuid")
            return uuid.UUID(bytes=bytes(buf[pos : pos + 16])), pos + 16

        return decode_uuid
    if type_ == "records":

        def decode_records(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
            """A view into the answer when it is one (a large answer's own buffer, see
            core/connection.py): record batches are most of a Fetch answer, read once, then
            dropped; else a copy."""
            n, pos = _read_length(buf, pos, flexible, False)
            if n == -1:
                if not nullable:
                    raise DecodeError("null records where none are allowed")
                return None, pos
            piece = buf[pos : pos + n]
            return (piece if type(buf) is memoryview else bytes(piece)), pos + n

        return decode_records
    short = type_ == "string"

    def decode_bytes(buf: Buffer, pos: int, budget: DecodeBudget) -> tuple[Any, int]:
        n, pos = _read_length(buf, pos, flexible, short)
        if n == -1:
            if not nullable:
                raise DecodeError(f"null {type_} where none is allowed")
            return None, pos
        raw = bytes(buf[pos : pos + n])
        return (raw.decode() if short else raw), pos + n

    return decode_bytes
