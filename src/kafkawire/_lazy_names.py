"""Package faces that import a name's module only when the name is first used (PEP 562).

A program that makes a Producer should not pay for the admin client, the consumers, the asyncio
faces and the serdes at start-up (librdkafka's handle is one shared library; our parts are hundreds
of modules). Each face declares where its names live; the first access imports that module and
keeps the value in the package's namespace, so later accesses are plain attribute reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, namespace: dict[str, Any], where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``where`` maps a module (relative to the
    package, as ``.producer.producer``) to the names it gives the package, separated by spaces."""
    home = {name: module for module, names in where.items() for name in names.split()}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home})

    return __getattr__, __dir__
