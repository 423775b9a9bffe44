"""``libversion()``: the librdkafka release kafkawire follows, as confluent-kafka reports its own."""

from __future__ import annotations

from .librdkafka_properties import LIBRDKAFKA_VERSION


def libversion() -> tuple[str, int]:
    """``(version, number)`` in librdkafka's encoding 0xMMmmrrxx, of the librdkafka release whose
    behaviour and properties kafkawire follows: libraries gate features on it (wunderkafka picks
    its configuration fields by it), so it reads as that release, not as kafkawire's own version."""
    major, minor, patch = (int(part) for part in LIBRDKAFKA_VERSION.split(".")[:3])
    return LIBRDKAFKA_VERSION, (major << 24) | (minor << 16) | (patch << 8) | 0xFF
