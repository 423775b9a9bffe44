"""The CEL executor of inline validation rules: a rule's expression sees the value checked as ``this``
(and the time as ``now``) and answers true, false, or a string saying what is wrong ('' passes).

Programs are compiled once per expression by the CEL rule executor's cache, with its functions.
"""

from __future__ import annotations

import datetime
from typing import Any

from celpy import celtypes
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from ...common.serde import RuleError as RuleError
from ...common.validation_rules import ValidationRule as ValidationRule
from ...common.validation_rules import ValidationRuleExecutor
from .cel_executor import CelExecutor
from .cel_field_presence import InterpretedRunner as InterpretedRunner
from .cel_values import proto_field_to_cel, to_cel
from .decimal_funcs import decimal_boundary_value as decimal_boundary_value
from .extra_func import EXTRA_FUNCS as EXTRA_FUNCS

__all__ = ["CelValidator", "ValidationRuleExecutor", "decimal_boundary_value"]


class CelValidator(ValidationRuleExecutor):
    """Runs a validation rule's CEL expression on one value (see the module)."""

    def __init__(self) -> None:
        self._cel = CelExecutor()

    def execute(self, rule: ValidationRule, schema: Any, message: Any) -> Any:
        # the RuleErrors' texts are confluent-kafka's: they end up in the serializer's error
        name = rule.name or "unnamed"
        if message is None:  # the walks check no null value: a caller that does is wrong
            raise RuleError(
                f"Validation rule '{name}' received a null value; walkers must enforce "
                f"skip-on-null before invoking the executor."
            )
        if not rule.expr:
            raise RuleError(f"Validation rule '{name}' has no expression")
        try:
            this = _to_cel(schema, message)
        except Exception as e:
            raise RuleError(f"Could not convert value for validation rule '{name}'") from e
        try:
            program = self._cel.program(rule.expr)
        except RuleError as e:
            raise RuleError(f"Could not compile validation rule '{name}'") from e.__cause__
        args = {"this": this, "now": celtypes.TimestampType(datetime.datetime.now(datetime.timezone.utc))}
        try:
            result = program.evaluate(args)
        except Exception as e:
            detail = f" ({rule.doc})" if rule.doc else ""
            raise RuleError(f"Could not execute validation rule '{name}'{detail}") from e
        # a CEL bool is an int and a CEL string a str: tested by their CEL types first
        if isinstance(result, (bool, celtypes.BoolType)):
            return bool(result)
        if isinstance(result, (str, celtypes.StringType)):
            return str(result)
        raise RuleError(f"Validation rule '{name}' must return bool or string; got {type(result).__name__}")

    def close(self) -> None:
        self._cel.close()


def _to_cel(schema: Any, value: Any) -> Any:
    """``this``: a protobuf field's value typed by its descriptor, anything else by its own type."""
    decimal = decimal_boundary_value(value)
    if decimal is not None:
        return decimal
    if isinstance(schema, FieldDescriptor) and not isinstance(value, Message):
        return proto_field_to_cel(value, schema)
    return to_cel(value)
