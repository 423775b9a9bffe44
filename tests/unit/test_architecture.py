"""The architecture's rules, checked from the source (ast, nothing imported): no import cycles
between modules nor between packages (type-only imports included), a sans-IO core that imports no
IO or face, protocol/ and records/ at the bottom, io/ above security/, no client importing another,
optional parts (the testing package included) never imported by the library, the applications
imported by nothing of the library, at most MAX_ROOT_MODULES modules at the package root, and no
class name, nor module name, defined in three places or more. No size rule: modules are cut by
concern (the C files, which no import shows, are held by test_native_layout.py).

`KNOWN_VIOLATIONS` lists what is still being fixed. It may only shrink: a new violation fails, and
so does an entry that no longer occurs (delete it when you fix it).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "kafkawire"
# The root holds the package face, confluent-kafka's module names (drop-in imports them by those
# paths), the entry points whose paths are documented, and the few modules of no package.
MAX_ROOT_MODULES = 15

# Dotted-name parts that mark an optional feature (extra dependencies, never needed to produce,
# consume or administer).
OPTIONAL_PARTS = frozenset({"spark", "pipeline", "schema_registry", "serialization", "avro", "testing"})
# Packages and modules that must work without the optional parts installed.
CLIENT_PARTS = (
    "protocol", "records", "core", "base", "security", "io", "client", "producer", "admin", "consumer",
    "share_consumer", "range_reader",
)  # fmt: skip
CLIENT_MODULES = ("kafkawire", "kafkawire.native")
# The applications: built on the library, imported by none of it (the package face hands on
# install_as_confluent_kafka from app/alias.py).
APPLICATIONS = ("app", "pipeline", "local_broker")
# Entry points at documented paths (``python -m kafkawire[.run|.pipeline]``, spark-submit's file):
# the top of the house wherever their path puts them, so they take part in no package's arrows.
ENTRY_POINTS = frozenset(
    {"kafkawire.__main__", "kafkawire.run", "kafkawire.pipeline.__main__", "kafkawire.pipeline.submit"}
)

# The core decides; clocks, threads and sockets belong to io/ (callers pass `now`).
IO_STDLIB = frozenset({"socket", "ssl", "selectors", "threading", "time", "asyncio"})
ABOVE_CORE = (
    "base", "security", "io", "client", "producer", "admin", "consumer", "share_consumer", "range_reader", "aio",
    "spark", "pipeline", "app", "local_broker", "serializing_producer", "deserializing_consumer",
    "deserializing_share_consumer", "cimpl", "error", "testing",
)  # fmt: skip
ABOVE_BASE = tuple(p for p in ABOVE_CORE if p != "base")
# io/ stands on security/ (TLS context, SASL settings), never the other way round.
ABOVE_SECURITY = (
    "io",
    "client",
    "producer",
    "admin",
    "consumer",
    "share_consumer",
    "range_reader",
    "aio",
    "spark",
    "pipeline",
    "app",
    "testing",
)
ABOVE_IO = ("client", "producer", "admin", "consumer", "share_consumer", "range_reader", "spark", "pipeline", "app")
ABOVE_CLIENT = ("producer", "admin", "consumer", "share_consumer", "range_reader", "aio", "spark", "pipeline", "app")
# The clients: each stands on the shared layers below it, never on another client, but where
# STANDS_ON says so (the share consumer shares the group consumer's decoding, options, heartbeat
# loop and statistics).
CLIENTS = ("producer", "consumer", "admin", "share_consumer", "range_reader")
STANDS_ON = {"share_consumer": ("consumer",)}
# What the two bottom layers may import, besides the standard library and third-party codecs (and
# the C extension, which runs their twins: the codec's interpreter, the record batches' loops).
BOTTOM_ALLOWED = {
    "protocol": ("protocol", "native", "_native"),
    "records": ("protocol", "records", "native", "_native", "_lazy_names"),
}
# confluent-kafka's own module layout, mirrored where drop-in imports those paths: its repeated
# module names (avro.py, serde.py, ... in _sync/, _async/, common/) are kept; one module per API.
NAMES_MIRRORED = ("kafkawire.schema_registry", "kafkawire.protocol.apis")
SHARED_FILE_NAMES = frozenset({"__init__", "__main__"})

KNOWN_VIOLATIONS: frozenset[str] = frozenset()


@dataclass
class Module:
    name: str
    lines: int
    package: bool = False  # an __init__.py
    classes: set[str] = field(default_factory=set)  # top-level class definitions
    loads: set[str] = field(default_factory=set)  # kafkawire modules loaded by name (importlib, __import__)
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
        module = Module(name, text.count("\n"), is_package)
        if path.suffix == ".pyi":  # an extension module's stub: no imports of its own at run time
            modules[name] = module
            continue
        tree = ast.parse(text, str(path))
        module.classes = _classes(tree)
        module.loads = _loaded_by_name(tree)
        typing_only = _type_checking_nodes(tree)
        here = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(tree):
            for target in _targets(node, here, paths):
                module.imports.add(target)
                if id(node) not in typing_only:
                    module.runtime_imports.add(target)
        modules[name] = module
    return modules


def _classes(tree: ast.Module) -> set[str]:
    """The classes a module defines at its top level (under a top-level ``if`` too)."""
    out = set()
    for node in tree.body:
        for inner in [node, *(node.body + node.orelse if isinstance(node, ast.If) else [])]:
            if isinstance(inner, ast.ClassDef):
                out.add(inner.name)
    return out


def _loaded_by_name(tree: ast.AST) -> set[str]:
    """``importlib.import_module("kafkawire...")`` and ``__import__("kafkawire...")``: imports the
    graph does not see, so a rule cannot be kept by hiding an import in a string."""
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        arg = node.args[0]
        value = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
        if name in ("import_module", "__import__") and value.split(".")[0] == PACKAGE:
            out.add(value)
    return out


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


def _unit(name: str) -> str:
    """The package (or root module) of ``kafkawire.<unit>...``; the package face is its own."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def package_cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Loops between the package's parts (its packages and root modules), entry points left out."""
    units = {name: Module(name, 0) for name in {_unit(m) for m in modules if m not in ENTRY_POINTS and m != PACKAGE}}
    for name, module in modules.items():
        if name in ENTRY_POINTS or name == PACKAGE:
            continue
        units[_unit(name)].imports.update(
            _unit(t) for t in module.imports if t in modules and t not in ENTRY_POINTS and t != PACKAGE
        )
    for name, unit in units.items():
        unit.imports.discard(name)
    return cycles(units)


