"""``decimal(...)`` and ``decimals.*`` as Confluent's CEL environment declares them, with the
``string``, ``double``, ``==``, ``!=`` and ``in`` overloads that make a decimal a number in a rule.

Arithmetic is BigDecimal's: exact for add, sub, mul, mod and rescaling, 38 digits rounded half up
for div and sqrt (Flink's and Java's reference), scales int32. A decimal travels through CEL as a
``decimal.Decimal``; a record's Decimal field (a double in kafkawire's CEL values, see cel_values)
and a ``confluent.type.Decimal`` message are read as the exact decimal they stand for.

Bounds where Python's decimals would build what BigDecimal refuses or what no rule should: a
positional form (aligning two operands, rescaling, writing one out) of more than 10**7 digits and a
coefficient of more than 4300 (CPython's own str<->int limit) are rule errors, never a memory blow.
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError, bool_eq, bool_ne, operator_in

from ...confluent.type.decimal_utils import from_proto_decimal
from .cel_values import source_of
from .timestamp_funcs import format_timestamp

__all__ = ["DECIMAL_FUNCS", "DECIMAL_OPERATOR_FUNCS", "decimal_boundary_value"]

_DIVIDE = decimal.Context(prec=38, rounding=decimal.ROUND_HALF_UP, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_INT32 = (-(2**31), 2**31 - 1)
_WIDTH = 10_000_000  # digits a positional form may take
_COEFFICIENT = 4300  # digits a coefficient built from bytes may take
_DECIMAL_MESSAGE = "confluent.type.Decimal"


def _refuse_width(needed: int, function: str, what: str, limit: int = _WIDTH) -> None:
    if needed > limit:
        raise CELEvalError(f"{function}: {what} needs {needed} digits, past this client's {limit}-digit limit")


def _exponent(d: Decimal) -> int:
    exponent = d.as_tuple().exponent
    if not isinstance(exponent, int):
        raise CELEvalError(f"decimal: not a finite number '{d}'")
    return exponent


def _digits(d: Decimal) -> int:
    """The coefficient's digit count, from the exponents (never building the digits)."""
    return d.adjusted() - _exponent(d) + 1


def _unsigned_zero(d: Decimal) -> Decimal:
    """BigDecimal has no -0: ``-0.00`` is ``0.00``."""
    return abs(d) if not d and d.is_signed() else d


def _scale(value: Any, function: str) -> int:
    """A scale argument: a CEL int (not a bool, uint or double) that fits an int32."""
    if not isinstance(value, int) or isinstance(value, (bool, celtypes.BoolType, celtypes.UintType)):
        raise CELEvalError(f"{function}: scale must be int, got {type(value).__name__}")
    if not _INT32[0] <= value <= _INT32[1]:
        raise CELEvalError(f"{function}: scale out of int range: {int(value)}")
    return int(value)


def decimal_boundary_value(v: Any) -> Decimal | None:
    """``v`` as the decimal it is (a Decimal, a record's Decimal field, a confluent.type.Decimal
    message), else None. Nothing is coerced: an int or a string is not a decimal here."""
    if isinstance(v, Decimal):
        return v
    source = source_of(v)
    if isinstance(source, Decimal):
        return source
    for message in (v, source, getattr(v, "msg", None)):
        if getattr(getattr(message, "DESCRIPTOR", None), "full_name", "") == _DECIMAL_MESSAGE:
            return from_proto_decimal(message)
    return None


def _parse(text: str, original: Any) -> Decimal:
    """Text as BigDecimal(String) reads it: no NaN or infinity, no ``_``, no surrounding space, an
    exponent within int32."""
    if "_" in text or text != text.strip():
        raise CELEvalError(f"decimal: invalid number '{original}'")
    try:
        d = Decimal(text)
    except decimal.InvalidOperation as e:
        raise CELEvalError(f"decimal: invalid number '{original}'") from e
    exponent = d.as_tuple().exponent
    if not isinstance(exponent, int) or not -_INT32[1] <= exponent <= _INT32[1]:
        raise CELEvalError(f"decimal: invalid number '{original}'")
    return _unsigned_zero(d)


