"""Inline validation rules: CHECK constraints a schema carries itself (``confluent:rules`` on an Avro
record or field, a JSON Schema object or property; ``confluent.message_meta``/``field_meta`` rules in
Protobuf), run by a serializer before it writes.

A serializer with ``validation.rules.execution`` other than DISABLED walks each record against its
writer schema (the format's ``validate_message``), evaluating every rule it meets with the configured
executor (CEL by default), and refuses the record with one SerializationError listing every
violation (only the first with ``validation.rules.fail.fast``). With domain rules to run,
BEFORE_DOMAIN_RULES and AFTER_DOMAIN_RULES choose which side of them the record is checked on.
The serializers' options and the default executor are in ``validation_options``.
"""

from __future__ import annotations

import abc
from enum import Enum
from typing import Any

from ...serialization import SerializationError
from .serde import RuleError

__all__ = [
    "VALIDATION_RULES_PROP",
    "ValidationRule",
    "ValidationRuleError",
    "ValidationRuleExecutor",
    "ValidationRulesExecution",
    "evaluate_validation_rule",
    "parse_validation_rules",
]

# The Avro property and JSON Schema keyword holding a schema's inline rules.
VALIDATION_RULES_PROP = "confluent:rules"


class ValidationRulesExecution(str, Enum):
    """``validation.rules.execution``: whether inline rules run, and on which side of domain rules."""

    DISABLED = "DISABLED"
    BEFORE_DOMAIN_RULES = "BEFORE_DOMAIN_RULES"
    AFTER_DOMAIN_RULES = "AFTER_DOMAIN_RULES"


class ValidationRule:
    """One inline CHECK constraint, on a record (message, object) or on one of its fields."""

    __slots__ = ("doc", "expr", "name", "sql")

    def __init__(
        self, name: str | None = None, doc: str | None = None, expr: str | None = None, sql: str | None = None
    ) -> None:
        self.name = name
        self.doc = doc
        self.expr = expr
        self.sql = sql

    def _key(self) -> tuple[str | None, ...]:
        return (self.name, self.doc, self.expr, self.sql)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ValidationRule):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ValidationRule{{name={self.name}, doc={self.doc}, expr={self.expr}, sql={self.sql}}}"


class ValidationRuleError:
    """One violation: the rule, where in the record (``None``/empty: the root), the rule's own
    failure text when it returned one, and the error when it could not be evaluated."""

    __slots__ = ("cause", "field_path", "message", "rule")

    def __init__(
        self,
        rule: ValidationRule,
        field_path: str | None = None,
        message: str | None = None,
        cause: Exception | None = None,
    ) -> None:
        self.rule = rule
        self.field_path = field_path
        self.message = message
        self.cause = cause

    def __eq__(self, other: object) -> bool:
        # the cause is left out: two failures of one rule at one place are the same violation
        if not isinstance(other, ValidationRuleError):
            return NotImplemented
        return (self.rule, self.field_path, self.message) == (other.rule, other.field_path, other.message)

    def __hash__(self) -> int:
        return hash((self.rule, self.field_path, self.message))

    def __str__(self) -> str:
        rule = self.rule
        name = rule.name if rule is not None and rule.name else "unnamed"
        detail: Any = self.message
        if not detail and rule is not None:
            detail = rule.doc or rule.sql or rule.expr
        text = f"{self.field_path or '<root>'}: {name}: {detail}"
        return text if self.cause is None else f"{text} (caused by: {self.cause})"

    def __repr__(self) -> str:
        return f"ValidationRuleError({self})"


class ValidationRuleExecutor(metaclass=abc.ABCMeta):
    """Evaluates one rule on one value: False or a non-empty string (the failure's text) is a
    violation; True or an empty string a pass; RuleError a rule that could not be evaluated."""

    @abc.abstractmethod
    def execute(self, rule: ValidationRule, schema: Any, message: Any) -> Any:
        raise NotImplementedError()


def parse_validation_rules(prop_value: Any) -> list[ValidationRule]:
    """The rules of a ``confluent:rules`` value (a list of {name, doc, expr, sql}); anything else
    in it is not a rule and is passed over."""
    if not isinstance(prop_value, list):
        return []
    return [
        ValidationRule(e.get("name"), e.get("doc"), e.get("expr"), e.get("sql"))
        for e in prop_value
        if isinstance(e, dict)
    ]


def evaluate_validation_rule(
    executor: ValidationRuleExecutor,
    rule: ValidationRule,
    schema: Any,
    value: Any,
    path: str,
    out: list[ValidationRuleError],
) -> None:
    """Runs one rule, adding its violation to ``out``. A rule that cannot be evaluated is a
    violation too (the walk goes on); an executor answering neither bool nor str is a bug in it."""
    try:
        result = executor.execute(rule, schema, value)
    except RuleError as e:
        out.append(ValidationRuleError(rule, path, None, e))
        return
    if isinstance(result, bool):
        if not result:
            out.append(ValidationRuleError(rule, path))
    elif isinstance(result, str):
        if result:
            out.append(ValidationRuleError(rule, path, result))
    else:
        name = rule.name or "unnamed"
        raise SerializationError(f"Validation rule '{name}' resolved to an unexpected type: {type(result).__name__}")
