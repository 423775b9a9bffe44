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
