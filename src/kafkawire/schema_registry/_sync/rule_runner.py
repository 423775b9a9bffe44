"""Runs a schema's data-contract rules for one serde: which rules apply, in which order, and what
happens after each (its onSuccess / onFailure action).

A rule set has three phases: MIGRATION rules convert a record between schema versions on read
(UPGRADE to a newer reader, DOWNGRADE to an older one), DOMAIN rules see the record as an object
(CEL conditions, field encryption), ENCODING rules see the serialized bytes (payload encryption).
On write the rules run in the order declared, on read in reverse, so a read undoes a write.
Client-side ``RuleOverride``s may disable a rule type or change its actions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ...serialization import MessageField, SerializationContext, SerializationError
from ..common.rules import ErrorAction, FieldTransformer, NoneAction, RuleAction, RuleContext
from ..common.schema_registry_client import RegisteredSchema, Rule, RuleKind, RuleMode, RulePhase, RuleSet, Schema
from ..common.serde import DLQ_RULE_NAME_HEADER, RuleConditionError, RuleError, get_original_key
from ..rule_registry import RuleRegistry

__all__ = ["Migration", "RuleRunner"]

# The rule modes a rule declared with ``mode`` runs in.
_RUNS_IN: dict[RuleMode, frozenset[RuleMode]] = {
    RuleMode.WRITEREAD: frozenset({RuleMode.WRITE, RuleMode.READ}),
    RuleMode.UPDOWN: frozenset({RuleMode.UPGRADE, RuleMode.DOWNGRADE}),
}
# "A,B" actions of a two-way rule: A on write / upgrade, B on read / downgrade.
_FIRST_OF_PAIR = frozenset({RuleMode.WRITE, RuleMode.UPGRADE})
_BUILT_IN_ACTIONS: dict[str, RuleAction] = {"ERROR": ErrorAction(), "NONE": NoneAction()}

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Migration:
    """One step between two registered versions, run with the later version's (upgrade) or the
    earlier version's (downgrade) migration rules."""

    rule_mode: RuleMode
    source: RegisteredSchema
    target: RegisteredSchema


def _runs_in(rule: Rule, mode: RuleMode) -> bool:
    declared = rule.mode
    if declared is None:
        return False
    return mode in _RUNS_IN.get(declared, frozenset({declared}))