def violations(modules: dict[str, Module]) -> set[str]:
    out = {"cycle: " + " ".join(component) for component in cycles(modules)}
    out.update("package cycle: " + " ".join(component) for component in package_cycles(modules))
    for name, module in modules.items():
        inside = {t for t in module.imports if t == PACKAGE or t.startswith(PACKAGE + ".")}
        stdlib = {t.split(".")[0] for t in module.imports} - {PACKAGE}
        if _in(name, "core"):
            out.update(f"sans-io: {name} imports {t}" for t in stdlib & IO_STDLIB)
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_CORE))
        if _in(name, "base"):
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_BASE))
        if _in(name, "security"):
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_SECURITY))
        if _in(name, "io"):
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_IO))
        if _in(name, "client"):
            out.update(f"layer: {name} imports {t}" for t in inside if _in(t, *ABOVE_CLIENT))
        for client in CLIENTS:
            if _in(name, client):
                others = [c for c in CLIENTS if c != client and c not in STANDS_ON.get(client, ())]
                out.update(f"client: {name} imports {t}" for t in inside if _in(t, *others))
        for bottom, allowed in BOTTOM_ALLOWED.items():
            if _in(name, bottom):
                out.update(f"layer: {name} imports {t}" for t in inside if not _in(t, *allowed))
        library = not _in(name, *APPLICATIONS) and name not in ENTRY_POINTS and name != PACKAGE
        if library:
            out.update(f"application: {name} imports {t}" for t in inside if _in(t, *APPLICATIONS))
        if _in(name, *CLIENT_PARTS) or name in CLIENT_MODULES:
            out.update(f"optional: {name} imports {t}" for t in inside if OPTIONAL_PARTS & set(t.split(".")))
            out.update(f"by name: {name} loads {t}" for t in module.loads)
    root = [
        name for name, module in modules.items() if name == PACKAGE or (name.count(".") == 1 and not module.package)
    ]
    if len(root) > MAX_ROOT_MODULES:
        out.add(f"root: {len(root)} modules")
    out.update(f"class name: {c}" for c, where in _defined_in(modules).items() if len(where) >= 3)
    out.update(f"module name: {n}" for n, where in _module_names(modules).items() if len(where) >= 3)
    return out


