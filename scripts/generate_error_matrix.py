"""Write docs/errors.md: every error policy of kafkawire (`kafkawire.core.policy.Policy`) as one
matrix, error code x request family -> meaning. The tables themselves are the source: this reads
every module-level policy of the packages below; tests/unit/core/test_error_matrix.py regenerates
the page and compares, so the page cannot drift from the code.

    python scripts/generate_error_matrix.py
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path

from kafkawire.core.kafka_error import error_name
from kafkawire.core.policy import Policy

PACKAGES = (
    "kafkawire.core",
    "kafkawire.client",
    "kafkawire.admin",
    "kafkawire.producer",
    "kafkawire.consumer",
    "kafkawire.share_consumer",
    "kafkawire.range_reader",
)
PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"

HEAD = """# Error codes and what they mean

What kafkawire does with each error code, for each request family: one row per error code that
some table names, one column per table. An empty cell means the code is not listed there: the
table's *any other code* row says what it means then. `ErrorPolicy` tables give an action of the
request driver (retry, refresh metadata, find the coordinator again, fail); the others give the
family's own verdict (a group member's, a transaction's, a fetch session's). Negative codes are
librdkafka's local errors (`KafkaError._TIMED_OUT`, ...).

This page is generated from the tables (`python scripts/generate_error_matrix.py`); a test
regenerates it and compares.
"""


def policies() -> list[tuple[str, Policy]]:
    """Every module-level policy: (where it is defined, the policy), by name."""
    found: dict[int, tuple[str, Policy]] = {}
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        modules = [package_name, *(m.name for m in pkgutil.walk_packages(package.__path__, package_name + "."))]
        for module_name in modules:
            module = importlib.import_module(module_name)
            source = Path(module.__file__ or "").read_text()
            for attr, value in vars(module).items():
                # (named where it is assigned, not where it is imported)
                if isinstance(value, Policy) and re.search(rf"^{attr}\b[^=\n]*=", source, re.MULTILINE):
                    found[id(value)] = (f"{module_name}.{attr}", value)
    return sorted(found.values(), key=lambda item: item[1].name)


def matrix() -> str:
    tables = policies()
    codes = sorted({code for _, p in tables for code in p.table}, key=lambda c: (c < 0, abs(c)))
    lines = [HEAD, "## The tables", "", "| | family | defined in | any other code |", "|---|---|---|---|"]
    for i, (where, p) in enumerate(tables, 1):
        lines.append(f"| T{i} | {p.name} | `{where}` | {p.otherwise()} |")
    lines += ["", "## The matrix", ""]
    lines.append("| code | name | " + " | ".join(f"T{i}" for i in range(1, len(tables) + 1)) + " |")
    lines.append("|---:|---|" + "---|" * len(tables))
    for code in codes:
        cells = [p.table[code].name if code in p.table else "" for _, p in tables]
        lines.append(f"| {code} | {error_name(code)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    PAGE.write_text(matrix())
    sys.stdout.write(f"wrote {PAGE}\n")
