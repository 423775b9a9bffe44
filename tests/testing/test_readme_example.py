"""docs/testing.md's example is a pytest module: it runs, as written, and passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.doc_blocks import python_blocks

pytestmark = pytest.mark.broker

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "testing.md"


def test_the_readme_testing_example_passes(tmp_path: Path) -> None:
    [example] = python_blocks(PAGE.read_text())
    (tmp_path / "test_orders.py").write_text(example)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert "2 passed" in run.stdout, run.stdout + run.stderr
