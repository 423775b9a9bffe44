"""DESIGN.md's file map names every module of src/kafkawire, and names nothing that is not there.

The map is an indented tree: a line whose first word ends in "/" opens a directory at its indent;
module names on a line (``a.py``, ``dir/b.py``, ``x.py, y.py`` after a ``dir/`` one share its
directory) belong to the innermost directory open above them; ``<name>.py`` stands for every module
of its directory. ``__init__.py`` files need no entry."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "kafkawire"
_DESCRIPTION_COLUMN = 24  # a line indented this far goes on the description above it
_NAME = re.compile(r"(?:[\w.<>-]+/)*[\w<>]+\.(?:py|c|pyi)\b")


def _map_block() -> list[str]:
    text = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    found = re.search(r"## File map\n\n```\n(.*?)```", text, re.S)
    assert found, "DESIGN.md has no file map"
    return found.group(1).splitlines()


def named_in_map() -> tuple[set[str], set[str]]:
    """(paths named, directories given as ``<name>.py``), relative to src/kafkawire."""
    paths: set[str] = set()
    wildcards: set[str] = set()
    stack: list[tuple[int, str]] = []  # (indent, directory)
    for line in _map_block():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        first = line.split()[0]
        if first.endswith("/") and not _NAME.match(first):
            if first in ("src/kafkawire/",):
                stack = [(indent, "")]
            elif first in ("tests/", "scripts/", "bench/"):
                stack = [(indent, "\0")]  # outside the package: not checked
            else:
                base = stack[-1][1] if stack else "\0"
                stack.append((indent, first if base == "" else base + first))
            continue
        base = stack[-1][1] if stack else "\0"
        if base.startswith("\0"):
            continue
        entry = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        if indent >= _DESCRIPTION_COLUMN or not _NAME.match(first):  # a description's next line
            continue
        prefix = ""
        for token in _NAME.findall(entry):
            if "/" in token:
                prefix = token.rsplit("/", 1)[0] + "/"
                path = base + token
            else:
                path = base + prefix + token
            if "<" in path:
                wildcards.add(path.rsplit("/", 1)[0] + "/")
            else:
                paths.add(path)
    return paths, wildcards


def modules() -> set[str]:
    return {
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*")
        if p.suffix in (".py", ".c") and p.name != "__init__.py" and "__pycache__" not in p.parts
    }


def test_every_module_is_in_the_file_map() -> None:
    paths, wildcards = named_in_map()
    missing = sorted(m for m in modules() if m not in paths and not any(m.startswith(w) for w in wildcards))
    assert missing == [], "add these to DESIGN.md's file map"


def test_the_file_map_names_only_modules_that_exist() -> None:
    paths, _ = named_in_map()
    stale = sorted(p for p in paths if not (PACKAGE / p).exists())
    assert stale == [], "DESIGN.md's file map names modules that are gone"
