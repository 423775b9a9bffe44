"""The reader's options, checked as Spark's Kafka connector checks them, with its messages.

Everything here is pure: option parsing and validation, no broker. The reader resolves the
parsed offset limits against the cluster (`kafkawire.spark.reader`).

Rules taken from Spark's connector (``KafkaSourceProvider``):

- exactly one of ``subscribe``, ``subscribePattern``, ``assign`` (JSON ``{"t":[0,1]}``);
- ``kafka.bootstrap.servers`` is required;
- ``kafka.auto.offset.reset``, ``kafka.key.deserializer``, ``kafka.value.deserializer``,
  ``kafka.enable.auto.commit`` and ``kafka.interceptor.classes`` are refused (each with the
  connector's reason); so are ``kafka.group.id`` and ``groupIdPrefix``: kafkawire joins no group,
  so they could mean nothing; other ``kafka.*`` options are checked against the consumer's table;
- an option the source does not know is refused, naming the nearest known one;
- ``fetchOffset.numRetries`` attempts (default 3) ``fetchOffset.retryIntervalMs`` apart (default
  10) for the driver's offset look-ups, as the connector;
- ``startingOffsets`` / ``endingOffsets``: ``earliest``, ``latest`` or JSON ``{"t":{"0":23,"1":-1}}``
  (-2 earliest, -1 latest); batch queries refuse a latest start and an earliest end; streaming
  queries refuse any ending option;
- ``startingTimestamp`` / ``endingTimestamp`` (one number for every partition) and
  ``startingOffsetsByTimestamp`` / ``endingOffsetsByTimestamp`` (JSON) take precedence over the
  offsets options, in that order.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkawire.consumer.consumer_config import parse_consumer_config
from kafkawire.core import TopicPartitionKey
from kafkawire.core.kafka_error import KafkaException
from kafkawire.spark.options import READ_OPTIONS, bool_option, check_option_names, kafka_params, source_option

LOGGER = logging.getLogger("kafkawire.spark")

EARLIEST_OFFSET = -2
LATEST_OFFSET = -1

STRATEGY_KEYS = ("subscribe", "subscribepattern", "assign")  # Spark lists them as a Set, in this order
_STRATEGY_LIST = "subscribe, subscribepattern, assign"

DEFAULT_MAX_RECORDS_PER_PARTITION = 1_000_000  # kafkawire's split of large partitions (Spark: none)

GROUP_OPTION_REFUSAL = (
    "Option '{}' is not supported: kafkawire reads each partition from offsets the driver resolves and "
    "joins no consumer group, so a group id would name nothing (no group ACL, quota or committed "
    "offset applies). Remove the option."
)


class ReadOptionError(ValueError):
    """An option Spark's Kafka connector would refuse (its IllegalArgumentException)."""


@dataclass(frozen=True)
class OffsetLimit:
    """Where a read starts or ends, before it is resolved against the cluster.

    ``kind`` is ``earliest``, ``latest``, ``offsets`` (``per_partition`` holds offsets, -2/-1
    allowed), ``timestamp`` (``timestamp`` for every partition) or ``timestamps`` (per partition).
    """

    kind: str
    per_partition: dict[TopicPartitionKey, int] = field(default_factory=dict)
    timestamp: int | None = None


EARLIEST = OffsetLimit("earliest")
LATEST = OffsetLimit("latest")


@dataclass(frozen=True)
class ReadOptions:
    kafka: dict[str, str]  # the client's config (prefix stripped)
    strategy: str  # one of STRATEGY_KEYS
    topics: tuple[str, ...] = ()  # subscribe
    pattern: str | None = None  # subscribePattern
    assigned: tuple[TopicPartitionKey, ...] = ()  # assign
    starting: OffsetLimit = EARLIEST
    ending: OffsetLimit = LATEST
    include_headers: bool = False
    fail_on_data_loss: bool = True
    read_committed: bool = False
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None  # wait for this many new offsets ...
    max_trigger_delay: float = 15 * 60.0  # ... but no longer than this (seconds) once some arrived
    min_partitions: int | None = None
    max_records_per_partition: int = DEFAULT_MAX_RECORDS_PER_PARTITION
    latest_on_no_timestamp_match: bool = False  # startingOffsetsByTimestampStrategy=latest
    fetch_timeout: float = 60.0
    offset_fetch_attempts: int = 3  # fetchOffset.numRetries: the driver's offset look-ups, tries in all ...
    offset_retry_interval: float = 0.01  # ... fetchOffset.retryIntervalMs apart (seconds)


