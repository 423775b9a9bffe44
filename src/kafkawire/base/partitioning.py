"""confluent-kafka's top-level ``murmur2``, ``consistent`` and ``fnv1a``: the built-in keyed
partitioners as functions of (key, partition_count), with librdkafka's input checks, for
applications that compute a record's partition themselves."""

from __future__ import annotations

import operator
from collections.abc import Callable

from ..core import partitioners


def _checked(hashing: Callable[[bytes | None, int], int]) -> Callable[[bytes, int], int]:
    def partition(key: bytes, partition_count: int, /) -> int:  # positional only, as confluent-kafka's
        if not isinstance(key, bytes):
            raise TypeError(f"a bytes-like object is required, not '{type(key).__name__}'")
        count = operator.index(partition_count)
        if count <= 0:
            raise ValueError(f"partition_count must be > 0, got {count}")
        return hashing(key, count)

    return partition


murmur2 = _checked(partitioners.partition_murmur2)
murmur2.__doc__ = "The Java client's partition for ``key``: positive murmur2 hash modulo ``partition_count``."
consistent = _checked(partitioners.partition_consistent)
consistent.__doc__ = "librdkafka's ``consistent`` partition: CRC-32 of ``key`` modulo ``partition_count``."
fnv1a = _checked(partitioners.partition_fnv1a)
fnv1a.__doc__ = "Sarama's partition for ``key``: FNV-1a hash modulo ``partition_count``."
