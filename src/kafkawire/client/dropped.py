"""Clients dropped without close() are finished, as confluent-kafka destroys its handle (issue 39).

Each face registers `when_dropped`: once it is collected (nothing below a face refers to it, or
it never would be: tests/broker/surface/test_dropped_clients.py) its client closes its connections and
its IO thread stops. The collector runs finalizers on whatever thread it runs, the IO thread
included and maybe inside a lock it holds, so the steps are handed to the IO thread and nobody
waits for them. Records still queued are lost, and said to be on the ``kafkawire`` logger.

A face's callbacks often refer to the face (a closure, a bound method of an object holding it).
Held from the IO side, which a running thread keeps reachable, they would keep a dropped face alive
for good: `Kept` holds them (and its ``logger``, which may refer to it as well) for the face
alone, the IO side gets forwarders that reach them weakly, so face and callbacks are a cycle the
collector frees, as confluent-kafka's handle traverses its callbacks and is freed with them. A
callback still due once its face is collected is not run, as confluent-kafka's is not. (A record's
own ``on_delivery`` stays with the record, as confluent-kafka keeps it: a producer dropped with a
record whose callback refers to it lives until that report is served, on both.)
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from .logs import check_logger, client_logger
from .network_client import Client

log = logging.getLogger("kafkawire")


def when_dropped(
    face: object, client: Client, *steps: Callable[[], None], lost: Callable[[], int] | None = None
) -> None:
    """Finish ``client`` once ``face`` is collected unclosed: ``steps`` (the face's own, such as
    stopping a report thread) then the client's shutdown, on the IO thread. ``lost``: how many
    records the face still held. (A client closed meanwhile is left alone.)

    Not at interpreter exit: a face alive then was never closed, not dropped, and its own at-exit
    handler says so. Run there too, this one warned first, a second time, and raced that handler
    by closing the client on the IO thread."""
    weakref.finalize(face, _finish, type(face).__name__, client, steps, lost).atexit = False


def _finish(kind: str, client: Client, steps: tuple[Callable[[], None], ...], lost: Callable[[], int] | None) -> None:
    if client.closed:
        return
    held = lost() if lost is not None else 0
    if held:
        log.warning(
            "a %s was dropped without close(): %d record(s) still queued or in flight are lost "
            "(call flush() or close() before dropping it)",
            kind,
            held,
        )
    client.abandon(steps)


class Kept:
    """The application's callables (and logger) given to one face, by name, held by that face alone."""

    __slots__ = ("__weakref__", "_callables")

    def __init__(self) -> None:
        self._callables: dict[str, Callable[..., Any]] = {}

    def hold(self, name: str, value: Any) -> Any:
        """``value`` (a callable) kept as ``name``, replacing the one kept so before; what the IO
        side may hold instead: a forwarder. Anything else is returned as it is (for the caller's
        checks to refuse)."""
        if not callable(value) or isinstance(value, type):
            self._callables.pop(name, None)
            return value
        self._callables[name] = value
        return _Forward(self, name)

    def weakly(self, conf: Mapping[str, Any], default: logging.Logger) -> dict[str, Any]:
        """``conf`` with its callbacks (``*_cb``, ``on_*``) and its ``logger`` (as `client_logger`
        makes it, after ``default``'s name) held here, forwarders in their place."""
        return {key: self._weak(key, value, default) for key, value in conf.items()}

    def _weak(self, key: Any, value: Any, default: logging.Logger) -> Any:
        if key == "logger" and value is not None:
            try:
                check_logger(value)
            except ValueError:
                return value  # (for the caller's checks to refuse)
            self._callables[key] = client_logger(value, default)
            return _ForwardLogger(self)
        return self.hold(key, value) if _is_callback(key) else value


def _is_callback(key: Any) -> bool:
    return isinstance(key, str) and (key.endswith("_cb") or key.startswith("on_"))


class _Forward:
    """Calls the kept callable while its face lives (after, nobody serves callbacks: a no-op)."""

    __slots__ = ("_kept", "_name")

    def __init__(self, kept: Kept, name: str) -> None:
        self._kept = weakref.ref(kept)
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        target = self.current()
        return None if target is None else target(*args, **kwargs)

    def current(self) -> Callable[..., Any] | None:
        """The callable forwarded to, or None once its face is collected."""
        kept = self._kept()
        return None if kept is None else kept._callables[self._name]


def forwarded(callback: Any) -> tuple[Any, Any]:
    """(``callback``, the callable it forwards to now or None) when ``callback`` is a forwarder,
    else (None, None): a hot loop compares each record's callback with the first by identity and
    calls the second directly, one weak look-up per batch instead of a Python call per record."""
    if isinstance(callback, _Forward):
        return callback, callback.current()
    return None, None


class _ForwardLogger:
    """The kept logger's methods while its face lives (after, each is a no-op)."""

    __slots__ = ("_kept",)

    def __init__(self, kept: Kept) -> None:
        self._kept = weakref.ref(kept)

    def __getattr__(self, name: str) -> Any:
        kept = self._kept()
        return _nothing if kept is None else getattr(kept._callables["logger"], name)


def _nothing(*_args: Any, **_kwargs: Any) -> None:
    return None
