"""The consumer's options as one table, parsed once into a typed, frozen `ConsumerConfig`.

Names, aliases, defaults and ranges are librdkafka's (CONFIGURATION.md) so that a confluent-kafka
consumer configuration means the same here. A producer-only key is checked, then ignored with a
warning naming it, as librdkafka does (so one shared configuration dict serves both clients).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..base.config import (
    CONNECTION_OPTIONS,
    RETRY_BACKOFF_OPTIONS,
    Option,
    config_error,
    option_index,
    parse_config,
    protocol_string,
)
from ..client.inert_properties import unimplemented
from ..client.options import (
    CALLBACK_OPTIONS,
    CONSUMER,
    DEBUG_OPTION,
    LOGGER_OPTION,
    NOOP_OPTIONS,
    foreign_keys,
    warn_foreign,
)
from ..core.assignors import ASSIGNORS
from ..core.fetch_rows import FetchLimits
from ..core.kafka_error import KafkaException

INT32_MAX = 2**31 - 1

log = logging.getLogger("kafkawire.consumer")

# auto.offset.reset with librdkafka's aliases -> "earliest" | "latest" | "error"
RESETS = {
    "smallest": "earliest", "earliest": "earliest", "beginning": "earliest",
    "largest": "latest", "latest": "latest", "end": "latest", "error": "error",
}  # fmt: skip


def _assignors(names: list[Any]) -> list[str]:
    if not names or any(n not in ASSIGNORS for n in names):
        raise ValueError("expected a comma-separated list of " + ", ".join(sorted(ASSIGNORS)))
    if "cooperative-sticky" in names and len(names) > 1:
        raise ValueError("cooperative-sticky cannot be mixed with eager assignors")
    return names


def _int(name: str, default: int, low: int, high: int = INT32_MAX, *aliases: str) -> Option:
    return Option(name, "int", default, low, high, aliases=aliases)


def _group_id(value: str | None) -> str | None:
    if value == "":
        raise ValueError("expected a non-empty string")
    return protocol_string(value)


CONSUMER_OPTIONS: tuple[Option, ...] = (
    *CONNECTION_OPTIONS,
    *NOOP_OPTIONS,
    LOGGER_OPTION,
    DEBUG_OPTION,
    Option("group.id", "str", None, validate=_group_id),
    Option("group.instance.id", "str", None, validate=_group_id),
    Option("group.protocol", "enum", "classic", choices=("classic", "consumer")),
    Option("group.remote.assignor", "str", None),
    Option("partition.assignment.strategy", "list", ["range", "roundrobin"], validate=_assignors),
    _int("session.timeout.ms", 45_000, 1, 3_600_000),
    _int("heartbeat.interval.ms", 3_000, 1, 3_600_000),
    _int("coordinator.query.interval.ms", 600_000, 1, 3_600_000),  # FindCoordinator again this often
    _int("max.poll.interval.ms", 300_000, 1, 86_400_000),
    Option("enable.auto.commit", "bool", True, aliases=("auto.commit.enable",)),
    _int("auto.commit.interval.ms", 5_000, 0, 86_400_000),
    Option("enable.auto.offset.store", "bool", True),
    Option("auto.offset.reset", "enum", "latest", choices=tuple(RESETS)),
    Option("isolation.level", "enum", "read_committed", choices=("read_committed", "read_uncommitted")),
    _int("fetch.min.bytes", 1, 1, 100_000_000),
    _int("fetch.wait.max.ms", 500, 0, 300_000),
    _int("fetch.max.bytes", 52_428_800, 0, 2_147_483_135),
    _int("max.partition.fetch.bytes", 1_048_576, 1, 1_000_000_000, "fetch.message.max.bytes"),
    _int("fetch.error.backoff.ms", 500, 0, 300_000),
    _int("fetch.queue.backoff.ms", 1_000, 0, 300_000),
    _int("queued.min.messages", 100_000, 1, 10_000_000),
    _int("queued.max.messages.kbytes", 65_536, 1, 2_097_151),
    Option("check.crcs", "bool", False),
    Option("client.rack", "str", None),
    Option("enable.partition.eof", "bool", False),
    Option("allow.auto.create.topics", "bool", False),
    # As librdkafka 2.16: a share consumer's ShareFetch MaxRecords (ShareConsumer reads it), not Consumer's.
    Option(
        "max.poll.records",
        "int",
        500,
        1,
        INT32_MAX,
        noop="(Consumer) librdkafka 2.16 applies it to share consumers only: ShareConsumer's ShareFetch",
    ),
    Option("on_commit", "callable", None, strict=KafkaException),
    *CALLBACK_OPTIONS,
    *RETRY_BACKOFF_OPTIONS,
    _int("message.max.bytes", 1_000_000, 1000, 1_000_000_000),
)

CONSUMER_OPTIONS += unimplemented(CONSUMER_OPTIONS, CONSUMER)

_INDEX = option_index(CONSUMER_OPTIONS)


@dataclass(frozen=True)
class ConsumerConfig:
    options: Mapping[str, Any]
    group_id: str | None
    auto_offset_reset: str  # earliest | latest | error
    read_committed: bool
    assignors: list[str]
    on_commit: Callable[..., Any] | None
    error_cb: Callable[..., Any] | None

    def __getitem__(self, key: str) -> Any:
        return self.options[key]

    @property
    def cooperative(self) -> bool:
        return self.assignors == ["cooperative-sticky"]

    @property
    def queue_bytes(self) -> int:
        return int(self.options["queued.max.messages.kbytes"]) * 1024


def parse_consumer_config(conf: Mapping[str, Any], logger: logging.Logger | None = None) -> ConsumerConfig:
    """Check every key and value; a mistake raises KafkaException(_INVALID_ARG) naming the key."""
    if not isinstance(conf, Mapping):
        raise TypeError(f"expected configuration dict, not {type(conf).__name__}")
    producer_only = foreign_keys(conf, _INDEX, CONSUMER)  # a bad value is still a mistake
    if producer_only:
        warn_foreign(producer_only, CONSUMER, logger or log)
        conf = {k: v for k, v in conf.items() if k not in producer_only}
    opts = parse_config(conf, CONSUMER_OPTIONS)
    session, heartbeat = opts["session.timeout.ms"], opts["heartbeat.interval.ms"]
    if "heartbeat.interval.ms" in conf and heartbeat >= session:
        raise config_error('"heartbeat.interval.ms" must be lower than "session.timeout.ms"')
    if opts["max.poll.interval.ms"] < session:  # as librdkafka: the rebalance timeout covers a session
        raise config_error('"max.poll.interval.ms" must be >= "session.timeout.ms"')
    if "fetch.max.bytes" in conf and opts["fetch.max.bytes"] < opts["message.max.bytes"]:
        raise config_error('"fetch.max.bytes" must be >= "message.max.bytes"')  # (librdkafka's check)
    if opts["group.instance.id"] is not None and opts["group.id"] is None:
        raise config_error('"group.instance.id" needs "group.id"')
    return ConsumerConfig(
        options=opts,
        group_id=opts["group.id"],
        auto_offset_reset=RESETS[opts["auto.offset.reset"]],
        read_committed=opts["isolation.level"] == "read_committed",
        assignors=list(opts["partition.assignment.strategy"]),
        on_commit=opts["on_commit"],
        error_cb=opts["error_cb"],
    )


class EngineConfig(Protocol):
    """What the fetch engine (fetch_engine.py) reads of `ConsumerConfig`."""

    @property
    def group_id(self) -> str | None: ...
    @property
    def auto_offset_reset(self) -> str: ...
    @property
    def read_committed(self) -> bool: ...
    @property
    def options(self) -> Mapping[str, Any]: ...


def limits_of(config: EngineConfig) -> FetchLimits:
    """The fetch table's limits (core/fetch_rows.py) from the configuration."""
    opts = config.options
    return FetchLimits(
        queue_bytes=int(opts["queued.max.messages.kbytes"]) * 1024,
        queue_records=int(opts["queued.min.messages"]),
        fetch_max_bytes=int(opts["fetch.max.bytes"]),
        partition_max_bytes=int(opts["max.partition.fetch.bytes"]),
        error_backoff=int(opts["fetch.error.backoff.ms"]) / 1000,
        auto_offset_reset=config.auto_offset_reset,
        read_committed=config.read_committed,
        partition_eof=bool(opts["enable.partition.eof"]),
        has_group=config.group_id is not None,
    )
