"""The JSONATA rule executor: a JSONata expression that rewrites the record, chiefly to migrate it
between schema versions (UPGRADE and DOWNGRADE rules).

Values JSON has no type for (an Avro record's bytes, Decimals, datetimes, UUIDs) pass through the
expression as they are, so a migration that moves or renames fields keeps them exactly. An
evaluation is bounded in time and in the size of what it builds, as JSONata, unlike CEL, can loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import jsonata  # type: ignore[import-untyped]

from ...common.rules import RuleContext, RuleExecutor
from ...common.serde import RuleError
from ...rule_registry import RuleRegistry
from ..expression_cache import ExpressionCache

__all__ = ["JsonataExecutor"]

_TIME_LIMIT_S = 10.0
_SIZE_FLOOR = 1_000_000  # elements or characters any one value built may have, whatever the input
_SHOWN = 200


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


class _Compiled:
    """A parsed expression and the lock that serializes its use: a ``jsonata.Jsonata`` keeps
    per-evaluation state on itself (its current frame and input)."""

    __slots__ = ("expr", "frame", "lock")

    def __init__(self, expr: jsonata.Jsonata) -> None:
        self.expr = expr
        self.frame = expr.environment  # the frame it was built with, restored after each use
        self.lock = threading.Lock()


class _Budget:
    """The limits of one evaluation, checked as each step of it starts and ends."""

    __slots__ = ("deadline", "max_size")

    def __init__(self, max_size: int) -> None:
        self.deadline = time.monotonic() + _TIME_LIMIT_S
        self.max_size = max_size

    def on_entry(self, expr: Any, data: Any, env: Any) -> None:
        if time.monotonic() > self.deadline:
            raise RuleError(f"JSONata expression ran past {_TIME_LIMIT_S:g} s")

    def on_exit(self, expr: Any, data: Any, env: Any, result: Any) -> None:
        if isinstance(result, (str, list)) and len(result) > self.max_size:
            raise RuleError(f"JSONata expression built a value of {len(result)} elements")
        self.on_entry(expr, data, env)


class JsonataExecutor(RuleExecutor):
    """Runs ``JSONATA`` rules: the record (a dict or list) rewritten by ``rule.expr``."""

    def __init__(self) -> None:
        self._cache: ExpressionCache[_Compiled] = ExpressionCache(_compile)

    def type(self) -> str:
        return "JSONATA"

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        expr = ctx.rule.expr
        if not expr:
            raise RuleError(f"JSONATA rule {ctx.rule.name!r} has no expression")
        compiled = self._cache.get(expr)
        budget = _Budget(_SIZE_FLOOR + 4 * _size(message))
        with compiled.lock:
            # The library reads the running expression from a thread-local it sets only when one
            # is built; a cached one may run on another thread, or after another was built.
            jsonata.Jsonata.CURRENT.jsonata = compiled.expr
            try:
                result = compiled.expr.evaluate(
                    message, {"__evaluate_entry": budget.on_entry, "__evaluate_exit": budget.on_exit}
                )
            except RuleError:
                raise
            except Exception as e:  # the expression's own errors, and a Python error from inside it
                raise RuleError(f"JSONata expression {_short(expr)!r} failed: {_short(str(e))}") from e
            finally:
                compiled.expr.environment = compiled.frame  # drop the frames (and record) it ran with
                compiled.expr.input = None
        return _plain(result)

    def close(self) -> None:
        self._cache.clear()

    @classmethod
    def register(cls) -> JsonataExecutor:
        executor = cls()
        RuleRegistry.register_rule_executor(executor)
        return executor


def _compile(expr: str) -> _Compiled:
    try:
        parsed = jsonata.Jsonata(expr)
    except Exception as e:
        raise RuleError(f"JSONata expression {_short(expr)!r} does not parse: {_short(str(e))}") from e
    parsed.set_validate_input(False)  # let non-JSON values through (see the module doc)
    return _Compiled(parsed)


def _size(value: Any) -> int:
    """The record's elements and string characters: what the output may reasonably grow to."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        total += 1
        if isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, (str, bytes)):
            total += len(item)
    return total


def _plain(value: Any) -> Any:
    """The result in plain dicts and lists (JSONata hands back its own sequence type)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
