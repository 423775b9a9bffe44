"""librdkafka's ``debug`` contexts: which diagnostics a client writes, and in what shape.

One `Debug` per client, made from its ``debug`` option and its logger, handed to every part that
writes diagnostics (broker connections, the metadata owner, group members, the fetch engine, the
producer's sender and transactions, the admin client). A part asks ``if debug.<context>:`` (one
attribute read: a hot path pays nothing more when the context is off) before it calls `log`, whose
arguments are formatted only if the logger keeps the record. Lines have librdkafka's shape, as
confluent-kafka hands them to a ``logger``: facility, client name, thread, message::

    SEND [kafkawire#producer-1] [thrd:127.0.0.1:9092/1]: 127.0.0.1:9092/1: Sent Produce (v7, 120 bytes, CorrId 4)

Records go to the client's logger at DEBUG (the ``logger`` option, else ``kafkawire.<client>``).
When nothing in the logging tree would receive them (no handler anywhere), they go to stderr in
librdkafka's own form, as librdkafka writes when no log callback is set: turning ``debug`` on shows
something. No line carries a secret: the configuration dump hides sensitive values, SASL lines
name mechanisms and sizes only.
"""

from __future__ import annotations

import itertools
import logging
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any

# librdkafka's contexts ("all" turns on every one).
CONTEXTS = (
    "generic", "broker", "topic", "metadata", "feature", "queue", "msg", "protocol", "cgrp",
    "security", "fetch", "interceptor", "plugin", "consumer", "admin", "eos", "mock", "assignor",
    "conf", "telemetry", "all",
)  # fmt: skip
_EACH = CONTEXTS[:-1]
APP, MAIN = "app", "main"  # the application's thread, the IO thread (librdkafka's "main")
HIDDEN = "[redacted]"
# Parts of property names whose values are secrets wherever they appear (librdkafka's sensitive
# properties, Java's JAAS line); options flagged ``sensitive`` are hidden too.
_SECRET_MARKS = ("password", "secret", "jaas", "passphrase", "private.key", "key.pem", "oauthbearer.config")
_names = itertools.count(1)


def parse_contexts(value: Any) -> frozenset[str]:
    """The contexts a ``debug`` value turns on (a list, or librdkafka's comma-separated string);
    ValueError for an empty list or a name librdkafka does not know."""
    if value is None:
        return frozenset()
    items = value.split(",") if isinstance(value, str) else list(value)
    names = [str(c).strip() for c in items if str(c).strip()]
    if not names or any(c not in CONTEXTS for c in names):
        raise ValueError("expected a comma-separated list of " + ", ".join(CONTEXTS))
    return frozenset(_EACH) if "all" in names else frozenset(names)


class Debug:
    """A client's diagnostics switch and writer: ``debug.broker`` etc. say whether a context is on."""

    __slots__ = (*_EACH, "on", "name", "_logger", "_stderr")
    generic: bool
    broker: bool
    topic: bool
    metadata: bool
    feature: bool
    queue: bool
    msg: bool
    protocol: bool
    cgrp: bool
    security: bool
    fetch: bool
    interceptor: bool
    plugin: bool
    consumer: bool
    admin: bool
    eos: bool
    mock: bool
    assignor: bool
    conf: bool
    telemetry: bool

    def __init__(self, contexts: Iterable[str], logger: Any, name: str) -> None:
        self.on = frozenset(contexts)
        for context in _EACH:
            setattr(self, context, context in self.on)
        self.name = name
        self._logger = logger
        has_handlers = getattr(logger, "hasHandlers", None)
        self._stderr = bool(self.on) and callable(has_handlers) and not has_handlers()

    @classmethod
    def of(cls, config: Mapping[str, Any], logger: Any, kind: str) -> Debug:
        """A client's Debug from its parsed config; named as librdkafka names a handle
        (``client.id#producer-N``, N counting the process's clients; an admin client is a producer)."""
        name = f"{config.get('client.id') or 'kafkawire'}#{kind}-{next(_names)}"
        return cls(parse_contexts(config.get("debug")), logger, name)

    def enabled(self, context: str) -> bool:
        return context in self.on

    def log(self, context: str, facility: str, where: str, fmt: str, *args: Any) -> None:
        """One line (``fmt % args``, formatted only if written) when ``context`` is on."""
        if context not in self.on:
            return
        if self._stderr:
            text = fmt % args if args else fmt
            sys.stderr.write(f"%7|{time.time():.3f}|{facility}|{self.name}| [thrd:{where}]: {text}\n")
            return
        self._logger.log(logging.DEBUG, "%s [%s] [thrd:%s]: " + fmt, facility, self.name, where, *args)

    def info(self, facility: str, where: str, fmt: str, *args: Any) -> None:
        """A line at INFO whatever the contexts: what librdkafka logs at level 6 without debug (a
        broker closing a connection, under log.connection.close)."""
        self._logger.log(logging.INFO, "%s [%s] [thrd:%s]: " + fmt, facility, self.name, where, *args)

    def any_context(self, facility: str, fmt: str, *args: Any) -> None:
        """A line of librdkafka's ``all`` category: written when any context is on (the INIT line)."""
        for context in self.on:
            self.log(context, facility, APP, fmt, *args)
            return

    def dump_config(self, given: Mapping[str, Any], sensitive: Iterable[str] = ()) -> None:
        """The ``conf`` context: each property the application set, sensitive values hidden."""
        if "conf" not in self.on:
            return
        hidden = set(sensitive)
        self.log("conf", "CONF", APP, "Client configuration:")
        for key, value in given.items():
            self.log("conf", "CONF", APP, "  %s = %s", key, shown_value(str(key), value, hidden))


def shown_value(key: str, value: Any, hidden: Iterable[str] = ()) -> str:
    """How a property's value appears in a diagnostic: secrets hidden, callables and other objects
    by their type only (their repr may hold anything), lists comma-joined as librdkafka writes them."""
    if key in hidden or any(mark in key.lower() for mark in _SECRET_MARKS):
        return HIDDEN
    if isinstance(value, (str, int, float, bool)) or value is None:
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    return f"<{type(value).__name__}>"


def broker_name(host: str, port: int, node_id: int) -> str:
    """A broker as librdkafka names it in diagnostics: ``host:port/id``, ``/bootstrap`` before metadata."""
    return f"{host}:{port}/{node_id if node_id >= 0 else 'bootstrap'}"


# For parts made without a client's Debug (tests' stand-ins): every context off, never writes.
OFF = Debug((), logging.getLogger("kafkawire"), "kafkawire")