def _from_bytes(raw: Any, scale: Any) -> Decimal:
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise CELEvalError(f"decimal: expected bytes for the (bytes, scale) overload, got {type(raw).__name__}")
    data = bytes(raw)
    places = _scale(scale, "decimal(bytes, scale)")
    if data:  # a byte holds about 2.41 digits
        _refuse_width(int(len(data) * 2.408) + 1, "decimal(bytes, scale)", "the coefficient", _COEFFICIENT)
    return Decimal(int.from_bytes(data, "big", signed=True)).scaleb(-places, context=_EXACT)


def _decimal(*args: Any) -> Decimal:
    """``decimal(dyn)`` or ``decimal(bytes, scale)`` (big-endian two's complement unscaled)."""
    if len(args) == 2:
        return _from_bytes(*args)
    if len(args) != 1:
        raise CELEvalError(f"decimal: expected 1 or 2 args, got {len(args)}")
    v = args[0]
    if v is None:
        raise CELEvalError("decimal: cannot convert null to Decimal")
    exact = decimal_boundary_value(v)
    if exact is not None:
        return exact
    if isinstance(v, (bool, celtypes.BoolType)):
        raise CELEvalError("decimal: cannot convert bool to Decimal")
    if isinstance(v, int):
        return Decimal(int(v))
    if isinstance(v, (float, str)):  # a double as BigDecimal.valueOf: its shortest text
        return _parse(str(v), v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        raise CELEvalError(
            "decimal: raw bytes need a scale; use decimal(bytes, scale) or set "
            "useLogicalTypeConverters=true on the Avro client so decimal fields "
            "arrive as Decimal"
        )
    raise CELEvalError(f"decimal: cannot convert {type(v).__name__} to Decimal")


def _d(v: Any) -> Decimal:
    """An operand, made a finite decimal as ``decimal(v)`` would."""
    d = v if isinstance(v, Decimal) else _decimal(v)
    if not d.is_finite():
        raise CELEvalError(f"decimal: not a finite number '{d}'")
    return d


# -- arithmetic


def _aligned_width(x: Decimal, y: Decimal) -> int:
    """Digits add and sub need: both operands at the finer scale (a zero costs one digit)."""
    scale = -min(_exponent(x), _exponent(y))
    return max(1 if not d else _digits(d) + scale + _exponent(d) for d in (x, y)) + 1


def _add(a: Any, b: Any) -> Decimal:
    x, y = _d(a), _d(b)
    _refuse_width(_aligned_width(x, y), "decimals.add", "aligning the operands")
    return _EXACT.add(x, y)


def _sub(a: Any, b: Any) -> Decimal:
    x, y = _d(a), _d(b)
    _refuse_width(_aligned_width(x, y), "decimals.sub", "aligning the operands")
    return _EXACT.subtract(x, y)


def _mul(a: Any, b: Any) -> Decimal:
    return _EXACT.multiply(_d(a), _d(b))


def _div(a: Any, b: Any) -> Decimal:
    try:
        return _DIVIDE.divide(_d(a), _d(b))
    except decimal.DivisionByZero as e:
        raise CELEvalError("decimals.div: division by zero") from e
    except decimal.DecimalException as e:
        raise CELEvalError(f"decimals.div: {e}") from e


def _mod(a: Any, b: Any) -> Decimal:
    """The remainder with the dividend's sign (BigDecimal.remainder, SQL's MOD)."""
    x, y = _d(a), _d(b)
    if y == 0:
        raise CELEvalError("decimals.mod: division by zero")
    quotient = 1 if not x else max(0, x.adjusted() - y.adjusted()) + 1  # the integral quotient's digits
    _refuse_width(quotient, "decimals.mod", "the integral quotient")
    return _EXACT.remainder(x, y)


def _rescale(d: Decimal, scale: int, rounding: str, function: str) -> Decimal:
    """``d`` at ``scale`` (only widening a non-zero value costs digits)."""
    if d:
        _refuse_width(max(1, _digits(d) + scale + _exponent(d)), function, f"a scale of {scale}")
    try:
        return d.quantize(Decimal(1).scaleb(-scale, context=_EXACT), rounding=rounding, context=_EXACT)
    except (decimal.InvalidOperation, decimal.Overflow, decimal.Underflow) as e:
        raise CELEvalError(f"{function}: cannot represent a scale of {scale}") from e


def _sqrt(a: Any) -> Decimal:
    """38 digits half up; an exact root at BigDecimal's preferred scale (half the operand's,
    truncated toward zero), not the decimal spec's (floored)."""
    d = _d(a)
    if d < 0:
        raise CELEvalError("decimals.sqrt: square root of negative number")
    root = _DIVIDE.sqrt(d)
    if _EXACT.multiply(root, root) != d:
        return root
    scale = -_exponent(d)
    preferred = scale // 2 if scale >= 0 else -(-scale // 2)
    if not root:
        return _rescale(root, preferred, decimal.ROUND_HALF_UP, "decimals.sqrt")
    least = root.normalize(context=_EXACT)
    least_scale = -_exponent(least)
    room = _DIVIDE.prec - len(least.as_tuple().digits)
    return _rescale(least, max(least_scale, min(preferred, least_scale + room)), decimal.ROUND_HALF_UP, "decimals.sqrt")


def _rounding(mode: str, function: str, *, keep_finer: bool = False) -> Any:
    """``function(d)`` to an integer, or ``function(d, scale)``; ``keep_finer``: a value already
    at the scale or coarser is left as it is (Flink's TRUNCATE)."""

    def apply(*args: Any) -> Decimal:
        if len(args) not in (1, 2) or (len(args) == 2 and mode in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING)):
            raise CELEvalError(f"{function}: expected 1 or 2 args, got {len(args)}")
        d = _d(args[0])
        scale = _scale(args[1], function) if len(args) == 2 else 0
        if keep_finer and scale >= -_exponent(d):
            return d
        return _rescale(d, scale, mode, function)

    return apply


