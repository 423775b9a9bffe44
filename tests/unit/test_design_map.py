"""DESIGN.md's map of parts names every package and root module of src/kafkawire, and every module it
names inside a part exists there.

The map is a block of lines: at the parts' indent, a line starts with the names of one or more parts
(``core/``, ``run.py, __main__.py``) and goes on with what they hold; deeper lines go on with the
description above. A module named in a part's description (``sasl.py``, ``policy/``, ``native_c/module.c``)
is looked up inside that part (one named with a folder, ``core/lane_state.py``, from the package root).
The map holds the parts, not every module: each module says what it does in its own docstring."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "kafkawire"
PART_INDENT = 2
_MODULE = re.compile(r"(?<![\w./])((?:[a-z_]+/)*[a-z_0-9]+\.(?:py|c))\b")


def _map_block() -> list[str]:
    text = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    found = re.search(r"## Map of parts\n\n```\n(.*?)```", text, re.S)
    assert found, "DESIGN.md has no map of parts"
    lines = found.group(1).splitlines()
    assert lines[0] == "src/kafkawire/", "the map starts at src/kafkawire/"
    end = next((i for i, line in enumerate(lines[1:], 1) if not line.startswith(" ")), len(lines))
    return lines[1:end]


def parts_in_map() -> list[tuple[list[str], str]]:
    """Each part line's names, with its description (its continuation lines joined)."""
    parts: list[tuple[list[str], str]] = []
    for line in _map_block():
        indent = len(line) - len(line.lstrip())
        if indent == PART_INDENT:
            names_text, _, description = line.strip().partition("  ")
            names = [n.strip() for n in names_text.split(",") if n.strip()]
            parts.append((names, description))
        elif parts:
            names, description = parts[-1]
            parts[-1] = (names, description + " " + line.strip())
    return parts


def root_parts() -> set[str]:
    """The packages (and the C sources' folder) and modules at the package root."""
    found = set()
    for path in PACKAGE.iterdir():
        if path.is_dir() and ((path / "__init__.py").exists() or any(path.glob("*.c"))):
            found.add(path.name + "/")
        elif path.suffix == ".py":
            found.add(path.name)
    return found


def test_every_part_is_in_the_map() -> None:
    named = {name for names, _ in parts_in_map() for name in names}
    assert sorted(root_parts() - named) == [], "add these parts to DESIGN.md's map"
    assert sorted(named - root_parts()) == [], "DESIGN.md's map names parts that are gone"


def missing_modules(parts: list[tuple[list[str], str]]) -> list[str]:
    """Modules named in a part's description that its folder (or the root) does not hold."""
    missing = []
    for names, description in parts:
        folders = [n for n in names if n.endswith("/")]
        for module in _MODULE.findall(description):
            places = [PACKAGE / module] + [PACKAGE / folder / module for folder in folders]
            if not any(p.exists() for p in places):
                missing.append(f"{', '.join(names)}: {module}")
    return missing


def test_modules_named_in_the_map_exist() -> None:
    assert missing_modules(parts_in_map()) == [], "DESIGN.md's map names modules that are gone"


def test_the_checker_sees_a_stale_module() -> None:
    assert missing_modules([(["core/"], "connection framing (connection.py), gone (no_such.py)")]) == [
        "core/: no_such.py"
    ]
    assert missing_modules([(["core/"], "what the lane shares (core/lane_state.py)")]) == []