def tp_name(tp: TopicPartitionKey) -> str:
    """A topic-partition as Kafka's Java TopicPartition prints it (``orders-0``)."""
    return f"{tp[0]}-{tp[1]}"


def _long(options: Mapping[str, str], name: str) -> int | None:
    raw = source_option(options, name)
    if raw is None:
        return None
    try:
        return int(raw.strip())
    except ValueError:
        raise ReadOptionError(f"option '{name}' must be a whole number, got '{raw}'") from None


_TIME_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def duration_seconds(raw: str, name: str) -> float:
    """A Spark time string (``15m``, ``30s``, ``500ms``; a bare number is milliseconds) in seconds."""
    text = raw.strip().lower()
    digits = len(text) - len(text.lstrip("0123456789"))
    unit = text[digits:].strip() or "ms"
    if not digits or unit not in _TIME_UNITS:
        raise ReadOptionError(f"option '{name}' must be a duration such as 15m, 30s or 500ms, got '{raw}'")
    return int(text[:digits]) * _TIME_UNITS[unit]


def parse_assign(value: str) -> tuple[TopicPartitionKey, ...]:
    try:
        parsed = json.loads(value)
        if not isinstance(parsed, dict):
            raise TypeError
        out: list[TopicPartitionKey] = []
        for topic, parts in parsed.items():
            if not isinstance(parts, list):
                raise TypeError
            for p in parts:
                if isinstance(p, bool) or not isinstance(p, int):
                    raise TypeError
                out.append((topic, p))
        return tuple(out)
    except (ValueError, TypeError):
        raise ReadOptionError(f'Expected e.g. {{"topicA":[0,1],"topicB":[0,1]}}, got {value}') from None


def _partition_longs(value: str, example: str) -> dict[TopicPartitionKey, int]:
    try:
        parsed = json.loads(value)
        if not isinstance(parsed, dict):
            raise TypeError
        out: dict[TopicPartitionKey, int] = {}
        for topic, parts in parsed.items():
            if not isinstance(parts, dict):
                raise TypeError
            for p, n in parts.items():
                if isinstance(n, bool) or not isinstance(n, int):
                    raise TypeError
                out[(topic, int(p))] = n
        return out
    except (ValueError, TypeError):
        raise ReadOptionError(f"Expected e.g. {example}, got {value}") from None


def parse_partition_offsets(value: str) -> dict[TopicPartitionKey, int]:
    return _partition_longs(value, '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}')


def parse_partition_timestamps(value: str) -> dict[TopicPartitionKey, int]:
    return _partition_longs(
        value, '{"topicA": {"0": 123456789, "1": 123456789},\n"topicB": {"0": 123456789, "1": 123456789}}'
    )


def offset_limit(
    options: Mapping[str, str], global_ts_key: str, by_ts_key: str, offsets_key: str, default: OffsetLimit
) -> OffsetLimit:
    """The limit the options ask for, by the connector's preference: one timestamp, per-partition
    timestamps, then earliest/latest/per-partition offsets."""
    ts = source_option(options, global_ts_key)
    if ts is not None:
        try:
            return OffsetLimit("timestamp", timestamp=int(ts.strip()))
        except ValueError:
            raise ReadOptionError(f"Expected a single long value, got {ts.strip()}") from None
    by_ts = source_option(options, by_ts_key)
    if by_ts is not None:
        return OffsetLimit("timestamps", per_partition=parse_partition_timestamps(by_ts.strip()))
    raw = source_option(options, offsets_key)
    if raw is None:
        return default
    value = raw.strip()
    if value.lower() == "latest":
        return LATEST
    if value.lower() == "earliest":
        return EARLIEST
    return OffsetLimit("offsets", per_partition=parse_partition_offsets(value))


def _starting(options: Mapping[str, str], default: OffsetLimit) -> OffsetLimit:
    return offset_limit(options, "startingTimestamp", "startingOffsetsByTimestamp", "startingOffsets", default)


def _ending(options: Mapping[str, str]) -> OffsetLimit:
    return offset_limit(options, "endingTimestamp", "endingOffsetsByTimestamp", "endingOffsets", LATEST)


