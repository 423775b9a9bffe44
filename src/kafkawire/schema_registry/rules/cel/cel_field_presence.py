"""celpy's interpreter with the two things Confluent's CEL rules need of it: ``has()`` that reports
a protobuf field's presence (see cel_values: an unset field reads as its default everywhere else),
and functions named with a namespace (``variants.path(v, "$.a")``, ``decimals.add(a, b)``), which
cel-java and cel-go look up by their dotted name and celpy would call as a method of ``variants``.
"""

from __future__ import annotations

from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import Evaluator

from .cel_values import has_depth, inside_has

__all__ = ["InterpretedRunner", "in_has"]

# The macros celpy evaluates as methods itself: never looked up as a namespaced function.
_MACROS = frozenset({"map", "filter", "all", "exists", "exists_one", "reduce", "min"})


def in_has() -> bool:
    """Whether this thread is inside a ``has()``."""
    return has_depth() > 0


def _dotted(tree: Any) -> str | None:
    """``a.b.c`` when ``tree`` is nothing but names and dots (no call, index or literal), else None."""
    while isinstance(tree, lark.Tree) and tree.data in ("member", "primary") and len(tree.children) == 1:
        tree = tree.children[0]
    if not isinstance(tree, lark.Tree):
        return None
    if tree.data == "ident":
        name = tree.children[0]
        return str(name.value) if isinstance(name, lark.Token) and name.type == "IDENT" else None
    if tree.data == "member_dot" and isinstance(tree.children[1], lark.Token) and tree.children[1].type == "IDENT":
        left = _dotted(tree.children[0])
        return None if left is None else f"{left}.{tree.children[1].value}"
    return None


class _Evaluator(Evaluator):
    def macro_has_eval(self, exprlist: Any) -> celtypes.BoolType:
        with inside_has():
            return celtypes.BoolType(super().macro_has_eval(exprlist))

    def member_dot_arg(self, tree: Any) -> Any:
        """``ns.f(args)`` calls the function registered as ``"ns.f"`` when there is one (it wins over
        a variable named ``ns``); any other ``x.f(args)`` is celpy's method call."""
        if isinstance(tree, lark.Tree) and len(tree.children) >= 2:
            method = tree.children[1]
            if isinstance(method, lark.Token) and method.type == "IDENT" and method.value not in _MACROS:
                namespace = _dotted(tree.children[0])
                functions = getattr(self.activation, "functions", None)
                if namespace is not None and functions is not None and f"{namespace}.{method.value}" in functions:
                    args = list(self.visit(tree.children[2])) if len(tree.children) == 3 else []
                    return functions[f"{namespace}.{method.value}"](*args)
        return super().member_dot_arg(tree)


class InterpretedRunner(celpy.InterpretedRunner):
    """celpy's interpreter with presence-reporting ``has()`` and namespaced functions."""

    def evaluate(self, context: Any) -> Any:
        return _Evaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)
