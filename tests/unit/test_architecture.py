"""The architecture's rules, checked from the source (ast, nothing imported): no import cycles (type-only
imports included), a sans-IO core that imports no IO or face, protocol/ and records/ at the bottom,
no client importing another, optional parts never imported by the client. No size rule: modules are
cut by concern (the C files, which no import shows, are held by test_native_layout.py).

`KNOWN_VIOLATIONS` lists what is still being fixed. It may only shrink: a new violation fails, and
so does an entry that no longer occurs (delete it when you fix it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "kafkawire"
# Dotted-name parts that mark an optional feature (extra dependencies, never needed to produce,
# consume or administer).
OPTIONAL_PARTS = frozenset({"spark", "pipeline", "schema_registry", "serialization", "avro", "testing"})
# Packages and modules that must work without the optional parts installed.
CLIENT_PARTS = ("protocol", "records", "core", "io", "client", "producer", "admin", "consumer")
CLIENT_MODULES = ("kafkawire", "kafkawire.model", "kafkawire.kafka_error", "kafkawire.config", "kafkawire.native")

# The core decides; clocks, threads and sockets belong to io/ (callers pass `now`).
IO_STDLIB = frozenset({"socket", "ssl", "selectors", "threading", "time", "asyncio"})
ABOVE_CORE = (
    "io", "client", "producer", "admin", "consumer", "aio", "spark", "pipeline", "cli", "demo", "local_broker",
    "security", "oidc", "serializing_producer", "deserializing_consumer", "testing",
)  # fmt: skip
ABOVE_IO = ("client", "producer", "admin", "consumer", "spark", "pipeline", "cli", "demo")
ABOVE_CLIENT = ("producer", "admin", "consumer", "aio", "spark", "pipeline", "cli", "demo")
# The clients: each stands on the shared layers below it, never on another client.
CLIENTS = ("producer", "consumer", "admin")
# What the two bottom layers may import, besides the standard library and third-party codecs.
BOTTOM_ALLOWED = {
    "protocol": ("protocol",),
    "records": ("protocol", "records", "native", "_native"),
}

KNOWN_VIOLATIONS: frozenset[str] = frozenset()


@dataclass
class Module:
    name: str
    imports: set[str] = field(default_factory=set)  # every import, wherever it is in the file
    runtime_imports: set[str] = field(default_factory=set)  # without `if TYPE_CHECKING:` ones


def load_modules(src: Path, package: str) -> dict[str, Module]:
    """Every module of ``package`` under ``src`` with the modules it imports (resolved names)."""
    paths: dict[str, tuple[Path, bool]] = {}
    for path in sorted((src / package).rglob("*.py*")):
        if path.suffix not in (".py", ".pyi"):
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        if path.suffix == ".pyi" and name in paths:
            continue  # a stub beside its module: the module is what runs
        paths[name] = (path, is_package)
    modules = {}
    for name, (path, is_package) in paths.items():
        text = path.read_text(encoding="utf-8")
        module = Module(name)
        if path.suffix == ".pyi":  # an extension module's stub: no imports of its own at run time
            modules[name] = module
            continue
        tree = ast.parse(text, str(path))
        typing_only = _type_checking_nodes(tree)
        here = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(tree):
            for target in _targets(node, here, paths):
                module.imports.add(target)
                if id(node) not in typing_only:
                    module.runtime_imports.add(target)
        modules[name] = module
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                out.update(id(n) for n in ast.walk(child))
    return out


def _targets(node: ast.AST, here: str, known: dict[str, tuple[Path, bool]]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = here.split(".")[: len(here.split(".")) - node.level + 1]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    # `from pkg import sub` imports the submodule; `from pkg import name` the package.
    return [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]


def _in(name: str, *parts: str) -> bool:
    """Is ``name`` the module ``kafkawire.<part>`` or inside the package of that name?"""
    return any(name == f"{PACKAGE}.{p}" or name.startswith(f"{PACKAGE}.{p}.") for p in parts)


def cycles(modules: dict[str, Module]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def edges(name: str) -> list[str]:
        # Every import, `if TYPE_CHECKING:` ones too: a type-only cycle is still two modules
        # that cannot be understood (or moved) one without the other.
        return sorted(t for t in modules[name].imports if t in modules and t != name)

    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(edges(start)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            name, todo = work[-1]
            nxt = next(todo, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges(nxt))))
                elif nxt in on_stack:
                    low[name] = min(low[name], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[name])
            if low[name] == index[name]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == name:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def violations(modules: dict[str, Module]) -> set[str]:
    out = {"cycle: " + " ".join(component) for component in cycles(modules)}
    for name, module in modules.items():
        inside = {t for t in module.imports if t == PACKAGE or t.startswith(PACKAGE + ".")}
        stdlib = {t.split(".")[0] for t in module.imports} - {PACKAGE}
        if _in(name, "core"):
            out.update(f"sans-io: {name} imports {t}" for t in stdlib & IO_STDLIB)
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_CORE))
        if _in(name, "io"):
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_IO))
        if _in(name, "client"):
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_CLIENT))
        for client in CLIENTS:
            if _in(name, client):
                others = [c for c in CLIENTS if c != client]
                out.update(f"client: {name} imports {t}" for t in inside if _in(t, *others))
        for bottom, allowed in BOTTOM_ALLOWED.items():
            if _in(name, bottom):
                out.update(f"layer: {name} imports {t}" for t in inside if not _in(t, *allowed))
        if _in(name, *CLIENT_PARTS) or name in CLIENT_MODULES:
            out.update(f"optional: {name} imports {t}" for t in inside if OPTIONAL_PARTS & set(t.split(".")))
    return out


@pytest.fixture(scope="module")
def found() -> set[str]:
    return violations(load_modules(SRC, PACKAGE))


def test_no_new_violations(found: set[str]) -> None:
    assert sorted(found - KNOWN_VIOLATIONS) == []


def test_known_violations_still_occur(found: set[str]) -> None:
    """A fixed violation leaves the list, so that it cannot come back unnoticed."""
    assert sorted(KNOWN_VIOLATIONS - found) == []


def test_the_checker_sees_each_kind_of_violation(tmp_path: Path) -> None:
    files = {
        "kafkawire/__init__.py": "",
        "kafkawire/protocol/__init__.py": "",
        "kafkawire/protocol/codec.py": "from ..records import batch\n",
        "kafkawire/records/__init__.py": "",
        "kafkawire/records/batch.py": "from . import legacy\n",
        "kafkawire/records/legacy.py": "def f():\n    from .batch import X\n",
        "kafkawire/core/__init__.py": "",
        "kafkawire/core/clock.py": "import time\nfrom ..io import engine\n",
        "kafkawire/core/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import hint\n",
        "kafkawire/core/hint.py": "from . import typed\n",
        "kafkawire/io/__init__.py": "",
        "kafkawire/io/engine.py": "from kafkawire.spark import source\n",
        "kafkawire/spark/__init__.py": "",
        "kafkawire/spark/source.py": "from kafkawire import io\n",
        "kafkawire/client/__init__.py": "",
        "kafkawire/producer/__init__.py": "",
        "kafkawire/producer/config.py": "",
        "kafkawire/consumer/__init__.py": "",
        "kafkawire/consumer/config.py": "from ..producer.config import X\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert violations(load_modules(tmp_path, PACKAGE)) == {
        "cycle: kafkawire.records.batch kafkawire.records.legacy",
        "cycle: kafkawire.core.hint kafkawire.core.typed",
        "client: kafkawire.consumer.config imports kafkawire.producer.config",
        "layer: kafkawire.protocol.codec imports kafkawire.records.batch",
        "sans-io: kafkawire.core.clock imports time",
        "layer: kafkawire.core.clock imports kafkawire.io.engine",
        "layer: kafkawire.io.engine imports kafkawire.spark.source",
        "optional: kafkawire.io.engine imports kafkawire.spark.source",
    }
