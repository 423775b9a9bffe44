"""The rotating share of a heavy run: CI takes one part of it per commit, `make test-all` all of it.

``KAFKAWIRE_SHARE=N`` (set by .ci/run) keeps the items whose position modulo N is the commit's part
(its id modulo N), so that N commits in a row cover every item; unset (or 1), every item runs.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def share_part() -> tuple[int, int] | None:
    """(part, parts) of this run, or None for the whole run (asked of git once)."""
    parts = int(os.environ.get("KAFKAWIRE_SHARE") or 1)
    if parts <= 1:
        return None
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):  # not a checkout: the first part
        return 0, parts
    return int(head, 16) % parts, parts


def rotating_share(items: Sequence[T]) -> list[T]:
    """This run's share of ``items`` (all of them when no share is set)."""
    part = share_part()
    if part is None:
        return list(items)
    k, parts = part
    return [item for i, item in enumerate(items) if i % parts == k]


def share_label() -> str:
    part = share_part()
    return "all" if part is None else f"part {part[0] + 1} of {part[1]}"
