"""Options shared by the reader and the writer: Spark's connector's ``kafka.*`` convention.

Spark hands a Python data source its options in a case-insensitive dict whose keys arrive
lower-cased (``startingoffsets``). Kafka's own option names are lower-case already, so every
``kafka.<name>`` option passes to the client as ``<name>`` once the prefix is stripped.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

KAFKA_PREFIX = "kafka."
REGISTRY_PREFIX = "schemaregistry."  # schemaRegistry.<any SchemaRegistryClient setting>

# keyFormat/valueFormat avro (kafkawire.spark.formats), on reads and writes alike.
FORMAT_OPTIONS = (
    "keyFormat", "valueFormat", "schemaRegistryUrl", "keySubject", "valueSubject", "keyAvroSchema", "valueAvroSchema",
)  # fmt: skip
# Spark's connector's source options, then kafkawire's own (maxRecordsPerPartition's default differs).
READ_OPTIONS = (
    "kafka.bootstrap.servers", "subscribe", "subscribePattern", "assign",
    "startingOffsets", "endingOffsets", "startingTimestamp", "endingTimestamp",
    "startingOffsetsByTimestamp", "endingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy",
    "failOnDataLoss", "kafkaConsumer.pollTimeoutMs", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs",
    "maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay", "minPartitions", "maxRecordsPerPartition",
    "includeHeaders", *FORMAT_OPTIONS,
)  # fmt: skip
# The connector's sink options, then kafkawire's (exactly-once, summaries, the test hook).
WRITE_OPTIONS = (
    "kafka.bootstrap.servers", "topic", "exactlyOnce", "transactionalIdPrefix", "exactlyOnceControlTopic",
    "summaryPath", "testFailFirstAttemptAfterRows", "autoRegisterSchemas", *FORMAT_OPTIONS,
)  # fmt: skip
# Spark hands a stream's sink the query's checkpointLocation and queryName options too.
STREAM_WRITE_OPTIONS = (*WRITE_OPTIONS, "checkpointLocation", "queryName")


class UnknownOptionError(ValueError):
    """An option the data source does not know (a typo, or another source's option)."""


def check_option_names(options: Mapping[str, str], known: Iterable[str], what: str) -> None:
    """Refuse any option not in ``known`` (nor ``kafka.*``/``schemaRegistry.*``), naming the nearest
    known name: an option silently ignored is a typo that reads from the wrong place."""
    names = {name.lower(): name for name in known}
    for key in options:
        lowered = key.lower()
        if lowered in names or lowered.startswith((KAFKA_PREFIX, REGISTRY_PREFIX)):
            continue
        near = difflib.get_close_matches(lowered, list(names), n=1, cutoff=0.6)
        hint = (
            f" Did you mean '{names[near[0]]}'?" if near else f" Known options: {', '.join(names.values())}, kafka.*."
        )
        raise UnknownOptionError(f"Unknown option '{key}' for a kafkawire {what}.{hint}")


def kafka_params(options: Mapping[str, str]) -> dict[str, str]:
    """Every ``kafka.*`` option, prefix stripped, as a client config (``kafka.acks`` -> ``acks``)."""
    return {
        key[len(KAFKA_PREFIX) :].lower(): value
        for key, value in options.items()
        if key.lower().startswith(KAFKA_PREFIX)
    }


def source_option(options: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """The data source's own option ``name`` (say ``startingOffsets``), looked up case-insensitively."""
    wanted = name.lower()
    for key, value in options.items():
        if key.lower() == wanted:
            return value
    return default


# Producer options Spark's connector refuses, with its reason (the writer hands Kafka bytes).
REJECTED_PRODUCER_OPTIONS = {
    "key.serializer": "Kafka option 'key.serializer' is not supported as keys are serialized with ByteArraySerializer.",
    "value.serializer": (
        "Kafka option 'value.serializer' is not supported as values are serialized with ByteArraySerializer."
    ),
}


# The writer's linger.ms when kafka.linger.ms (or its alias) is unset: see `write_linger_default`.
WRITE_LINGER_MS = "100"
LINGER_NAMES = ("linger.ms", "queue.buffering.max.ms")


def producer_params(options: Mapping[str, str]) -> dict[str, str]:
    """The producer config of a write: every ``kafka.*`` option, the connector's refusals applied,
    the Java producer's choices where the options leave them open (`java_producer_defaults`), and
    the writer's own linger (`write_linger_default`)."""
    params = kafka_params(options)
    for name, reason in REJECTED_PRODUCER_OPTIONS.items():
        if name in params:
            raise ValueError(reason)
    if not params.get("bootstrap.servers"):
        raise ValueError("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka producer")
    return write_linger_default(java_producer_defaults(params))


def write_linger_default(params: Mapping[str, str]) -> dict[str, str]:
    """``params`` with ``linger.ms`` at `WRITE_LINGER_MS` unless a linger option is given. A task's
    Arrow batch (10,000 rows) fills a produced batch and leaves a remainder; the next Arrow batch
    comes at the task's pace, tens of ms later, so at 5 ms the remainder leaves alone, a small
    request per Arrow batch (Kafka 2.3's broker pays per request; bench/PROFILE.md). Waiting longer
    lets the next Arrow batch top it up, and costs a task nothing at its end: its flush sends now."""
    out = dict(params)
    if not any(name in out for name in LINGER_NAMES):
        out["linger.ms"] = WRITE_LINGER_MS
    return out


def java_producer_defaults(params: Mapping[str, str]) -> dict[str, str]:
    """``params`` with the defaults of the Java producer Spark's connector writes with (kafka-clients
    3.x and 4.x) where librdkafka's, kafkawire's own, differ: keys placed by murmur2 (``murmur2_random``:
    a key lands where a Java writer of the same topic puts it) and idempotence on, unless ``acks`` is
    not all or ``retries`` is 0, which turn it off quietly in Java (an explicit setting is kept, and
    conflicts fail construction as in Java). acks=all, retries and the in-flight cap of 5 follow."""
    out = dict(params)
    out.setdefault("partitioner", "murmur2_random")
    if "enable.idempotence" not in out:
        acks = next((out[k] for k in ("acks", "request.required.acks") if k in out), "all")
        retries = next((out[k] for k in ("retries", "message.send.max.retries") if k in out), "1")
        if str(acks).strip().lower() in ("all", "-1") and str(retries).strip() != "0":
            out["enable.idempotence"] = "true"
    return out


def bool_option(options: Mapping[str, str], name: str, default: bool = False) -> bool:
    """A ``true``/``false`` option (any case); anything else is refused, naming the option."""
    raw = source_option(options, name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"option '{name}' must be true or false, not {raw!r}")
    return value == "true"
