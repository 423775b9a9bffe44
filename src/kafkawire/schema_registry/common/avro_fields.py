"""The field walk of an Avro record for field rules (CEL_FIELD, ENCRYPT).

It follows fastavro's parsed schema (named types by full name in ``__named_schemas``) through
records, arrays, maps and unions, entering each record field with its ``confluent:tags``; leaves
the rule selects are handed to the field transform, and records are changed in place, as the
application's dict is what gets written.
"""

from __future__ import annotations

from typing import Any

from fastavro.validation import validate

from .rules import FieldTransform, FieldType, RuleContext, apply_field, check_field_condition
from .schema_registry_client import RuleKind

__all__ = ["transform_avro"]

_PRIMITIVE_TYPES = {
    "null": FieldType.NULL,
    "boolean": FieldType.BOOLEAN,
    "int": FieldType.INT,
    "long": FieldType.LONG,
    "float": FieldType.FLOAT,
    "double": FieldType.DOUBLE,
    "bytes": FieldType.BYTES,
    "string": FieldType.STRING,
    "record": FieldType.RECORD,
    "error": FieldType.RECORD,
    "enum": FieldType.ENUM,
    "array": FieldType.ARRAY,
    "map": FieldType.MAP,
    "fixed": FieldType.FIXED,
}


def _named(parsed: Any) -> dict[str, Any]:
    named = parsed.get("__named_schemas") if isinstance(parsed, dict) else None
    return named if isinstance(named, dict) else {}


def _deref(schema: Any, named: dict[str, Any]) -> Any:
    if isinstance(schema, str):
        return named.get(schema, schema)
    if isinstance(schema, dict) and isinstance(schema.get("type"), (dict, list)):
        return _deref(schema["type"], named)  # {"type": {...}} wraps a type
    return schema


def field_type(schema: Any, named: dict[str, Any]) -> FieldType:
    schema = _deref(schema, named)
    if isinstance(schema, list):
        return FieldType.COMBINED
    name = schema.get("type") if isinstance(schema, dict) else schema
    return _PRIMITIVE_TYPES.get(name, FieldType.NULL) if isinstance(name, str) else FieldType.NULL


def _name(schema: Any) -> str | None:
    return schema.get("name") if isinstance(schema, dict) else schema if isinstance(schema, str) else None


def _branch(schema: Any, named: dict[str, Any]) -> Any:
    """A union branch as fastavro's validator takes it: parsed, with the named types it uses."""
    schema = _deref(schema, named)
    if isinstance(schema, dict):
        return {**schema, "__fastavro_parsed": True, "__named_schemas": named}
    return schema


def _resolve_union(branches: list[Any], named: dict[str, Any], value: Any) -> Any:
    """The branch a value is written with: the first that takes it exactly (no extra fields),
    else the first that takes it at all."""
    for strict in (True, False):
        for branch in branches:
            if validate(value, _branch(branch, named), raise_errors=False, strict=strict):
                return branch
    return None


def transform_avro(ctx: RuleContext, parsed: Any, message: Any, field_transform: FieldTransform) -> Any:
    """``message`` after ``field_transform`` of each field the rule selects."""
    return _transform(ctx, parsed, _named(parsed), message, field_transform)


def _transform(ctx: RuleContext, schema: Any, named: dict[str, Any], message: Any, ft: FieldTransform) -> Any:
    if message is None or schema is None:
        return message
    schema = _deref(schema, named)
    field_ctx = ctx.current_field()
    if field_ctx is not None:
        field_ctx.field_type = field_type(schema, named)
    if isinstance(schema, list):
        if isinstance(message, tuple) and len(message) == 2 and isinstance(message[0], str):
            # fastavro's tuple notation, (type name, value): the branch is named.
            for branch in schema:
                if _name(_deref(branch, named)) == message[0]:
                    return (message[0], _transform(ctx, branch, named, message[1], ft))
            return message
        branch = _resolve_union(schema, named, message)
        return message if branch is None else _transform(ctx, branch, named, message, ft)
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "array" and isinstance(message, list):
        return [_transform(ctx, schema["items"], named, item, ft) for item in message]
    if kind == "map" and isinstance(message, dict):
        return {key: _transform(ctx, schema["values"], named, value, ft) for key, value in message.items()}
    if kind in ("record", "error"):
        if isinstance(message, dict):
            for field in schema["fields"]:
                _transform_field(ctx, schema, field, named, message, ft)
        return message
    return apply_field(ctx, ft, message)


def _transform_field(
    ctx: RuleContext,
    record: dict[str, Any],
    field: dict[str, Any],
    named: dict[str, Any],
    message: dict[str, Any],
    ft: FieldTransform,
) -> None:
    name = field["name"]
    ctx.enter_field(
        message, f"{record['name']}.{name}", name, field_type(field["type"], named), field.get("confluent:tags")
    )
    try:
        value = message.get(name)
        result = _transform(ctx, field["type"], named, value, ft)
        check_field_condition(ctx, result)
        if ctx.rule.kind is RuleKind.TRANSFORM and (name in message or result is not None):
            message[name] = result
    finally:
        ctx.exit_field()
