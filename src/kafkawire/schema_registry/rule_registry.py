"""Where data-contract rule executors, actions and overrides are registered by type name.

Serdes look rules' types up here (their own registry, or the process-wide one).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from .common.rules import RuleAction, RuleExecutor

__all__ = ["RuleAction", "RuleExecutor", "RuleOverride", "RuleRegistry"]


@dataclass(frozen=True)
class RuleOverride:
    """Client-side overrides of a rule type's on_success/on_failure actions and disabled flag."""

    type: str
    on_success: str | None = None
    on_failure: str | None = None
    disabled: bool | None = None


class RuleRegistry:
    """Executors, actions and overrides by their type name (``executor.type()``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kinds: dict[str, dict[str, Any]] = {"executor": {}, "action": {}, "override": {}}

    def _put(self, kind: str, name: str, value: Any) -> None:
        with self._lock:
            self._kinds[kind][name] = value

    def _get(self, kind: str, name: str) -> Any:
        with self._lock:
            return self._kinds[kind].get(name)

    def _all(self, kind: str) -> list[Any]:
        with self._lock:
            return list(self._kinds[kind].values())

    def register_executor(self, rule_executor: Any) -> None:
        self._put("executor", rule_executor.type(), rule_executor)

    def get_executor(self, name: str) -> Any:
        return self._get("executor", name)

    def get_executors(self) -> list[Any]:
        return self._all("executor")

    def register_action(self, rule_action: Any) -> None:
        self._put("action", rule_action.type(), rule_action)

    def get_action(self, name: str) -> Any:
        return self._get("action", name)

    def get_actions(self) -> list[Any]:
        return self._all("action")

    def register_override(self, rule_override: RuleOverride) -> None:
        self._put("override", rule_override.type, rule_override)

    def get_override(self, name: str) -> RuleOverride | None:
        override: RuleOverride | None = self._get("override", name)
        return override

    def get_overrides(self) -> list[RuleOverride]:
        return self._all("override")

    def clear(self) -> None:
        with self._lock:
            for registered in self._kinds.values():
                registered.clear()

    @staticmethod
    def get_global_instance() -> RuleRegistry:
        return _global_instance

    @staticmethod
    def register_rule_executor(rule_executor: Any) -> None:
        _global_instance.register_executor(rule_executor)

    @staticmethod
    def register_rule_action(rule_action: Any) -> None:
        _global_instance.register_action(rule_action)

    @staticmethod
    def register_rule_override(rule_override: RuleOverride) -> None:
        _global_instance.register_override(rule_override)


_global_instance = RuleRegistry()
