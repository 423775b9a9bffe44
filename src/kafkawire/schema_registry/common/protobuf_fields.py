"""The field walks of a Protobuf message: for field rules (CEL_FIELD, ENCRYPT), and for the
schema's inline validation rules (``validate_message``, the ``rules`` of ``confluent.message_meta``
and ``field_meta``).

Both walk the message's own fields, each paired by number with the registered schema's field (a
compatible rename changes the name, never the number), which gives the name and tags a rule knows;
a field with presence that is unset is skipped. A rule sees a repeated field's elements and a map's
values one by one, typed as the field; a Decimal or Timestamp is one value (BYTES, LONG), as the
same field is in Avro. What the transform gives is written back on the message, changed in place.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterator
from typing import Any, NamedTuple

from google.protobuf import __version__ as _protobuf_version
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, EncodeError, Message

from ...serialization import SerializationError
from ..confluent.type.decimal_utils import to_proto_decimal
from .rules import FieldTransform, FieldType, RuleContext, apply_field, check_field_condition
from .schema_registry_client import RuleKind
from .serde import RuleError
from .validation_rules import ValidationRule, ValidationRuleError, ValidationRuleExecutor, evaluate_validation_rule

__all__ = [
    "DECIMAL_TYPE_NAME",
    "TIMESTAMP_TYPE_NAME",
    "get_inline_tags",
    "get_type",
    "is_cel_leaf_message",
    "is_map_field",
    "rebuild_value_type",
    "set_decimal_message",
    "set_timestamp_message",
    "transform",
    "validate_message",
]

# The message types a field rule sees as one value, and the type it is told they are.
DECIMAL_TYPE_NAME = "confluent.type.Decimal"
TIMESTAMP_TYPE_NAME = "google.protobuf.Timestamp"
_LEAF_TYPES = {DECIMAL_TYPE_NAME: FieldType.BYTES, TIMESTAMP_TYPE_NAME: FieldType.LONG}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

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


# The protobuf runtime's major version (confluent-kafka exports it; this module asks the descriptor
# for the API it has instead).
PROTOBUF_MAJOR_VERSION = int(_protobuf_version.split(".")[0])


def _is_repeated(fd: Any) -> bool:
    repeated = getattr(fd, "is_repeated", None)  # protobuf >= 6; older: the label
    return bool(repeated) if repeated is not None else fd.label == _F.LABEL_REPEATED


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


def is_cel_leaf_message(desc: Any) -> bool:
    """Whether messages of ``desc`` are one value to a field rule (a decimal, an instant), as
    Avro's logical types are, rather than records whose parts it would visit."""
    return desc is not None and desc.full_name in _LEAF_TYPES


def get_type(fd: Any) -> FieldType:
    """The type a field rule is told for ``fd``: a repeated field's is its element's, a map's MAP,
    a Decimal's BYTES and a Timestamp's LONG (what the same field in Avro is)."""
    if fd.type == _F.TYPE_MESSAGE:
        if is_map_field(fd):
            return FieldType.MAP
        return _LEAF_TYPES.get(fd.message_type.full_name, FieldType.RECORD)
    return _SCALARS.get(fd.type, FieldType.NULL)


def transform(ctx: RuleContext, descriptor: Any, message: Any, field_transform: FieldTransform) -> Any:
    """``message`` after ``field_transform`` of each field the rule selects, walking the message's
    own fields paired by number with ``descriptor``'s (the registered schema's), which give the
    names and tags; a list or dict is walked item by item. Messages are changed in place."""
    if message is None or descriptor is None:
        return message
    if isinstance(message, list):
        return [transform(ctx, descriptor, item, field_transform) for item in message]
    if isinstance(message, dict):
        return {key: transform(ctx, descriptor, item, field_transform) for key, item in message.items()}
    if isinstance(message, Message) and message.DESCRIPTOR.full_name not in _LEAF_TYPES:
        for pair in _present_pairs(descriptor, message):
            _transform_pair(ctx, pair, message, field_transform)
        return message
    return apply_field(ctx, field_transform, message)


