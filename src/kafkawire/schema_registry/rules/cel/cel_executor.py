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
from celpy.evaluation import Evaluator
from google.protobuf.message import Message

from ...common.rules import FieldContext as FieldContext
from ...common.rules import RuleContext, RuleExecutor
from ...common.schema_registry_client import RuleKind
from ...common.schemas import Schema as Schema
from ...common.serde import RuleError
from ...rule_registry import RuleRegistry
from ..expression_cache import ExpressionCache
from .cel_values import from_cel, inside_has, proto_from_cel, to_cel
from .extra_func import FUNCTIONS

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
            return self._env.program(self._env.compile(expr), functions=FUNCTIONS)
        except Exception as e:  # a syntax error, or an expression nested past the recursion limit
            raise RuleError(f"CEL expression {_short(expr)!r} does not compile: {_short(str(e))}") from e

    def close(self) -> None:
        self._programs.clear()

    @classmethod
    def register(cls) -> CelExecutor:
        executor = cls()
        RuleRegistry.register_rule_executor(executor)
        return executor
