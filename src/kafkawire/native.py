"""The C extension ``kafkawire._native``, when it was built and not switched off.

It holds the per-record loops of producing and consuming (``native_c/``, one C file per mechanism,
each naming its pure-Python twin); each twin lives next to where it is used and runs when ``native`` is None: no compiler at install time, or
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
