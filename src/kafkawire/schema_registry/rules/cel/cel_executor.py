"""The CEL rule executor: a condition or transform over the whole record, bound to ``message``.

A rule's expression may be ``guard ; expr``: when the guard is false a condition passes and a
transform keeps the record, so one rule can aim at the records it is about. Programs are compiled
once per expression and kept in a bounded cache; a failure to compile or evaluate is raised as a
RuleError, which the serde hands to the rule's onFailure action.
"""

from __future__ import annotations

import datetime
import ipaddress
import uuid
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

import celpy
from celpy import celtypes
from celpy.evaluation import CELEvalError, Evaluator
from google.protobuf.message import Message

from ...common.rules import RuleContext, RuleExecutor
from ...common.schema_registry_client import RuleKind
from ...common.serde import RuleError
from ...rule_registry import RuleRegistry
from ..expression_cache import ExpressionCache
from .cel_values import from_cel, inside_has, proto_from_cel, to_cel

__all__ = ["CelExecutor"]

_SHOWN = 200  # characters of an expression or error a RuleError quotes


class _Evaluator(Evaluator):
    def macro_has_eval(self, exprlist: Any) -> celtypes.BoolType:
        with inside_has():
            return celtypes.BoolType(super().macro_has_eval(exprlist))


class _Runner(celpy.InterpretedRunner):
    """celpy's interpreter with ``has()`` reporting protobuf presence (see cel_values)."""

    def evaluate(self, context: Any) -> Any:
        return _Evaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


class CelExecutor(RuleExecutor):
    """Runs ``CEL`` rules: a CONDITION answers true or false, a TRANSFORM gives the new record."""

    def __init__(self) -> None:
        self._env = celpy.Environment(runner_class=_Runner)
        self._programs: ExpressionCache[celpy.Runner] = ExpressionCache(self._compile)

    def type(self) -> str:
        return "CEL"

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        ran, result = self.run(ctx, {"message": to_cel(message)})
        if ctx.rule.kind == RuleKind.CONDITION:
            return not ran or self.truth(result)
        if not ran:
            return message
        if isinstance(message, Message):
            return proto_from_cel(result, message)
        return from_cel(result)

    def run(self, ctx: RuleContext, args: dict[str, Any]) -> tuple[bool, Any]:
        """(False, None) when the rule's guard is false (or it has no expression), else
        (True, the expression's CEL value)."""
        expr = ctx.rule.expr
        if not expr:
            return False, None
        guard, sep, body = expr.partition(";")
        if not sep:
            body = expr
        elif guard.strip() and not self.truth(self.evaluate(guard, args)):
            return False, None
        return True, self.evaluate(body, args)

    @staticmethod
    def truth(result: Any) -> bool:
        if not isinstance(result, celtypes.BoolType):
            raise RuleError(f"a CEL condition must give a bool, not a {type(result).__name__}")
        return bool(result)

    def evaluate(self, expr: str, args: dict[str, Any]) -> Any:
        program = self._programs.get(expr)
        if "now" in expr and "now" not in args:
            args["now"] = celtypes.TimestampType(datetime.datetime.now(datetime.timezone.utc))
        try:
            return program.evaluate(args)
        except Exception as e:  # celpy's evaluation errors, and a Python error from deep inside
            raise RuleError(f"CEL expression {_short(expr)!r} failed: {_short(str(e))}") from e

    def _compile(self, expr: str) -> celpy.Runner:
        try:
            return self._env.program(self._env.compile(expr), functions=_FUNCTIONS)
        except Exception as e:  # a syntax error, or an expression nested past the recursion limit
            raise RuleError(f"CEL expression {_short(expr)!r} does not compile: {_short(str(e))}") from e

    def close(self) -> None:
        self._programs.clear()

    @classmethod
    def register(cls) -> CelExecutor:
        executor = cls()
        RuleRegistry.register_rule_executor(executor)
        return executor


# --- the string checks Confluent's CEL environment adds (after protovalidate's) ---------------


def _text(value: Any, function: str) -> str:
    if not isinstance(value, celtypes.StringType):
        raise CELEvalError(f"{function}() takes a string, not a {type(value).__name__}")
    return str(value)


def _hostname(host: str) -> bool:
    if not host or len(host) > 253:
        return False
    labels = (host[:-1] if host.endswith(".") else host).split(".")
    for label in labels:
        if not 0 < len(label) <= 63 or label[0] == "-" or label[-1] == "-":
            return False
        if not all(c.isascii() and (c.isalnum() or c == "-") for c in label):
            return False
    return not labels[-1].isdigit()  # a name, not an IPv4 address


def _ip(text: str, version: int) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return address.version == version


def is_email(value: Any) -> celtypes.BoolType:
    addr = _text(value, "isEmail")
    local, at, host = addr.rpartition("@")
    ok = parseaddr(addr)[1] == addr and len(addr) <= 254 and bool(at) and 0 < len(local) <= 64
    return celtypes.BoolType(ok and "@" not in local and _hostname(host))


def is_hostname(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_hostname(_text(value, "isHostname")))


def is_ipv4(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_ip(_text(value, "isIpv4"), 4))


def is_ipv6(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_ip(_text(value, "isIpv6"), 6))


def is_uri(value: Any) -> celtypes.BoolType:
    text = _text(value, "isUri")
    try:
        parts = urlsplit(text)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(bool(parts.scheme) and bool(parts.netloc or parts.path) and text.isprintable())


def is_uri_ref(value: Any) -> celtypes.BoolType:
    text = _text(value, "isUriRef")
    try:
        urlsplit(text)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(text.isprintable() and " " not in text)


def is_uuid(value: Any) -> celtypes.BoolType:
    try:
        uuid.UUID(_text(value, "isUuid"))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


_FUNCTIONS: dict[str, Any] = {
    "isEmail": is_email,
    "isHostname": is_hostname,
    "isIpv4": is_ipv4,
    "isIpv6": is_ipv6,
    "isUri": is_uri,
    "isUriRef": is_uri_ref,
    "isUuid": is_uuid,
}
