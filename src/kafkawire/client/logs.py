"""Where a client logs: the ``logger`` the application gave (confluent-kafka's option), else ours.

A `logging.Logger` (or anything with the Logger's methods, an adapter) is used as it is; a
`logging.Handler` gets a logger of its own that writes only to it, and so does any other object
with a ``log(level, msg, *args)`` method, the one method confluent-kafka calls on its ``logger``.
Under any ``debug`` context each client says at DEBUG that it started ("INIT ..."), as librdkafka
does; with the ``conf`` context it then lists the configuration it was given, secrets hidden; the
``plugin`` context says once that kafkawire loads no plugins (``telemetry`` is client/telemetry.py's).
"""

from __future__ import annotations

import itertools
import logging
import sys
from collections.abc import Mapping
from typing import Any

from .._version import __version__
from ..base.config import SECURITY_OPTIONS
from ..base.debug import APP, Debug

_LOGGER_METHODS = ("debug", "info", "warning", "error", "exception", "log")
_instances = itertools.count(1)
# Options whose values never appear in a diagnostic (besides the names `kafkawire.base.debug` hides).
SENSITIVE = frozenset(name for o in SECURITY_OPTIONS if o.sensitive for name in (o.name, *o.aliases))


def check_logger(value: Any) -> Any:
    """The ``logger`` option: None, a Handler, or an object with a ``log`` method (ValueError otherwise)."""
    if value is None or isinstance(value, logging.Handler) or callable(getattr(value, "log", None)):
        return value
    raise ValueError("expected a logging.Logger (or adapter), a logging.Handler or an object with a log() method")


def client_logger(given: Any, default: logging.Logger) -> Any:
    """The logger a client writes to (``given`` already checked by `check_logger`)."""
    if given is None:
        return default
    if all(callable(getattr(given, name, None)) for name in _LOGGER_METHODS):
        return given
    own = logging.Logger(f"{default.name}.{next(_instances)}")  # (unregistered: the client alone holds it)
    own.propagate = False
    own.addHandler(given if isinstance(given, logging.Handler) else _ToLog(given))
    own.setLevel(logging.DEBUG)  # the handler (or the object) decides
    return own


class _ToLog(logging.Handler):
    """Each record handed to ``target.log(level, msg, *args)``, as confluent-kafka calls its logger."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        msg = record.msg if args else record.getMessage()
        self.target.log(record.levelno, msg, *args)


def log_init(debug: Debug, given: Mapping[str, Any]) -> None:
    """The DEBUG line every client writes once it is built under any debug context (librdkafka's
    "INIT" line), then the configuration it was ``given`` under the ``conf`` context."""
    contexts = ",".join(sorted(debug.on)) or "none"
    debug.any_context("INIT", "kafkawire %s %s initialized (debug %s)", __version__, debug.name, contexts)
    debug.dump_config(given, SENSITIVE)
    if debug.plugin:
        debug.log(
            "plugin",
            "PLUGLOAD",
            APP,
            "No plugins loaded: plugin.library.paths names librdkafka's C plugins, which kafkawire does not load",
        )


class DeferredLogger:
    """A logger whose records wait on a client's callback queue until the application serves it
    (the producer's, given a ``logger``: its records surface from poll() and flush(); the share
    consumer's: from poll(), a commit or close(), as librdkafka forwards its log queue to the one
    those calls drain). ``put(fn, args)`` queues."""

    def __init__(self, target: Any, put: Any) -> None:
        self.target = target
        self.name = getattr(target, "name", "kafkawire")
        self._put = put

    def log(self, level: int, msg: str, *args: Any, **kwargs: Any) -> None:
        self._put(lambda: self.target.log(level, msg, *args, **kwargs), ())

    def debug(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self.log(logging.DEBUG, msg, *args, **kwargs)

    def info(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self.log(logging.INFO, msg, *args, **kwargs)

    def warning(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self.log(logging.WARNING, msg, *args, **kwargs)

    def error(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self.log(logging.ERROR, msg, *args, **kwargs)

    def exception(self, msg: str, *args: Any, **kwargs: Any) -> None:
        # The exception now: by the time the record is served, there is none being handled.
        self.log(logging.ERROR, msg, *args, exc_info=sys.exc_info(), **kwargs)

    def isEnabledFor(self, level: int) -> bool:
        return bool(self.target.isEnabledFor(level))
