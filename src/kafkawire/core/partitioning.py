"""Key hashing shared with the Java client and librdkafka's ``murmur2_random``: same key, same partition."""

from __future__ import annotations

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """MurmurHash2 (32-bit) as Kafka's ``Utils.murmur2``, returned as an unsigned int."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - (length & 3)
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length & 3
    if tail == 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def partition_for_key(key: bytes, partition_count: int) -> int:
    """Kafka's default choice for a keyed record: the positive murmur2 hash modulo the count."""
    return (murmur2(key) & 0x7FFFFFFF) % partition_count
