"""README's "Testing your code" example is a pytest module: it runs, as written, and passes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.broker

ROOT = Path(__file__).resolve().parents[2]
SECTION = re.search(r"## Testing your code\n(.*?)\n## ", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_testing_example_passes(tmp_path: Path) -> None:
    assert SECTION is not None
    [example] = re.findall(r"```python\n(.*?)```", SECTION.group(1), re.S)
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