def _sign(a: Any) -> celtypes.IntType:
    d = _d(a)
    return celtypes.IntType((d > 0) - (d < 0))


# -- the overloads of the standard functions and operators


def _type_name(v: Any) -> str:
    """A value's CEL type name, for the "no matching overload" errors."""
    kinds: list[tuple[Any, str]] = [
        (type(None), "null"),
        ((bool, celtypes.BoolType), "bool"),
        (celtypes.UintType, "uint"),
        ((bytes, bytearray), "bytes"),
        (str, "string"),
        (int, "int"),
        (float, "double"),
        ((list, tuple), "list"),
        (dict, "map"),
    ]
    return next((name for kind, name in kinds if isinstance(v, kind)), type(v).__name__)


def _string(v: Any) -> celtypes.StringType:
    """``string()``: a decimal in plain notation, a timestamp as every Confluent client writes it,
    a bool as CEL's ``true``; what CEL has no ``string`` for is an error, not Python's repr."""
    if isinstance(v, celtypes.TimestampType):
        return celtypes.StringType(format_timestamp(v))
    d = decimal_boundary_value(v)
    if d is not None:
        _refuse_width(_digits(d) + abs(_exponent(d)), "string", "the plain form")
        return celtypes.StringType(format(_unsigned_zero(d), "f"))
    if isinstance(v, (bool, celtypes.BoolType)):
        return celtypes.StringType("true" if v else "false")
    if isinstance(v, (bytes, bytearray)):
        return celtypes.StringType(bytes(v).decode("utf-8"))
    if isinstance(v, str):
        return celtypes.StringType(v)
    if isinstance(v, (int, float, celtypes.DurationType)):
        return celtypes.StringType(str(v))
    raise CELEvalError(f"found no matching overload for 'string' applied to ({_type_name(v)})")


