"""Both halves of the alias check, each in its own child process (the real confluent_kafka and the
alias cannot share one):

``alias_probe.py confluent``: every module of the installed confluent_kafka with the names it gives
(``confluent_names``) on stdout, as {module: {name: [kind, value]}} (a module that does not import
there, for want of an optional library, is listed with no names).

``alias_probe.py alias``: reads that from stdin, installs kafkawire as ``confluent_kafka``, imports
each module and looks up each name. stdout: {"unimportable": {module: error}, "missing": {module:
[names]}, "foreign": {module: [names]}}: foreign when the alias gives something that is not
kafkawire's (or a constant of another value).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import types
import typing
from typing import Any

KINDS = ("module", "object", "constant", "value")


def confluent_names(module: types.ModuleType) -> dict[str, tuple[str, Any]]:
    """The names ``module`` (a real confluent_kafka module) gives a program, each with its kind:
    a submodule, a class or function of confluent-kafka's, a constant (compared by value), or
    another value of confluent-kafka's (looked up only): those ``__all__`` declares and the public
    ones of its own beside them. Names from other libraries are left out unless ``__all__`` declares them."""
    declared = set(getattr(module, "__all__", ()))
    out: dict[str, tuple[str, Any]] = {}
    for name in sorted(declared | {n for n in vars(module) if not n.startswith("_")}):
        if not hasattr(module, name):
            continue
        kind = _kind(name, getattr(module, name))
        if kind is not None:
            out[name] = kind
        elif name in declared:
            out[name] = ("value", None)
    return out


def _kind(name: str, obj: Any) -> tuple[str, Any] | None:
    if isinstance(obj, types.ModuleType):
        return ("module", obj.__name__) if obj.__name__.startswith("confluent_kafka") else None
    if getattr(typing, name, None) is obj:  # TYPE_CHECKING and the like
        return None
    if isinstance(obj, type) or callable(obj):
        origin = getattr(obj, "__module__", None) or ""
        return ("object", None) if origin.startswith("confluent_kafka") or origin == "cimpl" else None
    if type(obj) in (int, str, float, bool) or obj is None:
        return ("constant", obj)
    if type(obj) in (bytes, dict, list, tuple, set, frozenset):
        return ("value", None)
    return None


def walk_confluent() -> dict[str, dict[str, tuple[str, Any]]]:
    import confluent_kafka

    found = [confluent_kafka.__name__]
    found += [m.name for m in pkgutil.walk_packages(confluent_kafka.__path__, "confluent_kafka.", onerror=found.append)]
    out: dict[str, dict[str, tuple[str, Any]]] = {}
    for name in found:
        try:
            out[name] = confluent_names(importlib.import_module(name))
        except ImportError:  # an optional library confluent-kafka's module needs (boto3, hvac, ...)
            out[name] = {}
    return out


def _kafkawires(obj: Any) -> bool:
    if isinstance(obj, types.ModuleType):  # kafkawire's, or a module the alias made of kafkawire's names
        spec = getattr(obj, "__spec__", None)
        return (
            obj.__name__.startswith("kafkawire")
            or type(getattr(spec, "loader", None)).__module__ == "kafkawire.app.alias"
        )
    return (getattr(obj, "__module__", None) or "").startswith("kafkawire")


def _imported(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def probe(expected: dict[str, dict[str, list[Any]]]) -> dict[str, dict[str, Any]]:
    import kafkawire

    kafkawire.install_as_confluent_kafka()
    report: dict[str, dict[str, Any]] = {"unimportable": {}, "missing": {}, "foreign": {}}
    for module_name, names in sorted(expected.items()):
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            report["unimportable"][module_name] = f"{type(exc).__name__}: {exc}"
            continue
        missing, foreign = [], []
        for name, (kind, value) in sorted(names.items()):
            obj = getattr(module, name, None)
            if obj is None and kind == "module":  # a submodule: there once imported
                obj = _imported(value)
            if obj is None and not hasattr(module, name):
                missing.append(name)
                continue
            kafkawires = _kafkawires(obj) if kind in ("module", "object") else kind != "constant" or obj == value
            if not kafkawires:
                foreign.append(name)
        if missing:
            report["missing"][module_name] = missing
        if foreign:
            report["foreign"][module_name] = foreign
    return report


if __name__ == "__main__":
    if sys.argv[1:] == ["confluent"]:
        json.dump(walk_confluent(), sys.stdout)
    else:
        json.dump(probe(json.load(sys.stdin)), sys.stdout)
