"""The field walks of an Avro record: for field rules (CEL_FIELD, ENCRYPT), and for the schema's
inline validation rules (``validate_message``).

It follows fastavro's parsed schema (named types by full name in ``__named_schemas``) through
records, arrays, maps and unions, entering each record field with its ``confluent:tags``; leaves
the rule selects are handed to the field transform, and records are changed in place, as the
application's dict is what gets written.
"""

from __future__ import annotations

import decimal
import re
from collections import defaultdict
from typing import Any

from fastavro.validation import validate

from .rules import FieldTransform, FieldType, RuleContext, apply_field, check_field_condition
from .schema_registry_client import RuleKind
from .validation_rules import (
    VALIDATION_RULES_PROP,
    ValidationRuleError,
    ValidationRuleExecutor,
    evaluate_validation_rule,
    parse_validation_rules,
)

__all__ = ["AvroMessage", "AvroSchema", "get_inline_tags", "get_type", "transform", "validate_message"]

# An Avro schema as JSON (a type name, a union, a complex type), and a value fastavro writes
# (a (branch name, value) tuple picks a union's branch).
AvroSchema = str | list[Any] | dict[str, Any]
AvroMessage = None | str | float | int | decimal.Decimal | bool | bytes | list[Any] | dict[str, Any] | tuple[Any, ...]

_FULL_NAME = re.compile(r"^(.*)\.[^.]+$")

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
    "union": FieldType.COMBINED,
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


def get_type(schema: Any) -> FieldType:
    """The type a schema names (a named type's name is not looked up: NULL)."""
    if isinstance(schema, list):
        return FieldType.COMBINED
    name = schema.get("type") if isinstance(schema, dict) else schema
    return _PRIMITIVE_TYPES.get(name, FieldType.NULL) if isinstance(name, str) else FieldType.NULL


def field_type(schema: Any, named: dict[str, Any]) -> FieldType:
    """The type of a field's schema, named types looked up in ``named``."""
    return get_type(_deref(schema, named))


def get_inline_tags(schema: Any) -> dict[str, set[str]]:
    """The ``confluent:tags`` of every record field the schema defines, by the field's full name
    (``namespace.Record.field``)."""
    tags: dict[str, set[str]] = defaultdict(set)
    _get_inline_tags_recursively("", "", schema, tags)
    return tags


def _get_inline_tags_recursively(ns: str, name: str, schema: Any, tags: dict[str, set[str]]) -> None:
    """``get_inline_tags``'s walk (confluent-kafka's name and arguments): ``ns`` and ``name`` are
    the enclosing record's namespace and full name, which a nested record without a namespace of
    its own inherits."""
    if isinstance(schema, list):
        for branch in schema:
            _get_inline_tags_recursively(ns, name, branch, tags)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind == "array":
        _get_inline_tags_recursively(ns, name, schema.get("items"), tags)
    elif kind == "map":
        _get_inline_tags_recursively(ns, name, schema.get("values"), tags)
    elif kind == "record":
        record = schema.get("name")
        record_ns: Any
        if record is not None and "." in record:  # a full name: its namespace is its own
            record_ns = _implied_namespace(record) or ""
        else:
            record_ns = schema.get("namespace")
            if record_ns is None:  # inherited: the enclosing record's namespace
                record_ns = _implied_namespace(name) or ns
            if record is not None and record_ns != "":
                record = f"{record_ns}.{record}"
        for field in schema["fields"]:
            if record is None:
                continue
            if field.get("confluent:tags") is not None and field.get("name") is not None:
                tags[record + "." + field["name"]].update(field["confluent:tags"])
            if field.get("type") is not None:
                _get_inline_tags_recursively(record_ns, record, field["type"], tags)


def _implied_namespace(name: str) -> str | None:
    """The namespace a full name carries (``a.b.Rec`` -> ``a.b``); None for a simple name."""
    match = _FULL_NAME.match(name)
    return match.group(1) if match else None


