"""The data-contract rule engine's values: what an executor is handed and what it must implement.

A schema's rule set names rules by type ("CEL", "ENCRYPT", ...). A serde runs each applicable
rule with a ``RuleContext`` (the record's topic and field, the source/target schemas, the rule and
its neighbours, the field walk) and the executor registered for that type. A ``FieldRuleExecutor``
is applied field by field: the format's walker (Avro, JSON Schema, Protobuf) enters each field it
reaches, and the executor's ``FieldTransform`` sees the fields whose tags the rule names.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from enum import Enum
from typing import Any

from ...serialization import SerializationContext, SerializationError
from ..wildcard_matcher import wildcard_match
from .schema_registry_client import Metadata, Rule, RuleKind, RuleMode, Schema
from .serde import RuleConditionError, RuleError

__all__ = [
    "ErrorAction",
    "FieldContext",
    "FieldRuleExecutor",
    "FieldTransform",
    "FieldTransformer",
    "FieldType",
    "NoneAction",
    "RuleAction",
    "RuleBase",
    "RuleConditionError",
    "RuleContext",
    "RuleError",
    "RuleExecutor",
]


class FieldType(str, Enum):
    RECORD = "RECORD"
    ENUM = "ENUM"
    ARRAY = "ARRAY"
    MAP = "MAP"
    COMBINED = "COMBINED"
    FIXED = "FIXED"
    STRING = "STRING"
    BYTES = "BYTES"
    INT = "INT"
    LONG = "LONG"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    BOOLEAN = "BOOLEAN"
    NULL = "NULL"


_PRIMITIVE = frozenset(
    {
        FieldType.STRING,
        FieldType.BYTES,
        FieldType.INT,
        FieldType.LONG,
        FieldType.FLOAT,
        FieldType.DOUBLE,
        FieldType.BOOLEAN,
        FieldType.NULL,
    }
)


class FieldContext:
    """The field a walker is in: its record (``containing_message``), ``full_name``
    (``Record.field``), ``name``, type and tags (inline ``confluent:tags`` plus metadata tags).
    Names are the registered schema's; ``field_descriptor`` is the record's own handle on the
    field where the format has one (Protobuf's, whose name a compatible rename may have changed)."""

    __slots__ = ("containing_message", "field_descriptor", "field_type", "full_name", "name", "tags")

    def __init__(
        self,
        containing_message: Any,
        full_name: str,
        name: str,
        field_type: FieldType,
        tags: set[str],
        field_descriptor: Any = None,
    ) -> None:
        self.containing_message = containing_message
        self.full_name = full_name
        self.name = name
        self.field_type = field_type
        self.tags = tags
        self.field_descriptor = field_descriptor

    def is_primitive(self) -> bool:
        return self.field_type in _PRIMITIVE

    def type_name(self) -> str:
        return self.field_type.value


# (ctx, field transform, message) -> message: a format's walk of a message with one field transform.
FieldTransformer = Callable[["RuleContext", "FieldTransform", Any], Any]


class RuleContext:
    """One rule applied to one record: the serde hands it to the rule's executor and action."""

    def __init__(
        self,
        ser_ctx: SerializationContext | None,
        source: Schema | None,
        target: Schema | None,
        subject: str | None,
        rule_mode: RuleMode,
        rule: Rule,
        index: int,
        rules: list[Rule],
        inline_tags: dict[str, set[str]] | None,
        field_transformer: FieldTransformer | None,
        original_key: Any = None,
        original_value: Any = None,
    ) -> None:
        self.ser_ctx = ser_ctx
        self.source = source
        self.target = target
        self.subject = subject
        self.rule_mode = rule_mode
        self.rule = rule
        self.index = index
        self.rules = rules
        self.inline_tags = inline_tags
        self.field_transformer = field_transformer
        # The record as the serde got it (the object written, or the bytes read), for rule actions.
        self.original_key = original_key
        self.original_value = original_value
        self._path: list[FieldContext] = []  # the fields the walker is inside, innermost last

    def _schema_metadata(self) -> Metadata | None:
        return None if self.target is None else self.target.metadata

    def get_parameter(self, name: str) -> str | None:
        """The rule's parameter, else the target schema's metadata property of that name."""
        metadata = self._schema_metadata()
        sources = (
            self.rule.params.params if self.rule.params is not None else {},
            metadata.properties.properties if metadata is not None and metadata.properties is not None else {},
        )
        for found in sources:
            if name in found:
                return found[name]
        return None

    def _tags_inline(self, full_name: str) -> set[str]:
        """The field's ``confluent:tags`` as the format's parser collected them (none: empty)."""
        return (self.inline_tags or {}).get(full_name, set())

    def current_field(self) -> FieldContext | None:
        return self._path[-1] if self._path else None

    def enter_field(
        self,
        containing_message: Any,
        full_name: str,
        name: str,
        field_type: FieldType,
        tags: Iterable[str] | None,
        field_descriptor: Any = None,
    ) -> FieldContext:
        """Push the field the walker steps into; its tags are the declared ones (the walker's, or the
        parser's when the walker has none) joined with those the schema's metadata gives it."""
        declared = self._tags_inline(full_name) if tags is None else tags
        tags_all = self.get_tags(full_name).union(declared)
        field = FieldContext(containing_message, full_name, name, field_type, tags_all, field_descriptor)
        self._path.append(field)
        return field

    def get_tags(self, full_name: str) -> set[str]:
        """Tags the target schema's metadata gives the field (``tags``: path pattern -> tags)."""
        metadata = self._schema_metadata()
        if metadata is None or metadata.tags is None:
            return set()
        patterns = metadata.tags.tags
        return {tag for pattern, tags in patterns.items() if wildcard_match(full_name, pattern) for tag in tags}

    def exit_field(self) -> None:
        """Pop the innermost field; outside every field there is nothing to leave."""
        if self._path:
            del self._path[-1]


class RuleBase:
    """What executors and actions share: configured once per serde, named by ``type()``."""

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:
        """``client_conf``: the registry client's configuration; ``rule_conf``: the serde's."""

    def type(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the executor holds (clients, caches)."""


class RuleExecutor(RuleBase):
    """Runs a rule on a whole message. A CONDITION returns a truth value, a TRANSFORM the new message."""

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        raise NotImplementedError


class FieldTransform:
    """The per-field function a ``FieldRuleExecutor`` gives the format's walker."""

    def __init__(self, transform: Callable[[RuleContext, FieldContext, Any], Any]) -> None:
        self._transform = transform

    def __call__(self, ctx: RuleContext, field_ctx: FieldContext, field_value: Any) -> Any:
        return self._transform(ctx, field_ctx, field_value)

    transform = __call__


class FieldRuleExecutor(RuleExecutor):
    """Applies ``new_transform(ctx)`` to each field the rule's tags select."""

    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        raise NotImplementedError

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        # Of two rules of one type whose tags overlap, only the one nearest the data runs (the
        # last on write, the first on read), so a field is not encrypted twice.
        if ctx.rule_mode in (RuleMode.WRITE, RuleMode.UPGRADE):
            others: list[Rule] = ctx.rules[: ctx.index]
        elif ctx.rule_mode in (RuleMode.READ, RuleMode.DOWNGRADE):
            others = ctx.rules[ctx.index + 1 :]
        else:
            others = []
        for other in others:
            if other.type == ctx.rule.type and _overlap(other.tags, ctx.rule.tags):
                return message
        if ctx.field_transformer is None:
            raise RuleError(f"rule {ctx.rule.name!r}: the format gives no field walk")
        return ctx.field_transformer(ctx, self.new_transform(ctx), message)


def _overlap(a: list[str] | None, b: list[str] | None) -> bool:
    return not _disjoint(a or (), b or ())


def _disjoint(tags1: Iterable[str], tags2: Container[str]) -> bool:
    """No tag of ``tags1`` is in ``tags2`` (confluent-kafka's name, each format module gives it)."""
    return not any(tag in tags2 for tag in tags1)


def field_selected(ctx: RuleContext, field_ctx: FieldContext) -> bool:
    """A rule with no tags applies to every field; one with tags to fields sharing one."""
    tags = ctx.rule.tags
    return not tags or not field_ctx.tags.isdisjoint(tags)


def apply_field(ctx: RuleContext, field_transform: FieldTransform, value: Any) -> Any:
    """The walkers' leaf step: the transform's answer for a selected field, else the value."""
    field_ctx = ctx.current_field()
    if field_ctx is not None and field_selected(ctx, field_ctx):
        return field_transform(ctx, field_ctx, value)
    return value


def check_field_condition(ctx: RuleContext, result: Any) -> None:
    """A CONDITION field rule's answer: False for any field fails the record."""
    if ctx.rule.kind == RuleKind.CONDITION and result is False:
        raise RuleConditionError(ctx.rule)


class RuleAction(RuleBase):
    """What happens after a rule: ``ex`` is None on success, the failure otherwise."""

    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        raise NotImplementedError


class ErrorAction(RuleAction):
    """Fails the record: the serde raises a SerializationError caused by the rule's failure."""

    def type(self) -> str:
        return "ERROR"

    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        raise SerializationError(f"rule {ctx.rule.name!r} failed: {ex}") from ex


class NoneAction(RuleAction):
    """Ignores the outcome: the record goes on (untransformed when the rule failed)."""

    def type(self) -> str:
        return "NONE"

    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        return None
