"""The C extension's layout, held against its source: one file per mechanism under native_c/, each
compiled through module.c, small enough to read, and naming a pure-Python twin that exists.

test_architecture.py reads the Python modules' imports; the C files import nothing Python can
see, so what they depend on is what their headers name: a header that points at a module or test
that moved is caught here instead of misleading the next reader.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NATIVE = ROOT / "src" / "kafkawire" / "native_c"
MAX_C_LINES = 1000
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
NAMED_PATH = re.compile(r"\b((?:tests/)?[\w/]+\.py)\b")


def parts() -> list[Path]:
    return sorted(p for p in NATIVE.glob("*.c") if p.name != "module.c")


def header(path: Path) -> str:
    text = path.read_text()
    assert text.startswith("/*"), f"{path.name} starts without its header comment"
    return text[: text.index("*/")]


def test_module_compiles_every_part_once() -> None:
    included = INCLUDE.findall((NATIVE / "module.c").read_text())
    assert sorted(included) == [p.name for p in parts()]
    assert len(included) == len(set(included))


def test_no_c_file_is_a_book() -> None:
    long = {p.name: n for p in NATIVE.glob("*.c") if (n := len(p.read_text().splitlines())) > MAX_C_LINES}
    assert not long, f"C files over {MAX_C_LINES} lines: cut them by mechanism: {long}"


def header_faults(text: str) -> list[str]:
    """What is wrong with a part's header: no twin named, no path named, or a named path missing."""
    faults = [] if "twin" in text else ["names no pure-Python twin"]
    named = NAMED_PATH.findall(text)
    if not named:
        faults.append("names no Python module or test")
    for name in named:
        if not any(c.exists() for c in (ROOT / name, ROOT / "src" / "kafkawire" / name)):
            faults.append(f"names {name}, which does not exist")
    return faults


def test_each_part_names_its_twin_and_it_exists() -> None:
    faults = {part.name: f for part in parts() if (f := header_faults(header(part)))}
    assert not faults


def test_the_checker_sees_stale_and_missing_names() -> None:
    assert header_faults("/* x.c: Pure-Python twin: core/lane_state.py") == []
    assert header_faults("/* x.c: Pure-Python twin: core/no_such_module.py") == [
        "names core/no_such_module.py, which does not exist"
    ]
    assert header_faults("/* x.c: the lock") == ["names no pure-Python twin", "names no Python module or test"]