class _Pair(NamedTuple):
    """A field of the message's type (``fd``) and the schema's field of its number, with what the
    walks need of them, worked out once per pair of message types."""

    fd: Any
    schema_fd: Any
    field_type: FieldType
    tags: frozenset[str]
    shape: int  # _SINGLE, _REPEATED or _MAP
    leaf: bool  # a Decimal or Timestamp, rebuilt from what the rule gave
    child: Any  # the descriptor the value is walked with (see _child_descriptor)


_SINGLE, _REPEATED, _MAP = 0, 1, 2
# (schema's message type, the message's own) -> their paired fields; bounded by the types a process
# serializes, as the schemas parsed for them are.
_PAIRS: dict[tuple[Any, Any], list[_Pair]] = {}


def _pairs(descriptor: Any, runtime: Any) -> list[_Pair]:
    found = _PAIRS.get((descriptor, runtime))
    if found is None:
        found = []
        for fd in runtime.fields:
            schema_fd = descriptor.fields_by_number.get(fd.number)
            if schema_fd is not None:
                found.append(_pair(fd, schema_fd, descriptor))
        _PAIRS[(descriptor, runtime)] = found
    return found


def _pair(fd: Any, schema_fd: Any, descriptor: Any) -> _Pair:
    shape = _MAP if is_map_field(fd) else _REPEATED if _is_repeated(fd) else _SINGLE
    leaf = fd.type == _F.TYPE_MESSAGE and fd.message_type.full_name in _LEAF_TYPES
    tags = frozenset(get_inline_tags(schema_fd))
    return _Pair(fd, schema_fd, get_type(fd), tags, shape, leaf, _child_descriptor(schema_fd, descriptor))


def _present(pair: _Pair, message: Message) -> bool:
    """Whether the field is set on ``message`` (a field without presence always is)."""
    return not pair.fd.has_presence or message.HasField(pair.fd.name)


def _present_pairs(descriptor: Any, message: Message) -> Iterator[_Pair]:
    """The pairs of the fields set on ``message``; fields the schema does not declare are left out."""
    for pair in _pairs(descriptor, message.DESCRIPTOR):
        if _present(pair, message):
            yield pair


def _transform_field(
    ctx: RuleContext, fd: Any, schema_fd: Any, desc: Any, message: Message, field_transform: FieldTransform
) -> None:
    """The walk's step into one field of ``message`` (``fd``, ``schema_fd`` the schema's field of
    its number, of ``desc``), by confluent-kafka's name and signature: an unset one is skipped."""
    pair = _pair(fd, schema_fd, desc)
    if _present(pair, message):
        _transform_pair(ctx, pair, message, field_transform)


def _transform_pair(ctx: RuleContext, pair: _Pair, message: Message, ft: FieldTransform) -> None:
    fd, schema_fd = pair.fd, pair.schema_fd
    held = getattr(message, fd.name)
    if pair.shape is not _SINGLE and not held:
        return  # an empty collection: nothing for the rule to see, nothing to write back
    ctx.enter_field(message, schema_fd.full_name, schema_fd.name, pair.field_type, pair.tags, fd)
    try:
        value = held if pair.shape is _SINGLE else dict(held) if pair.shape is _MAP else list(held)
        result = transform(ctx, pair.child, value, ft)
        if ctx.rule.kind is RuleKind.CONDITION:
            check_field_condition(ctx, result)
            return
        if pair.leaf:
            if pair.shape is _REPEATED:
                result = [rebuild_value_type(ctx, fd, item) for item in result]
            else:
                result = rebuild_value_type(ctx, fd, result)
        if not _same(result, value):
            _set_field(fd, message, result)
    finally:
        ctx.exit_field()


def _same(result: Any, value: Any) -> bool:
    """Whether the walk gave back the very values it read (messages changed in place included):
    then there is nothing to write."""
    if isinstance(result, list):
        return len(result) == len(value) and all(a is b for a, b in zip(result, value, strict=True))
    if isinstance(result, dict):
        return result.keys() == value.keys() and all(result[k] is value[k] for k in result)
    return result is value