def _validate_general(options: Mapping[str, str]) -> tuple[str, str]:
    lowered = {k.lower(): v for k, v in options.items()}
    for name in ("groupIdPrefix", "kafka.group.id"):
        if name.lower() in lowered:
            raise ReadOptionError(GROUP_OPTION_REFUSAL.format(name))
    check_option_names(options, READ_OPTIONS, "read")
    chosen = [k for k in STRATEGY_KEYS if k in lowered]
    if not chosen:
        raise ReadOptionError(
            f"One of the following options must be specified for Kafka source: {_STRATEGY_LIST}. "
            "See the docs for more details."
        )
    if len(chosen) > 1:
        raise ReadOptionError(
            f"Only one of the following options can be specified for Kafka source: {_STRATEGY_LIST}. "
            "See the docs for more details."
        )
    strategy, value = chosen[0], lowered[chosen[0]]
    if strategy == "assign" and not value.strip().startswith("{"):
        raise ReadOptionError(f"No topicpartitions to assign as specified value for option 'assign' is '{value}'")
    if strategy == "subscribe" and not [t for t in value.split(",") if t.strip()]:
        raise ReadOptionError(f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'")
    if strategy == "subscribepattern" and not value.strip():
        raise ReadOptionError(
            f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'"
        )
    min_partitions = _long(options, "minPartitions")
    if min_partitions is not None and min_partitions <= 0:
        raise ReadOptionError("minPartitions must be positive")
    max_records = _long(options, "maxRecordsPerPartition")
    if max_records is not None and max_records <= 0:
        raise ReadOptionError("maxrecordsperpartition must be positive")

    kafka = kafka_params(options)
    if "auto.offset.reset" in kafka:
        raise ReadOptionError(
            "\nKafka option 'auto.offset.reset' is not supported.\n"
            "Instead set the source option 'startingoffsets' to 'earliest' or 'latest'\n"
            "to specify where to start. Structured Streaming manages which offsets are consumed\n"
            "internally, rather than relying on the kafkaConsumer to do it. This will ensure that no\n"
            "data is missed when new topics/partitions are dynamically subscribed. Note that\n"
            "'startingoffsets' only applies when a new Streaming query is started, and\n"
            "that resuming will always pick up from where the query left off. See the docs for more\n"
            "details.\n"
        )
    if "key.deserializer" in kafka:
        raise ReadOptionError(
            "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte arrays with "
            "ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the keys."
        )
    if "value.deserializer" in kafka:
        raise ReadOptionError(
            "Kafka option 'value.deserializer' is not supported as values are deserialized as byte arrays with "
            "ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the values."
        )
    for name in ("enable.auto.commit", "interceptor.classes"):
        if name in kafka:
            raise ReadOptionError(f"Kafka option '{name}' is not supported")
    if "bootstrap.servers" not in kafka:
        raise ReadOptionError("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer")
    min_per_trigger = _long(options, "minOffsetsPerTrigger")
    max_per_trigger = _long(options, "maxOffsetsPerTrigger")
    if min_per_trigger is not None and max_per_trigger is not None and min_per_trigger > max_per_trigger:
        raise ReadOptionError(
            f"The value of minOffsetPerTrigger({min_per_trigger}) is higher than the "
            f"maxOffsetsPerTrigger({max_per_trigger})."
        )
    return strategy, value


def _check_limits(start: OffsetLimit, end: OffsetLimit) -> None:
    """Spark's checkOffsetLimitValidity: the same partitions, and no start after its end."""
    if start.kind != end.kind or start.kind not in ("offsets", "timestamps"):
        return
    if set(start.per_partition) != set(end.per_partition):

        def names(tps: Mapping[TopicPartitionKey, int]) -> str:
            return ", ".join(sorted(tp_name(tp) for tp in tps))

        raise ReadOptionError(
            "The topic-partitions of the "
            f"starting and ending options differ: starting has [{names(start.per_partition)}], "
            f"ending has [{names(end.per_partition)}]."
        )
    what = "offset" if start.kind == "offsets" else "timestamp"
    for tp, first in start.per_partition.items():
        last = end.per_partition[tp]
        if first > last and first >= 0 and last >= 0:
            raise ReadOptionError(
                f"The starting {what} ({first}) of {tp_name(tp)} is greater than its ending {what} ({last})."
            )


def _common(
    options: Mapping[str, str], strategy: str, value: str, starting: OffsetLimit, ending: OffsetLimit
) -> ReadOptions:
    kafka = kafka_params(options)
    isolation = kafka.get("isolation.level", "read_uncommitted").strip().lower()
    if isolation not in ("read_committed", "read_uncommitted"):
        raise ReadOptionError(
            f"Invalid value {kafka['isolation.level']} for configuration isolation.level: "
            "String must be one of: read_committed, read_uncommitted"
        )
    try:
        parse_consumer_config(kafka, LOGGER)  # unknown or invalid kafka.* options fail here, on the driver
    except KafkaException as exc:
        raise ReadOptionError(f"Invalid kafka.* option: {exc.args[0].str()}") from None
    attempts = _long(options, "fetchOffset.numRetries")
    if attempts is not None and attempts <= 0:
        raise ReadOptionError("fetchOffset.numRetries must be positive")
    interval_ms = _long(options, "fetchOffset.retryIntervalMs")
    if interval_ms is not None and interval_ms < 0:
        raise ReadOptionError("fetchOffset.retryIntervalMs must not be negative")
    no_match = (source_option(options, "startingOffsetsByTimestampStrategy") or "error").strip().lower()
    if no_match not in ("error", "latest"):
        raise ReadOptionError(
            f"option 'startingOffsetsByTimestampStrategy' must be 'error' or 'latest', got '{no_match}'"
        )
    timeout_ms = _long(options, "kafkaConsumer.pollTimeoutMs")
    kwargs: dict[str, Any] = {}
    if strategy == "subscribe":
        kwargs["topics"] = tuple(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))
    elif strategy == "subscribepattern":
        kwargs["pattern"] = value.strip()
    else:
        kwargs["assigned"] = parse_assign(value)
    return ReadOptions(
        kafka=kafka,
        strategy=strategy,
        starting=starting,
        ending=ending,
        include_headers=bool_option(options, "includeHeaders", False),
        fail_on_data_loss=bool_option(options, "failOnDataLoss", True),
        read_committed=isolation == "read_committed",
        max_offsets_per_trigger=_long(options, "maxOffsetsPerTrigger"),
        min_offsets_per_trigger=_long(options, "minOffsetsPerTrigger"),
        max_trigger_delay=duration_seconds(source_option(options, "maxTriggerDelay") or "15m", "maxTriggerDelay"),
        min_partitions=_long(options, "minPartitions"),
        max_records_per_partition=_long(options, "maxRecordsPerPartition") or DEFAULT_MAX_RECORDS_PER_PARTITION,
        latest_on_no_timestamp_match=no_match == "latest",
        fetch_timeout=60.0 if timeout_ms is None else max(timeout_ms, 1000) / 1000,
        offset_fetch_attempts=3 if attempts is None else attempts,
        offset_retry_interval=0.01 if interval_ms is None else interval_ms / 1000,
        **kwargs,
    )


