"""Read Apache Kafka's JSON message specs from the installed kafka-python wheel (reference data only).

They are never copied into the repo nor imported at run time: the tests load them from the dev
dependency and compare our declarations with them.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest


def specs_dir() -> Path:
    kafka = pytest.importorskip("kafka")
    path = Path(kafka.__file__).parent / "protocol" / "schemas" / "resources"
    if not path.is_dir():
        pytest.skip("the installed kafka-python ships no JSON message specs")
    return path


def _strip_comments(text: str) -> str:
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("//"):
            continue
        out.append(line)
    return "\n".join(out)


@cache
def load_spec(name: str) -> dict[str, Any]:
    """``load_spec("ProduceRequest")`` -> the parsed JSON spec."""
    spec: dict[str, Any] = json.loads(_strip_comments((specs_dir() / f"{name}.json").read_text()))
    return spec


def snake(name: str) -> str:
    """Kafka's CamelCase field names as our snake_case: ``V3AndBelowTransactionalId`` -> ``v3_and_below_transactional_id``."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()
