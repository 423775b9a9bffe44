"""The C extension ``kafkawire._native``, when it was built and not switched off.

It holds the producer's per-record loops (see ``_native.c``); each has a pure-Python twin next to
where it is used, which runs when ``native`` is None: no compiler at install time, or
``KAFKAWIRE_PURE_PYTHON=1`` in the environment (to compare, or to rule the extension out).
"""

from __future__ import annotations

import os
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("KAFKAWIRE_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from . import _native
    except ImportError:
        return None
    return _native


native = _load()
