"""The field walks of a JSON document: for field rules (CEL_FIELD, ENCRYPT), and for the schema's
inline validation rules (``validate_message``).

It follows the JSON Schema through ``$ref`` (local definitions and referenced subjects, resolved
by the validator's ``referencing`` resolver), ``allOf`` (each subschema), ``oneOf`` (the first
the value is valid against), ``anyOf`` (each it is valid against), type lists (the type the value
has), arrays and object ``properties``; each property is entered
with its ``confluent:tags`` (path ``$.a.b``), and leaves the rule selects are handed to the field
transform. Objects are changed in place. The validation walk takes the same paths and only reads.
"""

from __future__ import annotations

import decimal
from typing import Any

from jsonschema import ValidationError, validate
from jsonschema.validators import validator_for

from .rules import FieldTransform, FieldType, RuleContext, apply_field, check_field_condition
from .schema_registry_client import RuleKind
from .validation_rules import (
    VALIDATION_RULES_PROP,
    ValidationRuleError,
    ValidationRuleExecutor,
    evaluate_validation_rule,
    parse_validation_rules,
)

__all__ = [
    "JsonMessage",
    "JsonSchema",
    "get_inline_tags",
    "get_type",
    "transform",
    "transform_json",
    "validate_json",
    "validate_message",
]

# A JSON Schema (true and false are schemas too), and a document's value.
JsonSchema = bool | dict[str, Any]
JsonMessage = None | str | float | int | decimal.Decimal | bool | list[Any] | dict[str, Any]

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
    if isinstance(schema, bool):
        return FieldType.COMBINED
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
    tags = schema.get("confluent:tags")
    return set() if tags is None else set(tags)


def transform_json(ctx: RuleContext, validator: Any, message: Any, field_transform: FieldTransform) -> Any:
    """``message`` after ``field_transform`` of each property the rule selects; ``validator`` is
    jsonschema's validator for the whole schema (its resolver follows the references)."""
    return _Walk(ctx, validator, field_transform).transform(validator.schema, validator._resolver, "$", message)


def _valid(validator: Any, schema: Any, resolver: Any, value: Any) -> bool:
    """Whether ``value`` is valid against a part of the whole schema (a branch, a narrowed type)."""
    try:
        return bool(validator.evolve(schema=schema, _resolver=resolver).is_valid(value))
    except Exception:  # an unresolvable reference in a branch: not this branch
        return False


def _narrowed(validator: Any, schema: dict[str, Any], resolver: Any, message: Any) -> dict[str, Any] | None:
    """A schema with a list of types as the first of them ``message`` is valid against."""
    for kind in schema["type"]:
        narrowed = {**schema, "type": kind}
        if _valid(validator, narrowed, resolver, message):
            return narrowed
    return None


def transform(
    ctx: RuleContext,
    schema: Any,
    ref_registry: Any,
    ref_resolver: Any,
    path: str,
    message: Any,
    field_transform: FieldTransform,
) -> Any:
    """`transform_json` of the part of a document at ``path`` (``$`` for all of it) against
    ``schema``, its ``$ref``s resolved by ``ref_resolver`` of the ``referencing`` registry
    ``ref_registry``."""
    validator = validator_for(schema)(schema, registry=ref_registry)
    return _Walk(ctx, validator, field_transform).transform(schema, ref_resolver, path, message)


def _transform_field(
    ctx: RuleContext,
    path: str,
    prop_name: str,
    message: Any,
    prop_schema: Any,
    ref_registry: Any,
    ref_resolver: Any,
    field_transform: FieldTransform,
) -> None:
    """`transform` of the property ``prop_name`` of the object ``message`` at ``path``, in place:
    the walk's step into an object's property, by confluent-kafka's name and signature."""
    # a schema that is not one fails where the walk reads it, as confluent-kafka's does, not here
    draft = validator_for(prop_schema if isinstance(prop_schema, (dict, bool)) else True)
    _Walk(ctx, draft(prop_schema, registry=ref_registry), field_transform).transform_field(
        prop_schema, ref_resolver, path, prop_name, message
    )


def _validate_subschemas(subschemas: Any, message: Any, registry: Any, resolver: Any) -> Any:
    """The first of ``subschemas`` (a ``$ref`` one as the schema it refers to) that ``message`` is
    valid against, else None. Unlike the walk's branch test, an invalid subschema or a reference
    that does not resolve raises: confluent-kafka's helper for callers that want to know."""
    for subschema in subschemas:
        if not isinstance(subschema, dict):
            continue
        ref = subschema.get("$ref")
        try:
            if ref is None:
                validate(instance=message, schema=subschema, registry=registry)
                return subschema
            resolved = resolver.lookup(ref)
            validate(instance=message, schema=resolved.contents, registry=registry, _resolver=resolved.resolver)
            return resolved.contents
        except ValidationError:
            continue
    return None