class RuleRunner:
    """The rules of one serde. Every executor and action in its registry is configured at
    construction with the registry client's configuration and the serde's ``rule_conf``."""

    def __init__(self, client: Any, rule_conf: dict[str, Any] | None, rule_registry: RuleRegistry | None) -> None:
        self._registry = rule_registry if rule_registry is not None else RuleRegistry.get_global_instance()
        client_conf = client.config() if client is not None else {}
        for member in (*self._registry.get_executors(), *self._registry.get_actions()):
            member.configure(client_conf, dict(rule_conf or {}))

    def close(self) -> None:
        """Close a registry given to this serde (the process-wide one serves every serde and stays
        open): actions first, each apart, so a failing executor cannot keep a DLQ action from
        flushing."""
        if self._registry is RuleRegistry.get_global_instance():
            return
        for member in (*self._registry.get_actions(), *self._registry.get_executors()):
            try:
                member.close()
            except Exception as exc:
                log.warning("Closing the rule registry member %s failed: %s", type(member).__name__, exc)

    # --- overrides -------------------------------------------------------------------------------

    def _disabled(self, rule: Rule) -> bool:
        override = self._registry.get_override(rule.type or "")
        if override is not None and override.disabled is not None:
            return override.disabled
        return bool(rule.disabled)

    def _action_name(self, rule: Rule, mode: RuleMode, success: bool) -> str | None:
        override = self._registry.get_override(rule.type or "")
        name = rule.on_success if success else rule.on_failure
        if override is not None:
            name = (override.on_success if success else override.on_failure) or name
        if name and rule.mode in _RUNS_IN and "," in name:
            first, _, second = name.partition(",")
            name = first if mode in _FIRST_OF_PAIR else second
        return name.strip() if name else None

    # --- running ---------------------------------------------------------------------------------

    def has_rules(self, rule_set: RuleSet | None, phase: RulePhase, mode: RuleMode) -> bool:
        """Whether any enabled rule of ``phase`` would run in ``mode``."""
        if rule_set is None:
            return False
        rules = _phase_rules(rule_set, phase)
        return any(_runs_in(rule, mode) and not self._disabled(rule) for rule in rules)

    def run(
        self,
        ser_ctx: SerializationContext | None,
        subject: str | None,
        phase: RulePhase,
        mode: RuleMode,
        source: Schema | None,
        target: Schema | None,
        message: Any,
        inline_tags: dict[str, set[str]] | None,
        field_transformer: FieldTransformer | None,
        original: Any = None,
    ) -> Any:
        """The message after each applicable rule; a failing rule's action decides whether the
        record fails (ERROR, the default), goes on unchanged (NONE) or to a dead letter queue (DLQ).
        ``original`` is the record as the serde got it (``message`` when not given), for the
        actions; a rule named by the record's ``__rule.name`` header (a DLQ record read or written
        back) is skipped."""
        if message is None:
            return None
        if mode is RuleMode.UPGRADE:
            rules = _phase_rules(target.rule_set, phase) if target is not None else []
        elif mode is RuleMode.DOWNGRADE:
            rules = list(reversed(_phase_rules(source.rule_set, phase))) if source is not None else []
        else:
            rules = _phase_rules(target.rule_set, phase) if target is not None else []
            if mode is RuleMode.READ:
                rules = list(reversed(rules))
        original = message if original is None else original
        is_key = ser_ctx is not None and ser_ctx.field == MessageField.KEY
        original_key, original_value = (original, None) if is_key else (get_original_key(), original)
        replayed = _replayed_rule(ser_ctx)
        for index, rule in enumerate(rules):
            if self._disabled(rule) or not _runs_in(rule, mode) or (replayed is not None and rule.name == replayed):
                continue
            ctx = RuleContext(
                ser_ctx,
                source,
                target,
                subject,
                mode,
                rule,
                index,
                rules,
                inline_tags,
                field_transformer,
                original_key,
                original_value,
            )
            executor = self._registry.get_executor((rule.type or "").upper())
            if executor is None:
                self._act(ctx, message, False, RuleError(f"no rule executor of type {rule.type!r} is registered"))
                return message
            try:
                result = executor.transform(ctx, message)
                if rule.kind is RuleKind.CONDITION:
                    if not result:
                        raise RuleConditionError(rule)
                elif rule.kind is RuleKind.TRANSFORM:
                    message = result
            except SerializationError:
                raise
            except Exception as e:  # the rule's failure goes to its onFailure action
                self._act(ctx, message, False, e)
                continue
            self._act(
                ctx, message, message is not None, None if message is not None else RuleError("rule gave no value")
            )
        return message

    def _act(self, ctx: RuleContext, message: Any, success: bool, ex: Exception | None) -> None:
        name = self._action_name(ctx.rule, ctx.rule_mode, success) or ("NONE" if success else "ERROR")
        action = _BUILT_IN_ACTIONS.get(name.upper()) or self._registry.get_action(name)
        if action is None:
            raise SerializationError(f"no rule action of type {name!r} is registered") from ex
        action.run(ctx, message, ex)

    # --- migrations ------------------------------------------------------------------------------

    def migrations(self, client: Any, subject: str, writer: Schema, reader: RegisteredSchema) -> list[Migration]:
        """The steps from the writer's version to the reader's that carry migration rules."""
        source = client.lookup_schema(subject, writer, normalize_schemas=False, deleted=True)
        if source.version is None or reader.version is None or source.version == reader.version:
            return []
        mode = RuleMode.UPGRADE if source.version < reader.version else RuleMode.DOWNGRADE
        first, last = (source, reader) if mode is RuleMode.UPGRADE else (reader, source)
        assert first.version is not None and last.version is not None
        versions = [first]
        versions += [client.get_version(subject, v, deleted=True) for v in range(first.version + 1, last.version)]
        versions.append(last)
        steps = []
        for previous, version in pairwise(versions):
            if self.has_rules(version.schema.rule_set, RulePhase.MIGRATION, mode):
                steps.append(
                    Migration(mode, previous, version)
                    if mode is RuleMode.UPGRADE
                    else Migration(mode, version, previous)
                )
        if mode is RuleMode.DOWNGRADE:
            steps.reverse()
        return steps

    def migrate(self, ser_ctx: SerializationContext | None, subject: str, steps: list[Migration], message: Any) -> Any:
        for step in steps:
            message = self.run(
                ser_ctx,
                subject,
                RulePhase.MIGRATION,
                step.rule_mode,
                step.source.schema,
                step.target.schema,
                message,
                None,
                None,
            )
        return message


def _replayed_rule(ser_ctx: SerializationContext | None) -> str | None:
    """The rule a dead-letter-queue record failed (its last ``__rule.name`` header), or None."""
    headers = ser_ctx.headers if ser_ctx is not None else None
    if not headers:
        return None
    pairs = headers.items() if isinstance(headers, dict) else headers
    found: Any = None
    for key, value in pairs:
        if key == DLQ_RULE_NAME_HEADER:
            found = value
    if isinstance(found, (bytes, bytearray)):
        try:
            return found.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return found if isinstance(found, str) else None


def _phase_rules(rule_set: RuleSet | None, phase: RulePhase) -> list[Rule]:
    if rule_set is None:
        return []
    if phase is RulePhase.MIGRATION:
        return list(rule_set.migration_rules or [])
    if phase is RulePhase.DOMAIN:
        return list(rule_set.domain_rules or [])
    return list(rule_set.encoding_rules or [])