def _double(v: Any) -> celtypes.DoubleType:
    """``double()``, a decimal narrowed as Java's doubleValue (past the range: infinity)."""
    d = decimal_boundary_value(v)
    if d is not None:
        return celtypes.DoubleType(float(d))
    if isinstance(v, (bool, celtypes.BoolType, bytes, bytearray)):
        raise CELEvalError(f"found no matching overload for 'double' applied to ({_type_name(v)})")
    return celtypes.DoubleType(v)


# Values that are never a decimal, told by their type alone: every ``==`` of every rule asks.
_NEVER_DECIMAL = frozenset(
    {celtypes.StringType, celtypes.IntType, celtypes.UintType, celtypes.BoolType, celtypes.BytesType, type(None)}
)


def _holds_decimal(v: Any) -> bool:
    if type(v) in _NEVER_DECIMAL:
        return False
    if decimal_boundary_value(v) is not None:
        return True
    if isinstance(v, (list, tuple)):
        return any(map(_holds_decimal, v))
    if isinstance(v, dict):
        return any(map(_holds_decimal, v.values()))
    return False


def _equal(a: Any, b: Any) -> bool:
    """CEL equality with decimals compared as numbers (12.34 == 12.340), in containers too; a
    decimal never equals a non-decimal."""
    x, y = decimal_boundary_value(a), decimal_boundary_value(b)
    if x is not None or y is not None:
        return x is not None and y is not None and x == y
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and (_holds_decimal(a) or _holds_decimal(b)):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict) and (_holds_decimal(a) or _holds_decimal(b)):
        return len(a) == len(b) and all(k in b and _equal(v, b[k]) for k, v in a.items())
    return bool(bool_eq(a, b))


def _eq(a: Any, b: Any) -> Any:
    if not _holds_decimal(a) and not _holds_decimal(b):
        return bool_eq(a, b)
    return celtypes.BoolType(_equal(a, b))


def _ne(a: Any, b: Any) -> Any:
    if not _holds_decimal(a) and not _holds_decimal(b):
        return bool_ne(a, b)
    return celtypes.BoolType(not _equal(a, b))


def _in(item: Any, container: Any) -> Any:
    """``in`` as ``==`` has it."""
    if not _holds_decimal(item) and not _holds_decimal(container):
        return operator_in(item, container)
    if isinstance(container, (dict, list, tuple)):
        return celtypes.BoolType(any(_equal(item, member) for member in container))
    return operator_in(item, container)


def _compare(test: Any) -> Any:
    return lambda a, b: celtypes.BoolType(test(_d(a).compare(_d(b))))


# By the names CEL expressions call them: the operators, consulted before celpy's own.
DECIMAL_OPERATOR_FUNCS: dict[str, Any] = {"_==_": _eq, "_!=_": _ne, "_in_": _in}

DECIMAL_FUNCS: dict[str, Any] = {
    "decimal": _decimal,
    "decimals.eq": _compare(lambda c: c == 0),
    "decimals.lt": _compare(lambda c: c < 0),
    "decimals.le": _compare(lambda c: c <= 0),
    "decimals.gt": _compare(lambda c: c > 0),
    "decimals.ge": _compare(lambda c: c >= 0),
    "decimals.add": _add,
    "decimals.sub": _sub,
    "decimals.mul": _mul,
    "decimals.div": _div,
    "decimals.mod": _mod,
    "decimals.greatest": lambda a, b: max(_d(a), _d(b)),
    "decimals.least": lambda a, b: min(_d(a), _d(b)),
    "decimals.sqrt": _sqrt,
    "decimals.neg": lambda a: _d(a).copy_negate(),
    "decimals.abs": lambda a: _d(a).copy_abs(),
    "decimals.sign": _sign,
    "decimals.round": _rounding(decimal.ROUND_HALF_UP, "decimals.round"),
    "decimals.trunc": _rounding(decimal.ROUND_DOWN, "decimals.trunc", keep_finer=True),
    "decimals.floor": _rounding(decimal.ROUND_FLOOR, "decimals.floor"),
    "decimals.ceil": _rounding(decimal.ROUND_CEILING, "decimals.ceil"),
    "string": _string,
    "double": _double,
}
