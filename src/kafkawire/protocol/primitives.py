"""Variable-length integers, the one encoding shared by the protocol codec and record batches.

Kafka uses two flavours: unsigned varints (LEB128, 7 bits a byte, low group first) for the
lengths of compact strings, bytes and arrays and for tagged fields, and zigzag-encoded signed
varints/varlongs inside records (so that small negative deltas stay short).
"""

from __future__ import annotations

from collections.abc import Mapping


class DecodeError(ValueError):
    """The bytes do not form a valid value of the expected type (truncated or malformed)."""


class DecodeBudgetError(DecodeError):
    """Decoding would take more memory than the caller's budget allows (a likely bomb)."""


DEFAULT_DECODE_BUDGET = 512 * 1024 * 1024  # a record fetch's default; protocol answers get their own


class DecodeBudget:
    """The memory one decoding may still allocate, in bytes, and (optionally) the most elements
    each named array may hold. The protocol codec and the record decoders charge it before they
    build what a count promises, so a bomb fails before it allocates.
    """

    __slots__ = ("counts", "limit", "remaining")

    def __init__(self, limit: int = DEFAULT_DECODE_BUDGET, counts: Mapping[str, int] | None = None) -> None:
        self.limit = limit
        self.remaining = limit
        self.counts = counts

    def charge(self, amount: int, what: str) -> None:
        if amount > self.remaining:
            raise DecodeBudgetError(f"{what} would exceed the {self.limit}-byte decoding budget")
        self.remaining -= amount

    def take(self, where: str, count: int, cost: int) -> None:
        """``count`` elements of the array at ``where`` (a dotted field path), ``cost`` bytes each."""
        if self.counts is not None:
            most = self.counts.get(where)
            if most is not None and count > most:
                raise DecodeBudgetError(f"{count} elements in {where} (at most {most} accepted)")
        self.charge(count * cost, f"{count} elements in {where}")


def encode_uvarint(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_uvarint(buf: bytes | bytearray | memoryview, pos: int, max_bytes: int = 10) -> tuple[int, int]:
    """Return (value, new position). Raises DecodeError when truncated or longer than ``max_bytes``."""
    result = 0
    shift = 0
    end = len(buf)
    for _ in range(max_bytes):
        if pos >= end:
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise DecodeError(f"varint longer than {max_bytes} bytes")


def zigzag(value: int) -> int:
    """Map signed to unsigned so that small magnitudes encode short: 0,-1,1,-2 -> 0,1,2,3."""
    return (value << 1) ^ (value >> 63)


def unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def encode_varint(value: int) -> bytes:
    """Signed 32-bit zigzag varint (records' lengths and deltas)."""
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"varint out of int32 range: {value}")
    return encode_uvarint(zigzag(value) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    """Signed 64-bit zigzag varlong (records' timestamp and offset deltas)."""
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong out of int64 range: {value}")
    return encode_uvarint(zigzag(value) & 0xFFFFFFFFFFFFFFFF)


def decode_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    raw, pos = decode_uvarint(buf, pos, 5)
    if raw > 0xFFFFFFFF:
        raise DecodeError("varint out of int32 range")
    return unzigzag(raw), pos


def decode_varlong(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    raw, pos = decode_uvarint(buf, pos, 10)
    if raw > 0xFFFFFFFFFFFFFFFF:
        raise DecodeError("varlong out of int64 range")
    return unzigzag(raw), pos
