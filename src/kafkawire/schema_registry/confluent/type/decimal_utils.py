"""``decimal.Decimal`` <-> ``confluent.type.Decimal``, exact both ways, as Java's BigDecimal and
BigInteger write and read it (the serdes and the CEL rules use these)."""

from __future__ import annotations

from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from typing import Any

from . import decimal_pb2

__all__ = [
    "MAX_EMAX",
    "MAX_PREC",
    "MIN_EMIN",
    "decimal_pb2",
    "from_proto_decimal",
    "to_proto_decimal",
    "unscaled_to_bytes",
]

# Every digit kept and every int32 scale in range: BigDecimal(unscaled, scale) is exact.
EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)


def from_proto_decimal(msg: Any) -> Decimal:
    """The value of a ``confluent.type.Decimal``: its unscaled integer times 10**-scale."""
    unscaled = int.from_bytes(msg.value, "big", signed=True) if msg.value else 0
    return Decimal(unscaled).scaleb(-int(msg.scale), context=EXACT)


def to_proto_decimal(d: Decimal) -> Any:
    """``d`` as a ``confluent.type.Decimal`` at its own scale (negative for ``1E+2``), precision its
    digit count, as BigDecimal's unscaledValue(), scale() and precision() give them."""
    sign, digits, exponent = d.as_tuple()
    if not isinstance(exponent, int):
        raise ValueError(f"cannot convert non-finite Decimal '{d}' to confluent.type.Decimal")
    unscaled = 0
    for digit in digits:
        unscaled = unscaled * 10 + digit
    return decimal_pb2.Decimal(
        value=unscaled_to_bytes(-unscaled if sign else unscaled), precision=len(digits), scale=-exponent
    )


def unscaled_to_bytes(unscaled: int) -> bytes:
    """The shortest big-endian two's complement of ``unscaled`` (BigInteger.toByteArray): -128 is one byte."""
    magnitude = unscaled if unscaled >= 0 else ~unscaled
    return unscaled.to_bytes(max(1, (magnitude.bit_length() + 8) // 8), "big", signed=True)