def _collapse_schema(schema: Any, encountered_references: list[str] | None = None) -> Any:
    """``schema`` (changed in place) with each named type after its first definition written as
    its name, as Avro wants it: fastavro's expanded form repeats the definition at every use."""
    seen: list[Any] = [] if encountered_references is None else encountered_references
    if isinstance(schema, list):
        return [_collapse_schema(branch, seen) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "array":
        schema["items"] = _collapse_schema(schema["items"], seen)
    elif kind == "map":
        schema["values"] = _collapse_schema(schema["values"], seen)
    elif kind == "record":
        name = schema.get("name")
        namespace = schema.get("namespace")
        full_name = name if namespace is None or (name is not None and "." in name) else f"{namespace}.{name}"
        if full_name in seen:
            return schema["name"]
        seen.append(full_name)
        if schema.get("aliases") is not None:
            seen.extend(a if namespace is None or "." in a else f"{namespace}.{a}" for a in schema["aliases"])
        schema["fields"] = _collapse_schema(schema["fields"], seen)
    elif kind in ("fixed", "enum"):
        if schema["name"] in seen:
            return schema["name"]
        seen.append(schema["name"])
        if schema.get("aliases") is not None:
            seen.extend(schema["aliases"])
    else:
        schema["type"] = _collapse_schema(schema["type"], seen)
    return schema


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


def _union_branch(schema: list[Any], named: dict[str, Any], message: Any) -> tuple[Any, Any]:
    """The branch a union value is written with, and the value in it (fastavro's tuple notation,
    (type name, value), names its branch)."""
    if isinstance(message, tuple) and len(message) == 2 and isinstance(message[0], str):
        for branch in schema:
            if _name(_deref(branch, named)) == message[0]:
                return branch, message[1]
        return None, message
    return _resolve_union(schema, named, message), message


def transform(ctx: RuleContext, parsed: Any, message: Any, field_transform: FieldTransform) -> Any:
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
        branch, value = _union_branch(schema, named, message)
        if branch is None:
            return message
        result = _transform(ctx, branch, named, value, ft)
        return (message[0], result) if value is not message else result
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


def validate_message(
    executor: ValidationRuleExecutor | None, schema: Any, message: Any, fail_fast: bool = False
) -> list[ValidationRuleError]:
    """The violations of the inline rules ``message`` meets walking ``schema`` (fastavro's parsed
    schema, or the schema's JSON): a record's rules see the record, a field's its value, and a
    field that is null or absent is not checked. Paths read ``addr.zip``, ``tags[3]``,
    ``scores["k"]``. The message is not changed."""
    out: list[ValidationRuleError] = []
    if executor is not None and schema is not None and message is not None:
        _validate(executor, schema, _named(schema), message, "", fail_fast, out)
    return out


def _validate(
    executor: ValidationRuleExecutor,
    schema: Any,
    named: dict[str, Any],
    message: Any,
    path: str,
    fail_fast: bool,
    out: list[ValidationRuleError],
) -> None:
    schema = _deref(schema, named)
    if message is None or schema is None:
        return
    if isinstance(schema, list):
        branch, value = _union_branch(schema, named, message)
        if branch is not None and branch != "null":
            _validate(executor, branch, named, value, path, fail_fast, out)
        return
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "array" and isinstance(message, list):
        children: Any = ((f"{path}[{i}]", schema["items"], item) for i, item in enumerate(message))
    elif kind == "map" and isinstance(message, dict):
        children = ((f'{path}["{key}"]', schema["values"], value) for key, value in message.items())
    elif kind in ("record", "error") and isinstance(message, dict):
        for rule in parse_validation_rules(schema.get(VALIDATION_RULES_PROP)):
            evaluate_validation_rule(executor, rule, schema, message, path, out)
            if fail_fast and out:
                return
        children = _fields(executor, schema, message, path, fail_fast, out)
    else:
        return
    for child_path, child_schema, value in children:
        if fail_fast and out:
            return
        _validate(executor, child_schema, named, value, child_path, fail_fast, out)


def _fields(
    executor: ValidationRuleExecutor,
    record: dict[str, Any],
    message: dict[str, Any],
    path: str,
    fail_fast: bool,
    out: list[ValidationRuleError],
) -> Any:
    """Each field's own rules (on a value that is there), then the field to walk into."""
    for field in record["fields"]:
        name = field["name"]
        child_path = f"{path}.{name}" if path else name
        value = message.get(name)
        if value is not None:
            for rule in parse_validation_rules(field.get(VALIDATION_RULES_PROP)):
                evaluate_validation_rule(executor, rule, field["type"], value, child_path, out)
                if fail_fast and out:
                    return
        yield child_path, field["type"], value
