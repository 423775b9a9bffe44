"""Glob matching of names (``*`` within a dot-separated segment, ``**`` across, ``?`` one char).

Used by data-contract rules to pick fields by tag or name.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["wildcard_match"]


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if pattern[i : i + 2] == "**":
                out.append(".*")
                i += 2
                continue
            out.append(r"[^.]*")
        elif c == "?":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def wildcard_match(s: str, pattern: str) -> bool:
    return _compile(pattern).fullmatch(s) is not None
