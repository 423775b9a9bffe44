"""Options shared by the reader and the writer: Spark's connector's ``kafka.*`` convention.

Spark hands a Python data source its options in a case-insensitive dict whose keys arrive
lower-cased (``startingoffsets``). Kafka's own option names are lower-case already, so every
``kafka.<name>`` option passes to the client as ``<name>`` once the prefix is stripped.
"""

from __future__ import annotations

from collections.abc import Mapping

KAFKA_PREFIX = "kafka."


def kafka_params(options: Mapping[str, str]) -> dict[str, str]:
    """Every ``kafka.*`` option, prefix stripped, as a client config (``kafka.acks`` -> ``acks``)."""
    return {
        key[len(KAFKA_PREFIX):].lower(): value
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


def producer_params(options: Mapping[str, str]) -> dict[str, str]:
    """The producer config of a write: every ``kafka.*`` option, the connector's refusals applied."""
    params = kafka_params(options)
    for name, reason in REJECTED_PRODUCER_OPTIONS.items():
        if name in params:
            raise ValueError(reason)
    if not params.get("bootstrap.servers"):
        raise ValueError("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka producer")
    return params


def bool_option(options: Mapping[str, str], name: str, default: bool = False) -> bool:
    """A ``true``/``false`` option (any case); anything else is refused, naming the option."""
    raw = source_option(options, name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"option '{name}' must be true or false, not {raw!r}")
    return value == "true"