def _child_descriptor(schema_fd: Any, descriptor: Any) -> Any:
    """What a field's value is walked with: its message type (a map's value type), else the
    containing message's, on which a leaf is handed to the transform."""
    if schema_fd.type != _F.TYPE_MESSAGE:
        return descriptor
    if is_map_field(schema_fd):
        value_fd = schema_fd.message_type.fields_by_name["value"]
        return value_fd.message_type if value_fd.type == _F.TYPE_MESSAGE else descriptor
    return schema_fd.message_type


def _set_field(fd: Any, message: Message, value: Any) -> None:
    """Writes a field rule's result back: a list or dict replaces a collection's contents, a
    message is copied in (neither takes assignment), anything else is assigned."""
    if isinstance(value, list):
        message.ClearField(fd.name)
        getattr(message, fd.name).extend(value)
    elif isinstance(value, dict):
        held = getattr(message, fd.name)
        if is_map_field(fd) and fd.message_type.fields_by_name["value"].type == _F.TYPE_MESSAGE:
            for key, item in value.items():  # a map of messages takes no assignment: copied in
                held[key].CopyFrom(item)
        else:
            message.ClearField(fd.name)
            getattr(message, fd.name).update(value)
    elif isinstance(value, Message):
        getattr(message, fd.name).CopyFrom(value)
    else:
        setattr(message, fd.name, value)


# The widest coefficient a field's write-back (a rule's result, a Decimal given for a message
# field) encodes: confluent-kafka's limit, CPython's own str<->int one, so that both clients refuse
# the same values with the same words. (Serializing a whole message has no such limit.)
MAX_ENCODABLE_COEFFICIENT_DIGITS = 4300


def set_decimal_message(target: Any, value: decimal.Decimal) -> None:
    """Write ``value`` into the ``confluent.type.Decimal`` message ``target`` at its own scale and
    precision (its digit count), as Java's BigDecimal reports them."""
    _sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValueError(f"cannot write a non-finite decimal to {DECIMAL_TYPE_NAME}")
    if len(digits) > MAX_ENCODABLE_COEFFICIENT_DIGITS:
        raise ValueError(
            f"decimal coefficient has {len(digits)} digits, past the {MAX_ENCODABLE_COEFFICIENT_DIGITS} "
            f"this client can encode into {DECIMAL_TYPE_NAME}"
        )
    encoded = to_proto_decimal(value)
    target.value, target.precision, target.scale = encoded.value, encoded.precision, encoded.scale


def set_timestamp_message(target: Any, value: datetime.datetime) -> None:
    """Write ``value`` into the ``google.protobuf.Timestamp`` message ``target`` (naive: UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    since = value - _EPOCH
    target.seconds = since.days * 86400 + since.seconds
    target.nanos = since.microseconds * 1000


def rebuild_value_type(ctx: Any, fd: Any, value: Any) -> Any:
    """A Decimal or Timestamp field's new message from what a field rule gave: the message itself
    (or the one a CEL value was read from) as it is, a Decimal or datetime encoded; anything else
    is the rule's mistake, a RuleError naming the field."""
    desc = fd.message_type
    if value is None:
        raise _returned_error(fd, "null", "a decimal or timestamp")
    for held in (value, getattr(value, "msg", None)):
        if isinstance(held, Message) and held.DESCRIPTOR.full_name == desc.full_name:
            return held
    out = message_factory.GetMessageClass(desc)()
    if desc.full_name == DECIMAL_TYPE_NAME:
        if not isinstance(value, decimal.Decimal):
            raise _returned_error(fd, type(value).__name__, "a decimal")
        set_decimal_message(out, value)
    elif isinstance(value, datetime.datetime):
        set_timestamp_message(out, value)
    else:
        raise _returned_error(fd, type(value).__name__, "a timestamp")
    return out


def _returned_error(fd: Any, actual: str, expected: str) -> RuleError:
    # same text as confluent-kafka
    return RuleError(
        f"Rule returned {actual} for field '{fd.full_name}', which is a {fd.message_type.full_name}; "
        f"expected {expected}"
    )


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
    for pair in _present_pairs(descriptor, message):
        fd, schema_fd = pair.fd, pair.schema_fd
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
        if pair.shape is _MAP:
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
        elif pair.shape is _REPEATED:
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
