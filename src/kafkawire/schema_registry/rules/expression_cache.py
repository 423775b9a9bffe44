"""The compiled-expression cache the CEL and JSONata executors share the shape of.

Compiling is the costly step of a rule and a schema has few distinct expressions, so each is
compiled once. A parsed expression takes far more memory than its text, so the cache is bounded
by its entries' total length as well as their number, and one expression by its length (the
100,000 characters cel-go and cel-java also refuse past).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from ..common.serde import RuleError

__all__ = ["MAX_EXPRESSION_CHARS", "ExpressionCache"]

MAX_EXPRESSION_CHARS = 100_000

_T = TypeVar("_T")


class ExpressionCache(Generic[_T]):
    """Least-recently-used compiled expressions, by their text."""

    def __init__(self, compile_expr: Callable[[str], _T], max_entries: int = 1000, max_chars: int = 1_000_000) -> None:
        self._compile = compile_expr
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._entries: OrderedDict[str, _T] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, expr: str) -> _T:
        """The compiled ``expr``; raises RuleError for one past the length limit, and lets the
        compiler's own error through."""
        if len(expr) > MAX_EXPRESSION_CHARS:
            raise RuleError(f"an expression of {len(expr)} characters is past the limit of {MAX_EXPRESSION_CHARS}")
        with self._lock:
            compiled = self._entries.get(expr)
            if compiled is not None:
                self._entries.move_to_end(expr)
                return compiled
            compiled = self._compile(expr)
            self._entries[expr] = compiled
            self._chars += len(expr)
            while len(self._entries) > 1 and (len(self._entries) > self._max_entries or self._chars > self._max_chars):
                evicted, _ = self._entries.popitem(last=False)
                self._chars -= len(evicted)
            return compiled

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._chars = 0
