"""CEL's ``string.format(list)`` (the strings extension celpy lacks), as Confluent's CEL environment
gives it: printf verbs ``%s %d %f %e %x %X %o %b`` and ``%%``, a ``.N`` precision for the floating
ones (6 when none), each verb taking the next argument of the list.

An argument of the wrong type, a verb left unfinished, or arguments too few or too many make the
call's result a CEL error (returned, as celpy's functions do, rather than raised).
"""

from __future__ import annotations

from typing import Any, ClassVar

from celpy import celtypes
from celpy.evaluation import CELEvalError

__all__ = ["QUOTE_TRANS", "StringFormat", "format", "format_value", "quote"]

QUOTE_TRANS = str.maketrans(
    {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v", "\\": r"\\", '"': r"\""}
)

_INTEGERS = (celtypes.IntType, celtypes.UintType)


def quote(s: str) -> str:
    """``s`` as a CEL string literal (how a string inside a formatted list is written)."""
    return '"' + s.translate(QUOTE_TRANS) + '"'


class StringFormat:
    """``format`` for one locale (only its name is kept: the verbs are locale-free, as in the
    other clients' default en_US)."""

    def __init__(self, locale: str) -> None:
        self.locale = locale

    def format(self, fmt: Any, args: Any) -> Any:
        if not isinstance(fmt, celtypes.StringType):
            return CELEvalError("format() requires a string as the first argument")
        if not isinstance(args, celtypes.ListType):
            return CELEvalError("format() requires a list as the second argument")
        out: list[str] = []
        used = 0
        at = 0
        while at < len(fmt):
            char = fmt[at]
            if char != "%":
                out.append(char)
                at += 1
                continue
            if fmt[at + 1 : at + 2] == "%":
                out.append("%")
                at += 2
                continue
            if used >= len(args):
                return CELEvalError("format() not enough arguments for format string")
            arg = args[used]
            used += 1
            at += 1
            precision = 6
            if fmt[at : at + 1] == ".":
                at += 1
                digits = at
                while at < len(fmt) and fmt[at].isdigit():
                    at += 1
                precision = sum(int(d) * 10**i for i, d in enumerate(reversed(fmt[digits:at])))
            if at >= len(fmt):
                return CELEvalError("format() incomplete format specifier")
            verb = fmt[at]
            if verb not in self._VERBS:
                return CELEvalError("format() unknown format specifier: " + verb)
            formatted = self._VERBS[verb](self, arg, precision)
            if isinstance(formatted, CELEvalError):
                return formatted
            out.append(str(formatted).upper() if verb == "X" else str(formatted))
            at += 1
        if used < len(args):
            return CELEvalError("format() too many arguments for format string")
        return celtypes.StringType("".join(out))

    def format_float(self, arg: Any, precision: int) -> Any:
        if isinstance(arg, celtypes.DoubleType):
            return celtypes.StringType(f"{arg:.{precision}f}")
        return self.format_int(arg)

    def format_exponential(self, arg: Any, precision: int) -> Any:
        if isinstance(arg, celtypes.DoubleType):
            return celtypes.StringType(f"{arg:.{precision}e}")
        return self.format_int(arg)

    def format_int(self, arg: Any) -> Any:
        if isinstance(arg, _INTEGERS):
            return celtypes.StringType(str(arg))
        return CELEvalError("format_int() requires an integer argument")

    def format_hex(self, arg: Any) -> Any:
        if isinstance(arg, _INTEGERS):
            return celtypes.StringType(f"{arg:x}")
        if isinstance(arg, celtypes.BytesType):
            return celtypes.StringType(arg.hex())
        if isinstance(arg, celtypes.StringType):
            return celtypes.StringType(arg.encode("utf-8").hex())
        return CELEvalError("format_hex() requires an integer, string, or binary argument")

    def format_oct(self, arg: Any) -> Any:
        if isinstance(arg, _INTEGERS):
            return celtypes.StringType(f"{arg:o}")
        return CELEvalError("format_oct() requires an integer argument")

    def format_bin(self, arg: Any) -> Any:
        if isinstance(arg, (*_INTEGERS, celtypes.BoolType)):
            return celtypes.StringType(f"{arg:b}")
        return CELEvalError("format_bin() requires an integer argument")

    def format_string(self, arg: Any) -> Any:
        if isinstance(arg, celtypes.StringType):
            return arg
        if isinstance(arg, celtypes.BytesType):
            return celtypes.StringType(arg.hex())
        if isinstance(arg, celtypes.ListType):
            return self.format_list(arg)
        return celtypes.StringType(arg)

    def format_value(self, arg: Any) -> Any:
        """One element of a list: a string quoted, anything else as ``%s`` writes it."""
        if isinstance(arg, str):
            return celtypes.StringType(quote(arg))
        if isinstance(arg, celtypes.UintType):
            return celtypes.StringType(str(arg))
        return self.format_string(arg)

    def format_list(self, arg: Any) -> Any:
        items = []
        for item in arg:
            formatted = self.format_value(item)
            if isinstance(formatted, CELEvalError):
                return formatted
            items.append(str(formatted))
        return celtypes.StringType("[" + ", ".join(items) + "]")

    # Each verb: how it writes its argument (the precision used by the floating ones only).
    _VERBS: ClassVar[dict[str, Any]] = {
        "f": format_float,
        "e": format_exponential,
        "d": lambda self, arg, _: self.format_int(arg),
        "s": lambda self, arg, _: self.format_string(arg),
        "x": lambda self, arg, _: self.format_hex(arg),
        "X": lambda self, arg, _: self.format_hex(arg),
        "o": lambda self, arg, _: self.format_oct(arg),
        "b": lambda self, arg, _: self.format_bin(arg),
    }


_EN_US = StringFormat("en_US")
format = _EN_US.format
format_value = _EN_US.format_value
