"""The CEL_FIELD rule executor: a CEL condition or transform run on each field the rule selects.

The expression sees the field as ``value`` with ``fullName``, ``name``, ``typeName``, ``tags``
and its record as ``message``; as with CEL, ``guard ; expr`` leaves a field the guard rejects as
it is. Only primitive fields are touched, and a transform's answer must be a value of the field's
type, so a rule cannot hand the serializer something the schema would refuse at a distance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from celpy import celtypes
from google.protobuf.message import Message

from ...common.rules import FieldContext, FieldRuleExecutor, FieldTransform, FieldType, RuleContext
from ...common.schema_registry_client import RuleKind
from ...common.serde import RuleError
from ...rule_registry import RuleRegistry
from .cel_executor import CelExecutor, field_value_to_cel, msg_to_cel
from .cel_values import from_cel, restore_like, source_of
from .protobuf_result_writer import convert

__all__ = ["CelFieldExecutor", "field_value_to_cel", "msg_to_cel"]

_PYTHON_TYPES: dict[FieldType, tuple[type, ...]] = {
    FieldType.STRING: (str,),
    FieldType.BYTES: (bytes,),
    FieldType.INT: (int,),
    FieldType.LONG: (int,),
    FieldType.FLOAT: (float,),
    FieldType.DOUBLE: (float,),
    FieldType.BOOLEAN: (bool,),
    FieldType.NULL: (type(None),),
}


class CelFieldExecutor(FieldRuleExecutor):
    """Runs ``CEL_FIELD`` rules, one evaluation per selected primitive field."""

    def __init__(self) -> None:
        self._cel = CelExecutor()

    def type(self) -> str:
        return "CEL_FIELD"

    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        return FieldTransform(self._transform_field)

    def _transform_field(self, ctx: RuleContext, field_ctx: FieldContext, value: Any) -> Any:
        if not field_ctx.is_primitive():
            return value
        args: dict[str, Any] = {
            "value": field_value_to_cel(field_ctx, value),
            "fullName": celtypes.StringType(field_ctx.full_name),
            "name": celtypes.StringType(field_ctx.name),
            "typeName": celtypes.StringType(field_ctx.type_name()),
            "tags": celtypes.ListType([celtypes.StringType(tag) for tag in sorted(field_ctx.tags)]),
        }
        # The record is converted only for an expression that can read it: a field rule runs for
        # every field, and converting the record each time would make a record's cost quadratic.
        if "message" in (ctx.rule.expr or ""):
            args["message"] = msg_to_cel(field_ctx.containing_message)
        ran, result = self._cel.run(ctx, args)
        if ctx.rule.kind == RuleKind.CONDITION:
            return not ran or self._cel.truth(result)
        if not ran:
            return value
        if isinstance(value, Message):  # a Decimal or Timestamp: the walk encodes what the rule gave
            if isinstance(result, Mapping):
                return convert(result, value)
            source = source_of(result)
            return source if isinstance(source, Message) else from_cel(result)
        return _field_value(field_ctx, from_cel(result), value)

    def close(self) -> None:
        self._cel.close()

    @classmethod
    def register(cls) -> CelFieldExecutor:
        executor = cls()
        RuleRegistry.register_rule_executor(executor)
        return executor


def _field_value(field_ctx: FieldContext, result: Any, old: Any) -> Any:
    """The transform's answer as a value of the field's type, or a RuleError."""
    result = restore_like(result, old)
    if result is None or (old is not None and type(result) is type(old)):
        return result
    expected = _PYTHON_TYPES[field_ctx.field_type]
    if float in expected and type(result) is int:
        return float(result)
    if not isinstance(result, expected) or (bool not in expected and isinstance(result, bool)):
        raise RuleError(
            f"CEL_FIELD rule gave a {type(result).__name__} for {field_ctx.full_name}, a {field_ctx.type_name()} field"
        )
    return result
