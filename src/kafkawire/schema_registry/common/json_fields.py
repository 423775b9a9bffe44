"""The field walk of a JSON document for field rules (CEL_FIELD, ENCRYPT).

It follows the JSON Schema through ``$ref`` (local definitions and referenced subjects, resolved
by the validator's ``referencing`` resolver), ``allOf`` (each subschema), ``oneOf`` (the first
the value is valid against), ``anyOf`` (each it is valid against), type lists (the type the value
has), arrays and object ``properties``; each property is entered
with its ``confluent:tags`` (path ``$.a.b``), and leaves the rule selects are handed to the field
transform. Objects are changed in place.
"""

from __future__ import annotations

from typing import Any

from .rules import FieldTransform, FieldType, RuleContext, apply_field, check_field_condition
from .schema_registry_client import RuleKind

__all__ = ["get_inline_tags", "get_type", "transform_json"]

_TYPES = {
    "object": FieldType.RECORD,
    "array": FieldType.ARRAY,
    "string": FieldType.STRING,
    "integer": FieldType.INT,
    "number": FieldType.DOUBLE,
    "boolean": FieldType.BOOLEAN,
    "null": FieldType.NULL,
}
_LEAVES = frozenset({FieldType.ENUM, FieldType.STRING, FieldType.INT, FieldType.DOUBLE, FieldType.BOOLEAN})


def get_type(schema: Any) -> FieldType:
    """The type a schema gives its value (a list of types has none until narrowed to one)."""
    if not isinstance(schema, dict):
        return FieldType.COMBINED if isinstance(schema, bool) else FieldType.NULL
    if schema.get("const") is not None or schema.get("enum") is not None:
        return FieldType.ENUM
    kind = schema.get("type")
    if kind == "object":
        return FieldType.RECORD if schema.get("properties") else FieldType.MAP
    if isinstance(kind, str) and kind in _TYPES:
        return _TYPES[kind]
    return FieldType.RECORD if "properties" in schema else FieldType.NULL


def get_inline_tags(schema: dict[str, Any]) -> set[str]:
    """The tags a schema declares (``confluent:tags``)."""
    return set(schema.get("confluent:tags") or ())


def transform_json(ctx: RuleContext, validator: Any, message: Any, field_transform: FieldTransform) -> Any:
    """``message`` after ``field_transform`` of each property the rule selects; ``validator`` is
    jsonschema's validator for the whole schema (its resolver follows the references)."""
    return _Walk(ctx, validator, field_transform).transform(validator.schema, validator._resolver, "$", message)


class _Walk:
    def __init__(self, ctx: RuleContext, validator: Any, field_transform: FieldTransform) -> None:
        self.ctx = ctx
        self.validator = validator
        self.ft = field_transform

    def _valid(self, schema: Any, resolver: Any, value: Any) -> bool:
        try:
            return bool(self.validator.evolve(schema=schema, _resolver=resolver).is_valid(value))
        except Exception:  # an unresolvable reference in a branch: not this branch
            return False

    def transform(self, schema: Any, resolver: Any, path: str, message: Any) -> Any:
        if message is None or not isinstance(schema, dict):
            return message
        ctx = self.ctx
        field_ctx = ctx.current_field()
        if field_ctx is not None:
            field_ctx.field_type = get_type(schema)
        kinds = schema.get("type")
        if isinstance(kinds, list):  # ["null", "string"]: walked as the type the value has
            for kind in kinds:
                narrowed = {**schema, "type": kind}
                if self._valid(narrowed, resolver, message):
                    return self.transform(narrowed, resolver, path, message)
        if any(key in schema for key in ("allOf", "anyOf", "oneOf")):
            return self._combined(schema, resolver, path, message)
        items = schema.get("items")
        if isinstance(items, dict) and isinstance(message, list):
            return [self.transform(items, resolver, path, item) for item in message]
        ref = schema.get("$ref")
        if isinstance(ref, str):
            resolved = resolver.lookup(ref)
            return self.transform(resolved.contents, resolved.resolver, path, message)
        kind = get_type(schema)
        if kind is FieldType.RECORD:
            self._properties(schema, resolver, path, message)
            return message
        if kind in _LEAVES:
            return apply_field(ctx, self.ft, message)
        return message

    def _combined(self, schema: dict[str, Any], resolver: Any, path: str, message: Any) -> Any:
        """Every allOf subschema, else the first valid oneOf, else each valid anyOf; then the
        properties and items beside them."""
        if "allOf" in schema:
            for sub in schema["allOf"] or ():
                message = self.transform(sub, resolver, path, message)
        elif "oneOf" in schema:
            for sub in schema["oneOf"] or ():
                if self._valid(sub, resolver, message):
                    message = self.transform(sub, resolver, path, message)
                    break
        else:
            for sub in schema["anyOf"] or ():
                if self._valid(sub, resolver, message):
                    message = self.transform(sub, resolver, path, message)
        self._properties(schema, resolver, path, message)
        items = schema.get("items")
        if isinstance(items, dict) and isinstance(message, list):
            message = [self.transform(items, resolver, path, item) for item in message]
        return message

    def _properties(self, schema: dict[str, Any], resolver: Any, path: str, message: Any) -> None:
        properties = schema.get("properties")
        if isinstance(properties, dict) and isinstance(message, dict):
            for name, sub in properties.items():
                if isinstance(sub, dict):
                    self._transform_property(sub, resolver, path, name, message)

    def _transform_property(self, schema: Any, resolver: Any, path: str, name: str, message: dict[str, Any]) -> None:
        ctx = self.ctx
        full_name = f"{path}.{name}"
        tags = get_inline_tags(schema) if isinstance(schema, dict) else None
        ctx.enter_field(message, full_name, name, get_type(schema), tags)
        try:
            if name not in message:
                return
            result = self.transform(schema, resolver, full_name, message[name])
            check_field_condition(ctx, result)
            if ctx.rule.kind is RuleKind.TRANSFORM:
                message[name] = result
        finally:
            ctx.exit_field()