def batch_options(options: Mapping[str, str]) -> ReadOptions:
    """``spark.read``: the start defaults to earliest, the end to latest."""
    starting = _starting(options, EARLIEST)
    if starting.kind == "latest":
        raise ReadOptionError("starting offset can't be latest for batch queries on Kafka")
    if starting.kind == "offsets":
        for tp, off in starting.per_partition.items():
            if off == LATEST_OFFSET:
                raise ReadOptionError(f"startingOffsets for {tp_name(tp)} can't be latest for batch queries on Kafka")
    ending = _ending(options)
    if ending.kind == "earliest":
        raise ReadOptionError("ending offset can't be earliest for batch queries on Kafka")
    if ending.kind == "offsets":
        for tp, off in ending.per_partition.items():
            if off == EARLIEST_OFFSET:
                raise ReadOptionError(f"ending offset for {tp_name(tp)} can't be earliest for batch queries on Kafka")
    strategy, value = _validate_general(options)
    if source_option(options, "maxOffsetsPerTrigger") is not None:
        LOGGER.warning("maxOffsetsPerTrigger option ignored in batch queries")
    _check_limits(starting, ending)
    return _common(options, strategy, value, starting, ending)


def stream_options(options: Mapping[str, str]) -> ReadOptions:
    """``spark.readStream``: the start defaults to latest; no end."""
    if source_option(options, "endingOffsets") is not None:
        raise ReadOptionError("ending offset not valid in streaming queries")
    if (
        source_option(options, "endingOffsetsByTimestamp") is not None
        or source_option(options, "endingTimestamp") is not None
    ):
        raise ReadOptionError("ending timestamp not valid in streaming queries")
    strategy, value = _validate_general(options)
    max_per_trigger = _long(options, "maxOffsetsPerTrigger")
    if max_per_trigger is not None and max_per_trigger <= 0:
        raise ReadOptionError("maxOffsetsPerTrigger must be positive")
    return _common(options, strategy, value, _starting(options, LATEST), LATEST)
