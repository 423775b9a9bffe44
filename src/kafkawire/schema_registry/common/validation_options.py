"""A serializer's ``validation.rules.*`` options and the default executor of inline validation rules
(CEL, imported when a serializer enables the rules: CEL is an optional extra)."""

from __future__ import annotations

from typing import Any

from ...serialization import SerializationError
from .validation_rules import ValidationRuleError, ValidationRuleExecutor, ValidationRulesExecution

__all__ = ["ValidationOptions", "default_validation_rule_executor", "raise_violations"]


def default_validation_rule_executor() -> ValidationRuleExecutor:
    """The CEL executor, imported when asked for: CEL is an optional extra."""
    try:
        from ..rules.cel.cel_validator import CelValidator
    except ImportError as e:
        # confluent-kafka's text, naming kafkawire's extra: what to install and the way around it
        raise ValueError(
            "The default validation rule executor requires the CEL dependencies; install "
            "them with `pip install kafkawire[rules]`, or set "
            "validation.rules.executor to a ValidationRuleExecutor instance."
        ) from e
    return CelValidator()


class ValidationOptions:
    """A serializer's ``validation.rules.*`` options, read at construction (the executor too, so a
    missing CEL install fails there, not at the first record)."""

    __slots__ = ("execution", "executor", "fail_fast")

    def __init__(self, conf: dict[str, Any]) -> None:
        execution = conf.pop("validation.rules.execution", ValidationRulesExecution.DISABLED)
        try:
            self.execution = ValidationRulesExecution(execution)
        except ValueError:
            raise ValueError(
                "validation.rules.execution must be one of " + ", ".join(m.value for m in ValidationRulesExecution)
            ) from None
        fail_fast = conf.pop("validation.rules.fail.fast", False)
        if not isinstance(fail_fast, bool):
            raise ValueError("validation.rules.fail.fast must be a boolean value")
        self.fail_fast = fail_fast
        executor = conf.pop("validation.rules.executor", None)
        if self.execution is not ValidationRulesExecution.DISABLED:
            if executor is None:
                executor = default_validation_rule_executor()
            if not isinstance(executor, ValidationRuleExecutor):
                raise ValueError("validation.rules.executor must be a ValidationRuleExecutor instance")
        self.executor: ValidationRuleExecutor | None = executor

    @property
    def enabled(self) -> bool:
        return self.execution is not ValidationRulesExecution.DISABLED

    def runs(self, phase: ValidationRulesExecution, domain_rules: bool) -> bool:
        """Whether to validate at ``phase`` (before or after the domain rules); with no domain
        rules to run the two are one point, where any enabled mode validates."""
        if not domain_rules:
            return phase is ValidationRulesExecution.BEFORE_DOMAIN_RULES and self.enabled
        return self.execution is phase


def raise_violations(violations: list[ValidationRuleError]) -> None:
    """One SerializationError naming every violation, in the order the walk met them."""
    if not violations:
        return
    count = len(violations)
    lines = [f"Validation rule failed ({count} violation{'' if count == 1 else 's'}):"]
    lines += [f"  - {v}" for v in violations]
    raise SerializationError("\n".join(lines))
