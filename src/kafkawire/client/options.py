"""The options every client shares, and how a client treats a key that belongs to another client type.

One configuration dict often serves a producer, a consumer and an admin client (frameworks pass the
same dict to all three). librdkafka accepts every property it documents in every client, checks its
value, and warns when the property is for the other client type. The catalog of those properties is
`librdkafka_properties` (generated from librdkafka itself); this module turns a row of it into an
`Option` for that check, so no client needs another client's table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..base.config import Option, parse_config
from ..base.debug import parse_contexts
from .librdkafka_properties import PROPERTIES
from .logs import check_logger

INT32_MAX = 2**31 - 1


def _debug(contexts: list[Any]) -> list[Any]:
    parse_contexts(contexts)  # (raises for an unknown context)
    return contexts


def _int(name: str, default: int, low: int, high: int = INT32_MAX, *, noop: str = "") -> Option:
    return Option(name, "int", default, low, high, noop=noop)


def _bool(name: str, default: bool, *, noop: str = "") -> Option:
    return Option(name, "bool", default, noop=noop)


# Accepted so that confluent-kafka configurations work unchanged, checked as librdkafka checks
# them, and otherwise without effect; each says why.
NOOP_OPTIONS: tuple[Option, ...] = (
    _bool("api.version.request", True, noop="kafkawire always asks brokers for their versions (ApiVersions)"),
    _int(
        "api.version.fallback.ms", 0, 0, 604_800_000,
        noop="no fallback to a guessed broker version is ever needed: ApiVersions is always used",
    ),
    Option(
        "broker.version.fallback", "str", "0.10.0", required=True,
        noop="kafkawire never guesses a broker's versions; brokers before 0.10 are not supported",
    ),
    _int("log_level", 6, 0, 7, noop="kafkawire logs through the logging module; set levels on 'kafkawire'"),
    _bool("log.thread.name", True, noop="log records carry their thread's name already (logging's threadName)"),
)  # fmt: skip

# A Logger (or adapter) or a Handler that receives the client's log records (`kafkawire.client.logs`).
LOGGER_OPTION = Option("logger", "object", None, validate=check_logger)
# librdkafka's debug contexts: the diagnostics each client writes to that logger (`kafkawire.base.debug`).
DEBUG_OPTION = Option("debug", "list", None, validate=_debug)

STATISTICS_INTERVAL = _int("statistics.interval.ms", 0, 0, 86_400_000)  # 0: no statistics
METRICS_PUSH = _bool("enable.metrics.push", True)  # client metrics to a broker that asks (KIP-714)
# The callbacks every client serves (from poll()), and the statistics period.
CALLBACK_OPTIONS: tuple[Option, ...] = (
    Option("error_cb", "callable", None, strict=TypeError),
    Option("throttle_cb", "callable", None, strict=ValueError),
    Option("stats_cb", "callable", None, strict=TypeError),
    STATISTICS_INTERVAL,
    METRICS_PUSH,
)

# Client type letters as librdkafka's catalog writes them.
PRODUCER = "P"
CONSUMER = "C"
# Not a librdkafka type: librdkafka's admin client is a producer handle, so it takes producer
# properties silently and warns about consumer ones; so does ours.
ADMIN = "A"
_ROLE_NAMES = {PRODUCER: "producer", CONSUMER: "consumer"}

# librdkafka's names for some integer values (its s2i tables), accepted wherever the integer is.
_NAMED_INTEGERS: Mapping[str, Mapping[str, int]] = {"request.required.acks": {"all": -1}}


# The Python way to do what a librdkafka C API slot (kind "api") does, where confluent-kafka has one.
_PYTHON_WAY = {
    "log_cb": "the logger option",
    "oauthbearer_token_refresh_cb": "oauth_cb",
    "dr_cb": "on_delivery",
    "dr_msg_cb": "on_delivery",
    "partitioner_cb": "a callable partitioner",
    "rebalance_cb": "subscribe(on_assign=, on_revoke=, on_lost=)",
    "offset_commit_cb": "on_commit",
    "default_topic_conf": "default.topic.config",
}


def _c_api_slot(name: str) -> Callable[[Any], Any]:
    """A C API slot is refused whatever its value, as confluent-kafka refuses it."""
    instead = _PYTHON_WAY.get(name)
    why = "a librdkafka C API slot, not a configuration value" + (f"; use {instead}" if instead else "")

    def refuse(value: Any) -> Any:
        raise ValueError(why)

    return refuse


def catalog_option(name: str, kind: str, rng: str, target: str) -> Option:
    """An Option that checks a value as librdkafka checks this property's (kind, range, choices)."""
    named = _NAMED_INTEGERS.get(target or name)
    if kind in ("int", "float") and named is None:
        low, _, high = rng.partition(" .. ")
        return Option(name, kind, None, float(low) if low else None, float(high) if high else None)
    if kind == "int" and named is not None:
        return Option(name, "object", None, validate=lambda v: named.get(str(v).strip().lower(), v))
    if kind == "bool":
        return Option(name, "bool", None)
    if kind == "enum":  # (case-insensitive, as librdkafka)
        return Option(name, "enum", None, choices=tuple(c.strip().lower() for c in rng.split(",")))
    if kind == "list":
        return Option(name, "list", None)
    if kind == "api":
        return Option(name, "object", None, validate=_c_api_slot(name))
    return Option(name, "str", None)


# name -> (the client type that reads it, the checking Option), aliases resolved to their target's type.
_SCOPES: dict[str, tuple[str, Option]] = {}
for _name, _scope, _kind, _rng, _default, _target in PROPERTIES:
    _SCOPES[_name] = (_scope, catalog_option(_name, _kind, _rng, _target))


def foreign_keys(conf: Mapping[str, Any], own: Mapping[str, Option], role: str) -> dict[str, Any]:
    """The keys of ``conf`` that librdkafka gives only to the other client type (not in ``own``),
    each value checked as librdkafka checks it; a mistake raises _INVALID_ARG naming the key."""
    out: dict[str, Any] = {}
    for key, value in conf.items():
        if key in own or not isinstance(key, str):
            continue
        entry = _SCOPES.get(key)
        if entry is None or entry[0] in ("*", role):
            continue
        parse_config({key: value}, (entry[1],))
        out[key] = value
    return out


def warn_foreign(keys: Mapping[str, Any], role: str, logger: logging.Logger) -> None:
    """librdkafka's warning for each property of the other client type (ignored by this one); an
    admin client is a producer handle there, so it says "producer instance" too."""
    this = _ROLE_NAMES.get(role, "producer")
    for key in keys:
        scope = _SCOPES[key][0]
        if role == ADMIN and scope == PRODUCER:
            continue
        logger.warning(
            "Configuration property %s is a %s property and will be ignored by this %s instance",
            key,
            _ROLE_NAMES[scope],
            this,
        )
