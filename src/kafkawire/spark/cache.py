"""One client per configuration per Python worker process, reused across tasks and micro-batches.

Spark runs many tasks in one worker process; opening a producer or a connection per task would
cost a bootstrap and ApiVersions round trip each time. Entries are closed at interpreter exit
(Spark's daemon ends forked workers with ``os._exit``, which skips ``atexit``; nothing is lost
then: every writer flushes before its task returns).
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

log = logging.getLogger("kafkawire.spark")


C = TypeVar("C")

ConfigKey = tuple[tuple[str, Any], ...]


def _key(config: Mapping[str, Any]) -> ConfigKey:
    return tuple(sorted(config.items()))


class ProcessCache(Generic[C]):
    """``get(config)`` answers this process's entry for ``config``, made by ``factory`` on first use."""

    def __init__(self, factory: Callable[[dict[str, Any]], C], closer: Callable[[C], object]) -> None:
        self._factory = factory
        self._closer = closer
        self._entries: dict[ConfigKey, C] = {}
        self._lock = threading.Lock()
        atexit.register(self.close)

    def get(self, config: Mapping[str, Any]) -> C:
        key = _key(config)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = self._factory(dict(config))
            return entry

    def close(self, config: Mapping[str, Any] | None = None) -> None:
        """Close and forget the entry for ``config``, or every entry (at exit)."""
        with self._lock:
            keys = list(self._entries) if config is None else [_key(config)]
            closing = [self._entries.pop(k) for k in keys if k in self._entries]
        for entry in closing:
            try:
                self._closer(entry)
            except Exception:  # closing after a failure, or at exit: keep going
                log.debug("closing a cached %s failed", type(entry).__name__, exc_info=True)
