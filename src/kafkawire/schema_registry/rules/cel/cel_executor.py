"""The CEL rule executor: a condition or transform over the whole record, bound to ``message``.

A rule's expression may be ``guard ; expr``: when the guard is false a condition passes and a
transform keeps the record, so one rule can aim at the records it is about. Programs are compiled
once per expression and kept in a bounded cache; a failure to compile or evaluate is raised as a
RuleError, which the serde hands to the rule's onFailure action.
"""

from __future__ import annotations

import datetime
from typing import Any

import celpy
from celpy import celtypes
from google.protobuf.message import Message

from ...common.rules import FieldContext as FieldContext
from ...common.rules import RuleContext, RuleExecutor
from ...common.schema_registry_client import RuleKind
from ...common.schemas import Schema as Schema
from ...common.serde import RuleError
from ...rule_registry import RuleRegistry
from ..expression_cache import ExpressionCache
from . import protobuf_result_writer
from .cel_field_presence import InterpretedRunner
from .cel_values import DAYS_SHIFT, from_cel, proto_scalar_to_cel, to_cel
from .extra_func import EXTRA_FUNCS

__all__ = ["DAYS_SHIFT", "EXTRA_FUNCS", "CelExecutor", "InterpretedRunner", "field_value_to_cel", "msg_to_cel"]

# A record (Avro or JSON values, or a protobuf message) as a CEL rule sees it: confluent-kafka's name.
msg_to_cel = to_cel

_SHOWN = 200  # characters of an expression or error a RuleError quotes


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


class CelExecutor(RuleExecutor):
    """Runs ``CEL`` rules: a CONDITION answers true or false, a TRANSFORM gives the new record."""

    def __init__(self) -> None:
        self._env = celpy.Environment(runner_class=InterpretedRunner)
        self._programs: ExpressionCache[celpy.Runner] = ExpressionCache(self._compile)

    def type(self) -> str:
        return "CEL"

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        ran, result = self.run(ctx, {"message": msg_to_cel(message)})
        if ctx.rule.kind == RuleKind.CONDITION:
            return not ran or self.truth(result)
        if not ran:
            return message
        if isinstance(message, Message):
            return protobuf_result_writer.convert(result, message)
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

    def program(self, expr: str) -> celpy.Runner:
        """The compiled program of ``expr`` (compiled once); RuleError when it does not compile."""
        return self._programs.get(expr)

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
            return self._env.program(self._env.compile(expr), functions=EXTRA_FUNCS)
        except Exception as e:  # a syntax error, or an expression nested past the recursion limit
            raise RuleError(f"CEL expression {_short(expr)!r} does not compile: {_short(str(e))}") from e

    def close(self) -> None:
        self._programs.clear()

    @classmethod
    def register(cls) -> CelExecutor:
        executor = cls()
        RuleRegistry.register_rule_executor(executor)
        return executor


def field_value_to_cel(field_ctx: FieldContext, value: Any) -> Any:
    """A protobuf field's value typed by its descriptor (a uint32 is a CEL uint): the record's own
    field, which the walk hands over (its name may differ from the schema's); any other value by
    its Python type."""
    fd = field_ctx.field_descriptor
    if fd is None and isinstance(field_ctx.containing_message, Message):
        fd = field_ctx.containing_message.DESCRIPTOR.fields_by_name.get(field_ctx.name)
    if fd is not None and fd.message_type is None and value is not None:
        return proto_scalar_to_cel(value, fd)
    return to_cel(value)