def _defined_in(modules: dict[str, Module]) -> dict[str, set[str]]:
    where: dict[str, set[str]] = defaultdict(set)
    for name, module in modules.items():
        if not name.startswith(NAMES_MIRRORED):
            for cls in module.classes:
                where[cls].add(name)
    return where


def _module_names(modules: dict[str, Module]) -> dict[str, set[str]]:
    where: dict[str, set[str]] = defaultdict(set)
    for name in modules:
        last = name.rpartition(".")[2]
        if name.count(".") > 1 and not name.startswith(NAMES_MIRRORED) and last not in SHARED_FILE_NAMES:
            where[last].add(name)
    return where


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
        "kafkawire/core/clock.py": "import time\nfrom ..io import engine\nclass State: pass\n",
        "kafkawire/core/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import hint\n",
        "kafkawire/core/hint.py": "from . import typed\nclass State: pass\n",
        "kafkawire/security/__init__.py": "",
        "kafkawire/security/tls.py": "from ..io.transport import Transport\n",
        "kafkawire/io/__init__.py": "",
        "kafkawire/io/engine.py": "from kafkawire.spark import source\nclass State: pass\n",
        "kafkawire/io/transport.py": "from ..security import tls\n",
        "kafkawire/spark/__init__.py": "",
        "kafkawire/spark/source.py": "from kafkawire import io\n",
        "kafkawire/client/__init__.py": "",
        "kafkawire/client/cluster.py": "import importlib\nimportlib.import_module('kafkawire.testing')\n",
        "kafkawire/producer/__init__.py": "",
        "kafkawire/producer/config.py": "",
        "kafkawire/consumer/__init__.py": "",
        "kafkawire/consumer/config.py": "from ..producer.config import X\nfrom ..app import cli\n",
        "kafkawire/admin/__init__.py": "",
        "kafkawire/admin/config.py": "",
        "kafkawire/app/__init__.py": "",
        "kafkawire/app/cli.py": "",
        "kafkawire/__main__.py": "from .app import cli\n",  # an entry point: no package cycle
        **{f"kafkawire/root_{n}.py": "" for n in range(MAX_ROOT_MODULES)},
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert violations(load_modules(tmp_path, PACKAGE)) == {
        "cycle: kafkawire.records.batch kafkawire.records.legacy",
        "cycle: kafkawire.core.hint kafkawire.core.typed",
        "cycle: kafkawire.io.transport kafkawire.security.tls",
        "package cycle: io security spark",
        "client: kafkawire.consumer.config imports kafkawire.producer.config",
        "application: kafkawire.consumer.config imports kafkawire.app.cli",
        "layer: kafkawire.protocol.codec imports kafkawire.records.batch",
        "sans-io: kafkawire.core.clock imports time",
        "layer: kafkawire.core.clock imports kafkawire.io.engine",
        "layer: kafkawire.security.tls imports kafkawire.io.transport",
        "layer: kafkawire.io.engine imports kafkawire.spark.source",
        "optional: kafkawire.io.engine imports kafkawire.spark.source",
        "by name: kafkawire.client.cluster loads kafkawire.testing",
        f"root: {MAX_ROOT_MODULES + 2} modules",
        "class name: State",
        "module name: config",
    }


def test_the_benchmark_has_no_import_cycle() -> None:
    """bench/ is read and extended like the library: its shared parts (workload.py, results.py) sit
    below the modules that use them."""
    assert cycles(load_modules(SRC.parent, "bench")) == []
