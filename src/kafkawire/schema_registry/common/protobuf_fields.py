"""The field walks of a Protobuf message: for field rules (CEL_FIELD, ENCRYPT), and for the
schema's inline validation rules (``validate_message``, the ``rules`` of ``confluent.message_meta``
and ``field_meta``).

It follows the message's descriptor: each field set on the message (a oneof's chosen member only)
is entered with the tags of its ``(confluent.field_meta)`` option; nested messages, repeated
fields and maps are walked, and scalar leaves the rule selects are handed to the field transform
and written back on the message, which is changed in place.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, EncodeError, Message

from ...serialization import SerializationError
from .rules import FieldTransform, FieldType, RuleContext, apply_field, check_field_condition
from .schema_registry_client import RuleKind
from .validation_rules import ValidationRule, ValidationRuleError, ValidationRuleExecutor, evaluate_validation_rule

__all__ = ["get_inline_tags", "is_map_field", "transform_protobuf", "validate_message"]

_F = FieldDescriptor
_SCALARS = {
    _F.TYPE_STRING: FieldType.STRING,
    _F.TYPE_BYTES: FieldType.BYTES,
    _F.TYPE_BOOL: FieldType.BOOLEAN,
    _F.TYPE_FLOAT: FieldType.FLOAT,
    _F.TYPE_DOUBLE: FieldType.DOUBLE,
    _F.TYPE_ENUM: FieldType.ENUM,
    _F.TYPE_INT32: FieldType.INT,
    _F.TYPE_SINT32: FieldType.INT,
    _F.TYPE_UINT32: FieldType.INT,
    _F.TYPE_FIXED32: FieldType.INT,
    _F.TYPE_SFIXED32: FieldType.INT,
    _F.TYPE_INT64: FieldType.LONG,
    _F.TYPE_SINT64: FieldType.LONG,
    _F.TYPE_UINT64: FieldType.LONG,
    _F.TYPE_FIXED64: FieldType.LONG,
    _F.TYPE_SFIXED64: FieldType.LONG,
}


# Descriptors are typed Any: the C (upb) and Python implementations' classes differ.


def is_map_field(fd: Any) -> bool:
    return fd.type == _F.TYPE_MESSAGE and bool(fd.message_type.GetOptions().map_entry)


def _is_repeated(fd: Any) -> bool:
    repeated = getattr(fd, "is_repeated", None)  # protobuf >= 6; older: the label
    return bool(repeated) if repeated is not None else fd.label == _F.LABEL_REPEATED


def _element_type(fd: Any) -> FieldType:
    return FieldType.RECORD if fd.type == _F.TYPE_MESSAGE else _SCALARS.get(fd.type, FieldType.NULL)


def field_type(fd: Any) -> FieldType:
    if is_map_field(fd):
        return FieldType.MAP
    if _is_repeated(fd):
        return FieldType.ARRAY
    return _element_type(fd)


def _meta(described: Any, extension_name: str) -> Any:
    """The ``confluent.Meta`` option of a field or message, or None."""
    try:
        extension = descriptor_pool.Default().FindExtensionByName(extension_name)
    except KeyError:  # confluent/meta.proto was never loaded: nothing carries the option
        return None
    options: Any = described.GetOptions()
    return options.Extensions[extension] if options.HasExtension(extension) else None


def get_inline_tags(fd: Any) -> set[str]:
    """The tags of ``[(confluent.field_meta).tags = ...]`` on the field."""
    meta = _meta(fd, "confluent.field_meta")
    return set() if meta is None else set(meta.tags)


def _rules(described: Any, extension_name: str) -> list[ValidationRule]:
    meta = _meta(described, extension_name)
    return [] if meta is None else [ValidationRule(r.name, r.doc, r.expr, r.sql) for r in meta.rules]


def transform_protobuf(ctx: RuleContext, message: Any, field_transform: FieldTransform) -> Any:
    """``message`` after ``field_transform`` of each field the rule selects."""
    if isinstance(message, Message):
        _walk_message(ctx, message.DESCRIPTOR, message, field_transform)
    return message


def _walk_message(ctx: RuleContext, descriptor: Any, message: Message, ft: FieldTransform) -> None:
    for fd in descriptor.fields:
        oneof = fd.containing_oneof
        if oneof is not None and message.WhichOneof(oneof.name) != fd.name:
            continue
        if not _is_repeated(fd) and fd.type == _F.TYPE_MESSAGE and not message.HasField(fd.name):
            continue
        ctx.enter_field(message, fd.full_name, fd.name, field_type(fd), get_inline_tags(fd))
        try:
            _walk_field(ctx, fd, message, ft)
        finally:
            ctx.exit_field()


def _leaf(ctx: RuleContext, fd: Any, value: Any, ft: FieldTransform) -> Any:
    field_ctx = ctx.current_field()
    if field_ctx is not None:
        field_ctx.field_type = _element_type(fd)
    result = apply_field(ctx, ft, value)
    check_field_condition(ctx, result)
    return result


def _walk_field(ctx: RuleContext, fd: Any, message: Message, ft: FieldTransform) -> None:
    value = getattr(message, fd.name)
    transform = ctx.rule.kind is RuleKind.TRANSFORM
    if is_map_field(fd):
        value_fd = fd.message_type.fields_by_name["value"]
        for key in list(value):
            if value_fd.type == _F.TYPE_MESSAGE:
                _walk_message(ctx, value_fd.message_type, value[key], ft)
            else:
                result = _leaf(ctx, value_fd, value[key], ft)
                if transform:
                    value[key] = result
    elif _is_repeated(fd):
        if fd.type == _F.TYPE_MESSAGE:
            for item in value:
                _walk_message(ctx, fd.message_type, item, ft)
        else:
            results = [_leaf(ctx, fd, item, ft) for item in value]
            if transform:
                del value[:]
                value.extend(results)
    elif fd.type == _F.TYPE_MESSAGE:
        _walk_message(ctx, fd.message_type, value, ft)
    else:
        result = _leaf(ctx, fd, value, ft)
        if transform:
            setattr(message, fd.name, result)


def validate_message(
    executor: ValidationRuleExecutor | None, descriptor: Any, message: Any, fail_fast: bool = False
) -> list[ValidationRuleError]:
    """The violations of the inline rules ``message`` meets walking ``descriptor`` (the registered
    schema's): a message's rules see the message, a field's its value (a repeated or map field's:
    the whole collection); a field with presence that is unset is not checked. Fields pair with the
    schema's by number; a rule sees values as the schema names and types them (the message read
    again through the schema when its own class describes it otherwise). Paths read ``addr.zip``,
    ``items[3]``, ``labels["k"]``. The message is not changed."""
    out: list[ValidationRuleError] = []
    if executor is None or descriptor is None or message is None:
        return out
    view = None
    if descriptor is not message.DESCRIPTOR:
        view = message_factory.GetMessageClass(descriptor)()
        try:
            view.ParseFromString(message.SerializeToString())
        except (DecodeError, EncodeError, UnicodeDecodeError) as e:
            # same text as confluent-kafka: the bytes a reader of the registered schema could not read
            raise SerializationError(
                f"Could not read message {descriptor.full_name} through the registered schema: {e}"
            ) from e
    _validate(executor, descriptor, message, "", fail_fast, out, view)
    return out


def _validate(
    executor: ValidationRuleExecutor,
    descriptor: Any,
    message: Any,
    path: str,
    fail_fast: bool,
    out: list[ValidationRuleError],
    view: Any,
) -> None:
    if descriptor is None or not isinstance(message, Message):
        return
    for rule in _rules(descriptor, "confluent.message_meta"):
        evaluate_validation_rule(executor, rule, descriptor, message if view is None else view, path, out)
        if fail_fast and out:
            return
    runtime: Any = message.DESCRIPTOR  # typed Any: see the note on descriptors above
    for fd in runtime.fields:
        schema_fd = descriptor.fields_by_number.get(fd.number)
        if schema_fd is None or (fd.has_presence and not message.HasField(fd.name)):
            continue
        value = getattr(message, fd.name)
        child_path = f"{path}.{schema_fd.name}" if path else schema_fd.name
        view_value = None if view is None else getattr(view, schema_fd.name)
        for rule in _rules(schema_fd, "confluent.field_meta"):
            evaluate_validation_rule(
                executor, rule, schema_fd, value if view_value is None else view_value, child_path, out
            )
            if fail_fast and out:
                return
        if fd.type != _F.TYPE_MESSAGE or schema_fd.type != _F.TYPE_MESSAGE:
            continue
        if is_map_field(fd):
            value_fd = fd.message_type.fields_by_name["value"]
            schema_value_fd = schema_fd.message_type.fields_by_name["value"]
            if value_fd.type != _F.TYPE_MESSAGE or schema_value_fd.type != _F.TYPE_MESSAGE:
                continue
            children: Any = (
                (
                    f'{child_path}["{key}"]',
                    schema_value_fd.message_type,
                    item,
                    _at(view_value, key, key in (view_value or ())),
                )
                for key, item in value.items()
            )
        elif _is_repeated(fd):
            children = (
                (f"{child_path}[{i}]", schema_fd.message_type, item, _at(view_value, i, i < len(view_value or ())))
                for i, item in enumerate(value)
            )
        else:
            children = ((child_path, schema_fd.message_type, value, view_value),)
        for item_path, item_descriptor, item, item_view in children:
            _validate(executor, item_descriptor, item, item_path, fail_fast, out, item_view)
            if fail_fast and out:
                return


def _at(container: Any, key: Any, present: bool) -> Any:
    return container[key] if container is not None and present else None
