"""The field walk of a Protobuf message for field rules (CEL_FIELD, ENCRYPT).

It follows the message's descriptor: each field set on the message (a oneof's chosen member only)
is entered with the tags of its ``(confluent.field_meta)`` option; nested messages, repeated
fields and maps are walked, and scalar leaves the rule selects are handed to the field transform
and written back on the message, which is changed in place.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pool
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from .rules import FieldTransform, FieldType, RuleContext, apply_field, check_field_condition
from .schema_registry_client import RuleKind

__all__ = ["get_inline_tags", "is_map_field", "transform_protobuf"]

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


def get_inline_tags(fd: Any) -> set[str]:
    """The tags of ``[(confluent.field_meta).tags = ...]`` on the field."""
    try:
        extension = descriptor_pool.Default().FindExtensionByName("confluent.field_meta")
    except KeyError:  # confluent/meta.proto was never loaded: no field can carry tags
        return set()
    options: Any = fd.GetOptions()
    if not options.HasExtension(extension):
        return set()
    return set(options.Extensions[extension].tags)


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