class _Walk:
    def __init__(self, ctx: RuleContext, validator: Any, field_transform: FieldTransform) -> None:
        self.ctx = ctx
        self.validator = validator
        self.ft = field_transform

    def _valid(self, schema: Any, resolver: Any, value: Any) -> bool:
        return _valid(self.validator, schema, resolver, value)

    def transform(self, schema: Any, resolver: Any, path: str, message: Any) -> Any:
        if message is None or not isinstance(schema, dict):
            return message
        ctx = self.ctx
        field_ctx = ctx.current_field()
        if field_ctx is not None:
            field_ctx.field_type = get_type(schema)
        kinds = schema.get("type")
        if isinstance(kinds, list):  # ["null", "string"]: walked as the type the value has
            narrowed = _narrowed(self.validator, schema, resolver, message)
            if narrowed is not None:
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
                    self.transform_field(sub, resolver, path, name, message)

    def transform_field(self, schema: Any, resolver: Any, path: str, name: str, message: Any) -> None:
        """One property, entered as a field; a null or absent one is left as it is."""
        ctx = self.ctx
        full_name = f"{path}.{name}"
        try:
            ctx.enter_field(message, full_name, name, get_type(schema), get_inline_tags(schema))
            value = message.get(name)
            if value is None:
                return
            result = self.transform(schema, resolver, full_name, value)
            check_field_condition(ctx, result)
            if ctx.rule.kind is RuleKind.TRANSFORM:
                message[name] = result
        finally:
            ctx.exit_field()


def validate_message(
    executor: ValidationRuleExecutor | None,
    schema: Any,
    ref_registry: Any,
    ref_resolver: Any,
    message: Any,
    fail_fast: bool = False,
) -> list[ValidationRuleError]:
    """The violations of the inline rules ``message`` meets walking ``schema``, its ``$ref``s
    resolved by ``ref_resolver`` (of the ``referencing`` registry ``ref_registry``)."""
    if executor is None or schema is None or message is None:
        return []
    validator = validator_for(schema)(schema, registry=ref_registry)
    return _Check(executor, validator, fail_fast).run(schema, ref_resolver, message)


def validate_json(
    executor: ValidationRuleExecutor | None, validator: Any, message: Any, fail_fast: bool = False
) -> list[ValidationRuleError]:
    """`validate_message` with the schema and its references as a serializer holds them: the
    jsonschema validator of the whole schema."""
    if executor is None or message is None:
        return []
    return _Check(executor, validator, fail_fast).run(validator.schema, validator._resolver, message)


class _Check:
    """The validation walk: the field walk's paths (rooted at ``$``), rules evaluated instead of
    fields transformed. A property that is null or absent is not checked; properties the schema
    does not declare are not walked."""

    def __init__(self, executor: ValidationRuleExecutor, validator: Any, fail_fast: bool) -> None:
        self.executor = executor
        self.validator = validator
        self.fail_fast = fail_fast
        self.out: list[ValidationRuleError] = []

    def run(self, schema: Any, resolver: Any, message: Any) -> list[ValidationRuleError]:
        self.walk(schema, resolver, "$", message)
        return self.out

    def stop(self) -> bool:
        return self.fail_fast and bool(self.out)

    def walk(self, schema: Any, resolver: Any, path: str, message: Any) -> None:
        if message is None or not isinstance(schema, dict):
            return
        if isinstance(schema.get("type"), list) and schema["type"]:
            narrowed = _narrowed(self.validator, schema, resolver, message)
            if narrowed is not None:
                self.walk(narrowed, resolver, path, message)
            return
        if any(key in schema for key in ("allOf", "anyOf", "oneOf")):
            self._combined(schema, resolver, path, message)
            return
        if schema.get("items") is not None and isinstance(message, list):
            self._items(schema["items"], resolver, path, message)
            return
        ref = schema.get("$ref")
        if ref is not None:
            resolved = resolver.lookup(ref)
            self.walk(resolved.contents, resolved.resolver, path, message)
            return
        self._object(schema, resolver, path, message)

    def _combined(self, schema: dict[str, Any], resolver: Any, path: str, message: Any) -> None:
        """Every allOf subschema, else the first valid oneOf, else each valid anyOf; then the
        properties and items beside them."""
        if schema.get("allOf") is not None:
            for sub in schema["allOf"]:
                self.walk(sub, resolver, path, message)
                if self.stop():
                    return
        elif schema.get("oneOf") is not None:
            for sub in schema["oneOf"]:
                if _valid(self.validator, sub, resolver, message):
                    self.walk(sub, resolver, path, message)
                    break
        elif schema.get("anyOf") is not None:
            for sub in schema["anyOf"]:
                if _valid(self.validator, sub, resolver, message):
                    self.walk(sub, resolver, path, message)
                    if self.stop():
                        return
        if self.stop():
            return
        self._object(schema, resolver, path, message)
        if not self.stop() and schema.get("items") is not None and isinstance(message, list):
            self._items(schema["items"], resolver, path, message)

    def _items(self, items: Any, resolver: Any, path: str, message: list[Any]) -> None:
        for i, item in enumerate(message):
            self.walk(items, resolver, f"{path}[{i}]", item)
            if self.stop():
                return

    def _object(self, schema: dict[str, Any], resolver: Any, path: str, message: Any) -> None:
        if not isinstance(message, dict):
            return
        for rule in parse_validation_rules(schema.get(VALIDATION_RULES_PROP)):
            evaluate_validation_rule(self.executor, rule, schema, message, path, self.out)
            if self.stop():
                return
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return
        for name, sub in properties.items():
            if not isinstance(sub, dict):
                continue
            full_name = f"{path}.{name}"
            value = message.get(name)
            if value is not None:
                for rule in parse_validation_rules(sub.get(VALIDATION_RULES_PROP)):
                    evaluate_validation_rule(self.executor, rule, sub, value, full_name, self.out)
                    if self.stop():
                        return
            self.walk(sub, resolver, full_name, value)
            if self.stop():
                return
