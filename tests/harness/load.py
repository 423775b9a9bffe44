"""Busy loops on every core: the load fault and timing tests run under (issue 39 point 5).

`make test-slow` runs the fault tests with ``--busy-loops`` (tests/conftest.py), so that a test
which only passes on an idle machine fails there; the order scenarios (tests/broker/produce/test_order_under_load.py)
use `BusyLoops` directly. Each loop is a child process that stops by itself when its parent goes,
so a killed test run leaves no spinning process behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import TracebackType

# Spin until the parent that started us is gone (we are then re-parented).
_SPIN = """
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


class BusyLoops:
    """One spinning process per core (``os.cpu_count()``) while the context is open."""

    def __init__(self, count: int | None = None) -> None:
        self.count = count if count is not None else (os.cpu_count() or 1)
        self._children: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> BusyLoops:
        for _ in range(self.count):
            self._children.append(subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid())]))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        children, self._children = self._children, []
        for child in children:
            child.kill()
        for child in children:
            child.wait()
