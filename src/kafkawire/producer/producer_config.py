"""The producer's options as one table, parsed once into a typed, frozen `ProducerConfig`.

Names, aliases, defaults and ranges are librdkafka's (CONFIGURATION.md, librdkafka 2.x) so that a
confluent-kafka configuration keeps meaning the same thing; where kafkawire deliberately differs
the table says so next to the option. Cross-field rules follow librdkafka's
``rd_kafka_conf_finalize``: a value the user set that conflicts is an error, a default that
conflicts is adjusted (for example ``retries`` under idempotence).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ..base.config import (
    CONNECTION_OPTIONS,
    RETRY_BACKOFF_OPTIONS,
    Option,
    c_int,
    config_error,
    expand_default_topic_config,
    option_index,
    parse_config,
    protocol_string,
)
from ..client.inert_properties import unimplemented
from ..client.options import (
    CALLBACK_OPTIONS,
    DEBUG_OPTION,
    LOGGER_OPTION,
    NOOP_OPTIONS,
    PRODUCER,
    foreign_keys,
)
from ..core.kafka_error import KafkaException
from ..core.partitioners import DEFAULT_PARTITIONER
from ..records.compression import CODEC_NAMES, LEVEL_RANGES

INT32_MAX = 2**31 - 1

# librdkafka's partitioner names (``partitioner`` is case-sensitive there, so it is here too).
PARTITIONERS = (
    "random",
    "consistent",
    "consistent_random",
    "murmur2",
    "murmur2_random",
    "fnv1a",
    "fnv1a_random",
)

# librdkafka caps an idempotent producer's in-flight requests per connection at 5 (as Kafka does).
IDEMPOTENT_MAX_IN_FLIGHT = 5

_CODEC_BY_NAME = {name: codec for codec, name in CODEC_NAMES.items()}
_ACKS_ALLOWED = "allowed values are -1, 0, 1, all"


def _acks(value: Any) -> int:
    """ "all" or what librdkafka's strtol reads from the value's text (1.5 is 1); of that, -1/0/1
    only: librdkafka takes -1..1000 but brokers refuse anything but -1, 0, 1."""
    text = str(value)
    number = -1 if text.strip().lower() == "all" else c_int(text)
    if number not in (-1, 0, 1):
        raise ValueError(_ACKS_ALLOWED)
    return number


def _partitioner(value: Any) -> Any:
    """A partitioner name, a callable, or an object with a ``partition`` method; kept as given."""
    if isinstance(value, str):
        if value in PARTITIONERS:
            return value
    elif not isinstance(value, (bytes, bytearray)) and (callable(value) or callable(getattr(value, "partition", None))):
        return value
    raise ValueError(
        "allowed values are " + ", ".join(PARTITIONERS) + ", a callable, or an object with a partition() method"
    )


_INTERCEPTOR_METHODS = ("on_send", "on_acknowledgement", "configure", "close")


def _interceptors(items: list[Any]) -> list[Any]:
    """Dotted paths are only checked for shape here; the producer imports them at construction."""
    for item in items:
        if isinstance(item, str):
            parts = item.split(".")
            if len(parts) < 2 or not all(part.isidentifier() for part in parts):
                raise ValueError(f"entry {item!r} is not a dotted path module.Class")
        elif not any(hasattr(item, m) for m in _INTERCEPTOR_METHODS):
            raise ValueError(
                f"entry {item!r} is neither a dotted path nor a class or instance with "
                + ", ".join(_INTERCEPTOR_METHODS)
            )
    return items


def _transactional_id(value: str | None) -> str | None:
    # librdkafka takes "" as a transactional id; the broker cannot use it, so say so now.
    if value == "":
        raise ValueError("expected a non-empty string, or None for a non-transactional producer")
    return protocol_string(value)


def _int(name: str, default: int, low: int, high: int = INT32_MAX, *aliases: str) -> Option:
    return Option(name, "int", default, low, high, aliases=aliases)


PRODUCER_OPTIONS: tuple[Option, ...] = (
    *CONNECTION_OPTIONS,
    LOGGER_OPTION,
    DEBUG_OPTION,
    Option("acks", "object", -1, aliases=("request.required.acks",), validate=_acks),
    Option("linger.ms", "float", 5.0, 0, 900_000, aliases=("queue.buffering.max.ms",)),
    _int("batch.size", 1_000_000, 1),
    _int("batch.num.messages", 10_000, 1, 1_000_000),
    _int("queue.buffering.max.messages", 100_000, 0),  # 0: no limit on the number of messages
    _int("queue.buffering.max.kbytes", 1_048_576, 1),
    _int("message.max.bytes", 1_000_000, 1000, 1_000_000_000),
    Option(
        "compression.type", "enum", "none",
        choices=tuple(CODEC_NAMES[c] for c in sorted(CODEC_NAMES)), aliases=("compression.codec",),
    ),
    # librdkafka's range; the codec narrows it (see _check_compression_level).
    _int("compression.level", -1, -1, 12),
    Option("partitioner", "object", DEFAULT_PARTITIONER, validate=_partitioner),
    _int("retries", INT32_MAX, 0, INT32_MAX, "message.send.max.retries"),
    *RETRY_BACKOFF_OPTIONS,
    _int("message.timeout.ms", 300_000, 0, INT32_MAX, "delivery.timeout.ms"),  # 0: no timeout
    _int("request.timeout.ms", 30_000, 1, 900_000),
    # The producer's Metadata requests may create a topic the broker does not know (librdkafka's
    # producer default: true; the consumer's is false).
    Option("allow.auto.create.topics", "bool", True),
    # Off, as librdkafka's: on, it needs the IdempotentWrite permission and fixes acks, retries and
    # max.in.flight (see _apply_rules); a transactional.id turns it on.
    Option("enable.idempotence", "bool", False),
    # With idempotence: a batch that would fail (not expire) stops the producer (_GAPLESS_GUARANTEE).
    Option("enable.gapless.guarantee", "bool", False),
    # kafkawire/Java extension. 0: produce() raises BufferError at once when the buffer is full,
    # as confluent-kafka does; > 0: wait up to that long for room first.
    _int("max.block.ms", 0, 0),
    # kafkawire extension. "poll": callbacks run in the caller's thread from poll()/flush(), as
    # with confluent-kafka; "background": a producer thread runs them.
    Option("delivery.reports", "enum", "poll", choices=("poll", "background")),
    Option("interceptor.classes", "list", (), validate=_interceptors),
    *CALLBACK_OPTIONS,
    Option("on_delivery", "callable", None, strict=KafkaException),  # confluent-kafka has no alias for it ("delivery.report.cb" is refused)
    Option("delivery.report.only.error", "bool", False, strict=TypeError),  # report failed deliveries only
    # How long a topic the metadata says does not exist may still be created/propagating: its records wait.
    _int("topic.metadata.propagation.max.ms", 30_000, 0, 3_600_000),
    # Requests to a broker written to its socket only in part, or not yet, at which no new Produce
    # is built there (its ready batches go on filling meanwhile: fuller batches under load).
    _int("queue.buffering.backpressure.threshold", 1, 1, 1_000_000),
    # Keyless records leave their sticky partition after this long (0: no stickiness), as librdkafka's
    # timer, or when their batch is full; unset: twice linger.ms, as librdkafka (see _apply_rules).
    _int("sticky.partitioning.linger.ms", 10, 0, 900_000),
    Option("transactional.id", "str", None, validate=_transactional_id),
    _int("transaction.timeout.ms", 60_000, 1000),
    *NOOP_OPTIONS,
)  # fmt: skip

PRODUCER_OPTIONS += unimplemented(PRODUCER_OPTIONS, PRODUCER)

_INDEX = option_index(PRODUCER_OPTIONS)


class ProducerConfig(NamedTuple):
    """Effective producer settings: the user's values, defaults, and librdkafka's adjustments.
    (A named tuple: made once, read by attribute; the frozen dataclass of 34 fields cost ~2 ms of
    every start-up to create.)

    ``raw`` holds the same effective values under canonical names (plus the connection and no-op
    options), for `kafkawire.client.network_client.Client` and for interceptors' ``configure(config)``.
    """

    bootstrap_servers: str | None
    client_id: str
    acks: int
    linger_ms: float
    batch_size: int
    batch_num_messages: int
    queue_buffering_max_messages: int
    queue_buffering_max_kbytes: int
    message_max_bytes: int
    compression_codec: int  # kafkawire.records.compression.NONE .. ZSTD
    compression_level: int  # -1: the codec's default (always -1 for none and snappy)
    partitioner: Any  # a name from PARTITIONERS, a callable, or an object with partition()
    retries: int
    retry_backoff_ms: int
    retry_backoff_max_ms: int
    message_timeout_ms: int
    request_timeout_ms: int
    socket_timeout_ms: int
    max_in_flight: int
    topic_metadata_refresh_interval_ms: int
    enable_idempotence: bool
    statistics_interval_ms: int
    max_block_ms: int
    delivery_reports: str
    interceptors: list[Any]
    error_cb: Callable[..., Any] | None
    throttle_cb: Callable[..., Any] | None
    stats_cb: Callable[..., Any] | None
    on_delivery: Callable[..., Any] | None
    transactional_id: str | None
    transaction_timeout_ms: int
    raw: dict[str, Any]
    ignored: tuple[str, ...] = ()  # consumer-only keys given: checked, then left unused (librdkafka warns)
    sticky_linger_ms: int = 10  # sticky.partitioning.linger.ms, effective


def parse_producer_config(conf: Mapping[str, Any]) -> ProducerConfig:
    """Check every key and value, then the cross-field rules; raise _INVALID_ARG on the first mistake."""
    conf = expand_default_topic_config(conf)
    consumer_only = foreign_keys(conf, _INDEX, PRODUCER)  # a bad value is still a mistake
    conf = {k: v for k, v in conf.items() if k not in consumer_only}
    values = parse_config(conf, PRODUCER_OPTIONS)
    # canonical name -> the key the user wrote, for librdkafka's "set explicitly" rules and so
    # that errors name keys as written.
    given = {_INDEX[key].name: key for key in conf}
    values["interceptor.classes"] = list(values["interceptor.classes"])  # never share the default
    _apply_rules(values, given)
    v = values
    return ProducerConfig(
        bootstrap_servers=v["bootstrap.servers"],
        client_id=v["client.id"],
        acks=v["acks"],
        linger_ms=float(v["linger.ms"]),
        batch_size=v["batch.size"],
        batch_num_messages=v["batch.num.messages"],
        queue_buffering_max_messages=v["queue.buffering.max.messages"],
        queue_buffering_max_kbytes=v["queue.buffering.max.kbytes"],
        message_max_bytes=v["message.max.bytes"],
        compression_codec=_CODEC_BY_NAME[v["compression.type"]],
        compression_level=v["compression.level"],
        partitioner=v["partitioner"],
        retries=v["retries"],
        retry_backoff_ms=v["retry.backoff.ms"],
        retry_backoff_max_ms=v["retry.backoff.max.ms"],
        message_timeout_ms=v["message.timeout.ms"],
        request_timeout_ms=v["request.timeout.ms"],
        socket_timeout_ms=v["socket.timeout.ms"],
        max_in_flight=v["max.in.flight.requests.per.connection"],
        topic_metadata_refresh_interval_ms=v["topic.metadata.refresh.interval.ms"],
        enable_idempotence=v["enable.idempotence"],
        statistics_interval_ms=v["statistics.interval.ms"],
        max_block_ms=v["max.block.ms"],
        delivery_reports=v["delivery.reports"],
        interceptors=v["interceptor.classes"],
        error_cb=v["error_cb"],
        throttle_cb=v["throttle_cb"],
        stats_cb=v["stats_cb"],
        on_delivery=v["on_delivery"],
        transactional_id=v["transactional.id"],
        transaction_timeout_ms=v["transaction.timeout.ms"],
        raw=values,
        ignored=tuple(consumer_only),
        sticky_linger_ms=v["sticky.partitioning.linger.ms"],
    )


def _apply_rules(v: dict[str, Any], given: Mapping[str, str]) -> None:
    """librdkafka's cross-field rules, in its order; adjusts defaults in ``v`` in place."""

    def key(name: str) -> str:
        return f'"{given.get(name, name)}" ({v[name]})'

    def conflict(message: str) -> None:
        raise config_error(f"Invalid configuration: {message}")

    if v["reconnect.backoff.max.ms"] < v["reconnect.backoff.ms"]:
        conflict(f"{key('reconnect.backoff.max.ms')} must be >= {key('reconnect.backoff.ms')}")
    # Deliberately stricter: librdkafka only warns and backs off by retry.backoff.max.ms throughout.
    if v["retry.backoff.max.ms"] < v["retry.backoff.ms"]:
        conflict(f"{key('retry.backoff.max.ms')} must be >= {key('retry.backoff.ms')}")

    transactional = v["transactional.id"] is not None
    if transactional:
        if not v["enable.idempotence"]:
            if "enable.idempotence" in given:
                conflict(
                    f'"transactional.id" requires "enable.idempotence" to be true, not {key("enable.idempotence")}'
                )
            v["enable.idempotence"] = True
        # At least one request must fit in a transaction.
        if "socket.timeout.ms" not in given:
            v["socket.timeout.ms"] = max(v["transaction.timeout.ms"] - 100, 900)
        elif v["socket.timeout.ms"] > v["transaction.timeout.ms"] + 100:
            conflict(f"{key('socket.timeout.ms')} must be <= {key('transaction.timeout.ms')} + 100")

    if v["enable.gapless.guarantee"] and not v["enable.idempotence"]:
        conflict(
            f'"enable.gapless.guarantee" requires "enable.idempotence" to be true, not {key("enable.idempotence")}'
        )

    if v["enable.idempotence"]:
        name = "max.in.flight.requests.per.connection"
        if name not in given:
            v[name] = min(v[name], IDEMPOTENT_MAX_IN_FLIGHT)
        elif v[name] > IDEMPOTENT_MAX_IN_FLIGHT:
            conflict(f'{key(name)} must be <= {IDEMPOTENT_MAX_IN_FLIGHT} when "enable.idempotence" is true')
        if "retries" not in given:
            v["retries"] = INT32_MAX
        elif v["retries"] < 1:
            conflict(f'{key("retries")} must be >= 1 when "enable.idempotence" is true')
        if "acks" not in given:
            v["acks"] = -1
        elif v["acks"] != -1:
            conflict(f'{key("acks")} must be all (-1) when "enable.idempotence" is true')
        if transactional:
            if "message.timeout.ms" not in given:
                v["message.timeout.ms"] = v["transaction.timeout.ms"]
            elif v["message.timeout.ms"] > v["transaction.timeout.ms"]:
                conflict(f"{key('message.timeout.ms')} must be <= {key('transaction.timeout.ms')}")

    # Taken from linger.ms as the user gave it, before the rule below shortens it (librdkafka's order).
    if "sticky.partitioning.linger.ms" not in given:
        v["sticky.partitioning.linger.ms"] = min(900_000, int(2 * v["linger.ms"]))

    # A message must be able to wait linger.ms and still be sent before it times out.
    timeout = v["message.timeout.ms"]
    if timeout != 0 and timeout <= v["linger.ms"]:
        if "linger.ms" in given:
            conflict(f"{key('message.timeout.ms')} must be greater than {key('linger.ms')}")
        v["linger.ms"] = timeout - 0.1

    # librdkafka has no batch.size/message.max.bytes rule: a batch is capped by both (the
    # smaller wins), and a single larger message still goes in a batch of its own.
    _check_compression_level(v, given)


def _check_compression_level(v: dict[str, Any], given: Mapping[str, str]) -> None:
    """Levels are per codec: gzip 0-9, lz4 0-12, zstd 0-12 (within librdkafka's -1..12).

    Deliberately stricter than librdkafka, which accepts gzip 10-12 at construction. For none
    and snappy the level means nothing and is ignored, as in librdkafka (left at -1), so that
    switching compression off does not require removing the level.
    """
    codec = _CODEC_BY_NAME[v["compression.type"]]
    level = v["compression.level"]
    bounds = LEVEL_RANGES.get(codec)
    if bounds is None:
        v["compression.level"] = -1
        return
    if level == -1:
        return
    low, high = max(bounds[0], 0), min(bounds[1], 12)
    if not low <= level <= high:
        written = given.get("compression.level", "compression.level")
        codec_key = given.get("compression.type", "compression.type")
        raise config_error(
            f'Invalid value {level!r} for configuration property "{written}" with "{codec_key}" '
            f"{v['compression.type']}: allowed values are -1 (the codec's default) or {low}..{high}"
        )
