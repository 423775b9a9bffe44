"""Configuration as one table of options: names, aliases, types, ranges, defaults.

Values may be given as Python values or as strings (``"true"``, ``"100"``), as with librdkafka.
Any mistake fails at construction with ``KafkaError._INVALID_ARG``, naming the key and what is
allowed; a sensitive option's value never appears in an error or a log line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import KafkaError, KafkaException


@dataclass(frozen=True)
class Option:
    name: str
    kind: str  # "int", "bool", "str", "enum", "float"
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    sensitive: bool = False


def _int(name: str, default: int, low: int, high: int = 2**31 - 1, aliases: tuple[str, ...] = ()) -> Option:
    return Option(name, "int", default, low, high, aliases=aliases)


CONNECTION_OPTIONS: tuple[Option, ...] = (
    Option("bootstrap.servers", "str", None, aliases=("metadata.broker.list",)),
    Option("client.id", "str", "kafkawire"),
    Option("security.protocol", "enum", "plaintext", choices=("plaintext",)),
    _int("socket.timeout.ms", 60_000, 10, 300_000_000),
    _int("socket.connection.setup.timeout.ms", 30_000, 1000),
    _int("reconnect.backoff.ms", 100, 0, 3_600_000),
    _int("reconnect.backoff.max.ms", 10_000, 0, 3_600_000),
    _int("receive.message.max.bytes", 100_000_000, 1000, 2_147_483_647),
    _int("max.in.flight.requests.per.connection", 1_000_000, 1, 1_000_000, aliases=("max.in.flight",)),
    _int("topic.metadata.refresh.interval.ms", 300_000, -1, 3_600_000),
    _int("metadata.max.age.ms", 900_000, 1, 86_400_000),
    _int("api.version.request.timeout.ms", 10_000, 1, 300_000),
)


def config_error(message: str) -> KafkaException:
    return KafkaException(KafkaError(KafkaError._INVALID_ARG, message))


def _coerce(opt: Option, value: Any) -> Any:
    shown = "(hidden)" if opt.sensitive else repr(value)
    if opt.kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise config_error(f"Invalid value {shown} for configuration property \"{opt.name}\": expected true or false")
    if opt.kind in ("int", "float"):
        try:
            number: float = int(value) if opt.kind == "int" else float(value)
        except (TypeError, ValueError):
            raise config_error(
                f"Invalid value {shown} for configuration property \"{opt.name}\": expected a number"
            ) from None
        if isinstance(value, bool) or (opt.low is not None and number < opt.low) or (
            opt.high is not None and number > opt.high
        ):
            raise config_error(
                f"Invalid value {shown} for configuration property \"{opt.name}\": "
                f"allowed range is {opt.low}..{opt.high}"
            )
        return number
    if not isinstance(value, str):
        raise config_error(f"Invalid value type for configuration property \"{opt.name}\": expected a string")
    if opt.kind == "enum":
        lowered = value.lower()
        if lowered not in opt.choices:
            raise config_error(
                f"Invalid value {shown} for configuration property \"{opt.name}\": allowed values are "
                + ", ".join(opt.choices)
            )
        return lowered
    return value


def parse_config(
    conf: Mapping[str, Any], options: Iterable[Option], *, ignore_unknown: bool = False
) -> dict[str, Any]:
    """Canonical name -> typed value for every option (defaults filled in).

    ``ignore_unknown`` lets a layer read just its own options out of a larger configuration.
    """
    by_name: dict[str, Option] = {}
    for opt in options:
        by_name[opt.name] = opt
        for alias in opt.aliases:
            by_name[alias] = opt
    if not isinstance(conf, Mapping):
        raise TypeError(f"expected configuration dict, not {type(conf).__name__}")
    out = {opt.name: opt.default for opt in by_name.values()}
    for key, value in conf.items():
        if not isinstance(key, str):
            raise TypeError(f"configuration keys must be strings, not {type(key).__name__}")
        known = by_name.get(key)
        if known is None:
            if ignore_unknown:
                continue
            raise config_error(f"No such configuration property: \"{key}\"")
        out[known.name] = _coerce(known, value)
    return out


def bootstrap_addresses(value: str | None) -> list[tuple[str, int]]:
    """``"host1:9092,host2:9093"`` -> [(host, port)]; an empty or malformed list is a config error."""
    if not value:
        raise config_error('"bootstrap.servers" is required: a comma-separated list of host:port')
    out = []
    for item in value.split(","):
        item = item.strip()
        for prefix in ("plaintext://", "PLAINTEXT://"):
            item = item.removeprefix(prefix)
        host, sep, port = item.rpartition(":")
        host = host.strip("[]")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise config_error(f'Invalid "bootstrap.servers" entry {item!r}: expected host:port')
        out.append((host, int(port)))
    return out
