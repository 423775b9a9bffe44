"""Choosing a record's partition: librdkafka's named partitioners, user partitioners, the sticky one.

Every partitioner here has one shape, ``(key, partition_count) -> int``, and answers either a
partition or one of two sentinels that hand the choice to :class:`StickyPartitioner`, which owns
the randomness (so the hash functions stay pure and the whole choice is reproducible under a
seeded ``random.Random``):

* :data:`STICKY` -- librdkafka sends this record through its sticky partitioner (a keyless record
  under ``random`` and the ``*_random`` flavours; also an empty key under ``consistent_random``).
* :data:`RANDOM` -- a fresh random partition for this record alone (librdkafka's ``random``
  partitioner applied to a record that has a key, even an empty one).

:func:`choose_partition` is the one call a producer needs. Which keys take which path was measured
on confluent-kafka (librdkafka 2.x); the tests repeat that measurement on librdkafka's mock cluster:

===================  ===================  ===================  ======================
partitioner          key ``None``         key ``b""``          other keys
===================  ===================  ===================  ======================
random               STICKY               RANDOM               RANDOM
consistent           0 (CRC-32 of b"")    0                    CRC-32 % n
consistent_random    STICKY               STICKY               CRC-32 % n
murmur2              murmur2(b"") % n     murmur2(b"") % n     positive murmur2 % n
murmur2_random       STICKY               murmur2(b"") % n     positive murmur2 % n
fnv1a                fnv1a(b"") % n       fnv1a(b"") % n       fnv1a % n
fnv1a_random         STICKY               fnv1a(b"") % n       fnv1a % n
===================  ===================  ===================  ======================
"""

from __future__ import annotations

import functools
import math
import operator
import random
import struct
import zlib
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Final, Protocol, SupportsIndex

__all__ = [
    "BUILTIN_PARTITIONERS",
    "DEFAULT_PARTITIONER",
    "KEY_HASHES",
    "KEY_HASH_CRC32",
    "KEY_HASH_MURMUR2",
    "KEY_HASH_NONE",
    "RANDOM",
    "STICKY",
    "InvalidPartitionError",
    "Partitioner",
    "PartitionerObject",
    "PartitionerSpec",
    "StickyPartitioner",
    "choose_partition",
    "fnv1a",
    "murmur2",
    "partition_consistent",
    "partition_consistent_random",
    "partition_fnv1a",
    "partition_fnv1a_random",
    "partition_for_key",
    "partition_murmur2",
    "partition_murmur2_random",
    "partition_random",
    "resolve_partitioner",
]

Partitioner = Callable[[bytes | None, int], int]
"""``(key, partition_count) -> partition``, or :data:`STICKY` / :data:`RANDOM` for built-ins."""

STICKY: Final = -1
"""Let the sticky partitioner place this record (librdkafka's ``RD_KAFKA_PARTITION_UA`` value)."""

RANDOM: Final = -2
"""Place this record alone on a uniformly random partition."""

DEFAULT_PARTITIONER: Final = "consistent_random"
"""The default ``partitioner``, librdkafka's: a key lands on the partition confluent-kafka puts it on.
Where the peer is the Java client (the Spark data source), ``murmur2_random`` is set explicitly."""

_MASK = 0xFFFFFFFF


# -- hashes --------------------------------------------------------------------------------------

_M = 0x5BD1E995
_SEED = 0x9747B28C


@functools.lru_cache(maxsize=256)
def _words(count: int) -> struct.Struct:
    """The little-endian layout of ``count`` unsigned 32-bit words (keys are mostly short)."""
    return struct.Struct(f"<{count}I")


def murmur2(data: bytes) -> int:
    """MurmurHash2 (32-bit) as Kafka's ``Utils.murmur2``, returned as an unsigned int.

    The Java client and librdkafka's ``murmur2*`` partitioners use it, so the same key lands on
    the same partition whichever of them wrote it.
    """
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - (length & 3)
    # All whole 4-byte words in one unpack (one C call), not a slice and from_bytes per word.
    for k in _words(whole >> 2).unpack_from(data):
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


_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a(data: bytes) -> int:
    """32-bit FNV-1a as librdkafka computes it: the absolute value of the signed hash.

    librdkafka takes the absolute value to match Sarama's (Go) default hash partitioner. The one
    hash without a positive counterpart, ``INT32_MIN``, stays ``0x80000000`` as in C.
    """
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    if h & 0x80000000:
        h = -h & _MASK
    return h


def partition_for_key(key: bytes, partition_count: int) -> int:
    """The Java client's choice for a keyed record: the positive murmur2 hash modulo the count."""
    return (murmur2(key) & 0x7FFFFFFF) % partition_count


# -- librdkafka's partitioners -------------------------------------------------------------------
# Each expects partition_count >= 1 (a producer has no partition to choose before metadata).


def partition_random(key: bytes | None, partition_count: int) -> int:
    """``random``: keyless records go sticky, records with any key to a random partition each."""
    return STICKY if key is None else RANDOM


def partition_consistent(key: bytes | None, partition_count: int) -> int:
    """``consistent``: CRC-32 of the key; ``None`` and ``b""`` both hash to 0, hence partition 0."""
    return zlib.crc32(key or b"") % partition_count


def partition_consistent_random(key: bytes | None, partition_count: int) -> int:
    """``consistent_random``: CRC-32, but librdkafka treats an empty key like a missing one."""
    if not key:
        return STICKY
    return zlib.crc32(key) % partition_count


def partition_murmur2(key: bytes | None, partition_count: int) -> int:
    """``murmur2``: Java-compatible; ``None`` hashes like ``b""`` (no random path at all)."""
    return (murmur2(key or b"") & 0x7FFFFFFF) % partition_count


def partition_murmur2_random(key: bytes | None, partition_count: int) -> int:
    """``murmur2_random``: the Java client's rule; only ``None`` is keyless, ``b""`` is hashed."""
    if key is None:
        return STICKY
    return (murmur2(key) & 0x7FFFFFFF) % partition_count


def partition_fnv1a(key: bytes | None, partition_count: int) -> int:
    """``fnv1a``: Sarama-compatible FNV-1a; ``None`` hashes like ``b""``."""
    return fnv1a(key or b"") % partition_count


def partition_fnv1a_random(key: bytes | None, partition_count: int) -> int:
    """``fnv1a_random``: FNV-1a; only ``None`` is keyless, ``b""`` is hashed."""
    if key is None:
        return STICKY
    return fnv1a(key) % partition_count


BUILTIN_PARTITIONERS: Final[Mapping[str, Partitioner]] = MappingProxyType(
    {
        "random": partition_random,
        "consistent": partition_consistent,
        "consistent_random": partition_consistent_random,
        "murmur2": partition_murmur2,
        "murmur2_random": partition_murmur2_random,
        "fnv1a": partition_fnv1a,
        "fnv1a_random": partition_fnv1a_random,
    }
)
"""librdkafka's ``partitioner`` values (case-sensitive, as librdkafka compares them)."""

KEYLESS_STICKY: Final[frozenset[Partitioner]] = frozenset(
    {partition_random, partition_consistent_random, partition_murmur2_random, partition_fnv1a_random}
)
"""The built-in partitioners that answer ``STICKY`` for every record without a key: for those the
producer asks the sticky partitioner directly (one call less per keyless record)."""


KEY_HASH_NONE: Final = 0
KEY_HASH_MURMUR2: Final = 1
KEY_HASH_CRC32: Final = 2

KEY_HASHES: Final[Mapping[Partitioner, int]] = MappingProxyType(
    {
        partition_murmur2: KEY_HASH_MURMUR2,
        partition_murmur2_random: KEY_HASH_MURMUR2,
        partition_consistent_random: KEY_HASH_CRC32,
    }
)
"""The built-in partitioners whose answer for a ``bytes`` key the producer's C path computes itself
(the codes are ``native_c/produce_lane.c``'s): murmur2's for any key, consistent_random's for a non-empty key.
Every other answer (a ``None`` key, consistent_random's empty key, other partitioners) stays here."""


class KeyedPartitions:
    """Each key's partition under a built-in partitioner, remembered per topic and partition count.

    A built-in partitioner's answer for a key is a pure function of the key and the count, and
    keys repeat (customers, devices, orders): hashing each key once instead of once per record
    matters, murmur2 being a Python loop. Sentinels (``STICKY``, ``RANDOM``) are not remembered:
    the caller resolves them each time. At most ``limit`` keys are kept; later ones are hashed.
    """

    def __init__(self, partitioner: Partitioner, limit: int = 100_000) -> None:
        self._partitioner = partitioner
        self.key_hash = KEY_HASHES.get(partitioner, KEY_HASH_NONE)  # for the C path: see KEY_HASHES
        self._limit = limit
        self._kept = 0
        self._maps: dict[tuple[str, int], dict[bytes, int]] = {}

    @property
    def maps(self) -> dict[tuple[str, int], dict[bytes, int]]:
        """Every remembered key's partition per (topic, partition count), read-only for the caller
        (the producer's C path looks keys up here, and leaves a miss to `partition`)."""
        return self._maps

    def known(self, topic: str, partition_count: int) -> dict[bytes, int]:
        """The keys remembered for ``topic`` with ``partition_count`` partitions (read-only for the
        caller: the bulk paths look keys up here first, once per slice of records)."""
        known = self._maps.get((topic, partition_count))
        if known is None:
            known = self._maps[(topic, partition_count)] = {}
        return known

    def partition(self, topic: str, key: bytes, partition_count: int) -> int:
        """The partition for ``key`` (``>= 0``), or the partitioner's sentinel."""
        known = self.known(topic, partition_count)
        chosen = known.get(key)
        if chosen is None:
            chosen = self._partitioner(key, partition_count)
            if chosen >= 0 and self._kept < self._limit:
                known[key] = chosen
                self._kept += 1
        return chosen


# -- user partitioners ---------------------------------------------------------------------------


class PartitionerObject(Protocol):
    """A user partitioner given as an object, as the Java client's ``Partitioner`` interface."""

    def partition(self, key: bytes | None, partition_count: int) -> int: ...


PartitionerSpec = str | Callable[[bytes | None, int], int] | PartitionerObject


class InvalidPartitionError(ValueError):
    """A user partitioner answered something that is not a partition of the topic.

    The producer fails that record with ``_UNKNOWN_PARTITION`` (as librdkafka does for a partition
    beyond the count), keeping this message; exceptions raised by the user code itself are not
    wrapped and propagate unchanged.
    """

    def __init__(self, result: object, partition_count: int) -> None:
        super().__init__(
            f"partitioner returned {result!r}, not a partition of a topic with {partition_count} partition(s)"
        )
        self.result = result
        self.partition_count = partition_count


def _checked(user: Callable[[bytes | None, int], object]) -> Partitioner:
    """Wrap user code so that any answer outside ``range(partition_count)`` raises.

    The check also keeps user answers from colliding with the STICKY/RANDOM sentinels.
    """

    def partition(key: bytes | None, partition_count: int) -> int:
        result = user(key, partition_count)
        if isinstance(result, SupportsIndex) and not isinstance(result, bool):
            value = operator.index(result)  # also numpy integers; floats have no __index__
            if 0 <= value < partition_count:
                return value
        raise InvalidPartitionError(result, partition_count)

    return partition


def resolve_partitioner(spec: PartitionerSpec) -> Partitioner:
    """Turn a ``partitioner`` setting into the one internal form.

    ``spec`` is a librdkafka name, a callable ``(key, partition_count) -> int``, or an object with
    such a ``partition`` method. User code is wrapped so that an out-of-range answer raises
    :class:`InvalidPartitionError` when called. Unknown names raise ``ValueError`` listing the
    valid ones; other types raise ``TypeError`` (the config layer turns both into its own error).
    """
    if isinstance(spec, str):
        named = BUILTIN_PARTITIONERS.get(spec)
        if named is None:
            names = ", ".join(BUILTIN_PARTITIONERS)
            raise ValueError(f"unknown partitioner {spec!r}: expected one of {names}, or a callable")
        return named
    for builtin in BUILTIN_PARTITIONERS.values():
        if spec is builtin:
            return builtin  # one of our own: trusted, and its sentinels must pass through
    if isinstance(spec, type):
        raise TypeError(f"partitioner {spec.__name__} is a class; pass an instance")
    method = getattr(spec, "partition", None)
    if callable(method):
        return _checked(method)
    if callable(spec):
        return _checked(spec)
    raise TypeError(
        f"partitioner must be a name, a callable (key, partition_count) or an object with a partition method, "
        f"not {type(spec).__name__}"
    )


# -- keyless records -----------------------------------------------------------------------------


class _Stick:
    __slots__ = ("partition", "produced", "until")

    def __init__(self) -> None:
        self.partition = -1
        self.produced = 0
        self.until = math.inf  # when the timer moves the partition on (TimedStickyPartitioner)


class StickyPartitioner:
    """Uniform sticky partitioning of keyless records (KIP-480, KIP-794).

    Per topic, records stick to one partition so they fill one batch instead of many small ones.
    A record that would take the bytes gone to the current partition past ``batch_size`` moves to
    another one, uniformly at random among the available partitions (never the same one if there
    are others). A current partition that loses its leader is left at once. The producer counts
    each record as its batch does and passes the room a batch has after its header, so the
    partition moves on exactly when its batch is full: no batch of a few records left behind.

    This is KIP-794's byte rule without its adaptive part: Java also weighs partitions by queue
    length and avoids slow brokers; librdkafka instead switches on a timer
    (``sticky.partitioning.linger.ms``: `TimedStickyPartitioner`, when it is set). Not thread-safe:
    the producer calls it under its lock.
    """

    def __init__(self, batch_size: int, rng: random.Random | None = None) -> None:
        """``rng`` makes the choices reproducible (tests); by default a fresh ``random.Random()``."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self._batch_size = batch_size
        self._rng = rng if rng is not None else random.Random()
        self._topics: dict[str, _Stick] = {}

    @property
    def topics(self) -> dict[str, _Stick]:
        """Per topic: the current partition and the bytes gone to it. The producer's C path reads
        it and counts a record's bytes while the partition stays; moving on is left to `partition`."""
        return self._topics

    def partition(
        self,
        topic: str,
        partition_count: int,
        available: Sequence[int] | None,
        record_bytes: int,
        now: float = 0.0,
    ) -> int:
        """The partition for the next keyless record of ``topic``, counting its ``record_bytes``.

        ``available`` lists the partitions that have a leader; ``None`` or empty means all of them.
        ``record_bytes`` is the record's size as its batch counts it; ``now`` is for
        `TimedStickyPartitioner`.
        """
        if partition_count < 1:
            raise ValueError(f"partition_count must be at least 1, not {partition_count}")
        stick = self._topics.get(topic)
        if stick is None:
            stick = self._topics[topic] = _Stick()
        current = stick.partition
        if (
            current < 0
            or current >= partition_count
            or (stick.produced and stick.produced + record_bytes > self._batch_size)
            or (available and current not in available)
        ):
            current = stick.partition = self._pick(partition_count, available, avoid=current)
            stick.produced = 0
        stick.produced += record_bytes
        return current

    def redraw(self, topic: str, partition_count: int, record_bytes: int, now: float = 0.0) -> int:
        """The partition for a keyless record placed as its topic's first metadata arrives. No
        partition has a leader broker serving it yet, so, as librdkafka's sticky partitioner finds
        its partition unavailable then, each such record gets a new random one (the same may come
        again); the last drawn is the sticky partition from ``now`` on."""
        if partition_count < 1:
            raise ValueError(f"partition_count must be at least 1, not {partition_count}")
        stick = self._topics.get(topic)
        if stick is None:
            stick = self._topics[topic] = _Stick()
        stick.partition = self._pick(partition_count, None, avoid=-1)
        stick.produced = record_bytes
        return stick.partition

    def random_partition(self, partition_count: int, available: Sequence[int] | None) -> int:
        """A uniformly random available partition, for :data:`RANDOM` records.

        librdkafka draws among all partitions and redraws once if the first has no leader; drawing
        among the available ones only never sends a record to a leaderless partition.
        """
        if partition_count < 1:
            raise ValueError(f"partition_count must be at least 1, not {partition_count}")
        return self._pick(partition_count, available, avoid=-1)

    def _pick(self, partition_count: int, available: Sequence[int] | None, avoid: int) -> int:
        candidates: Sequence[int] = range(partition_count)
        if available:
            usable = sorted({p for p in available if 0 <= p < partition_count})
            if usable:
                candidates = usable  # sorted, so the draw does not depend on the caller's order
        count = len(candidates)
        if count == 1:
            return candidates[0]  # (one partition: nothing to draw)
        if avoid in candidates:
            index = self._rng.randrange(count - 1)
            if index >= candidates.index(avoid):
                index += 1  # skip the partition being left
            return candidates[index]
        return candidates[self._rng.randrange(count)]


class TimedStickyPartitioner(StickyPartitioner):
    """librdkafka's timer (``sticky.partitioning.linger.ms``, ``linger`` in seconds; by default twice
    ``linger.ms``), the producer's sticky partitioner: keyless records leave their partition once
    ``linger`` has passed since it was chosen (the caller passes ``now``), or when its batch is full
    as in the base class (librdkafka starts another batch on the same partition; either way the
    partition is a random one). A ``linger`` of 0 turns stickiness off, each record to a random
    partition. The time to move on is kept in the state (``until``) that the C lane reads too."""

    def __init__(self, batch_size: int, linger: float, rng: random.Random | None = None) -> None:
        super().__init__(batch_size, rng)
        self._linger = linger

    def partition(
        self,
        topic: str,
        partition_count: int,
        available: Sequence[int] | None,
        record_bytes: int,
        now: float = 0.0,
    ) -> int:
        if not self._linger:
            return self.random_partition(partition_count, available)
        stick = self._topics.get(topic)
        before = -1 if stick is None else stick.partition
        due = stick is not None and now >= stick.until
        if due and stick is not None:
            stick.produced = self._batch_size + 1  # time is up: past any batch, the byte rule moves it on
        chosen = super().partition(topic, partition_count, available, record_bytes)
        if due or chosen != before:
            self._topics[topic].until = now + self._linger
        return chosen

    def redraw(self, topic: str, partition_count: int, record_bytes: int, now: float = 0.0) -> int:
        chosen = super().redraw(topic, partition_count, record_bytes, now)
        self._topics[topic].until = now + self._linger
        return chosen


def choose_partition(
    partitioner: Partitioner,
    sticky: StickyPartitioner,
    topic: str,
    key: bytes | None,
    partition_count: int,
    available: Sequence[int] | None,
    record_bytes: int,
    now: float = 0.0,
    *,
    served: bool = True,
) -> int:
    """The partition for one record: ``partitioner`` decides, the sentinels defer to ``sticky``.
    ``served=False``: the topic's partitions were just learned, none served by its leader yet
    (`StickyPartitioner.redraw`).

    ``partitioner`` must come from :func:`resolve_partitioner`; user code's bad answers then raise
    :class:`InvalidPartitionError` (the producer fails that record with ``_UNKNOWN_PARTITION``).
    """
    chosen = partitioner(key, partition_count)
    if chosen >= 0:
        return chosen
    if chosen == STICKY:
        if not served:
            return sticky.redraw(topic, partition_count, record_bytes, now)
        return sticky.partition(topic, partition_count, available, record_bytes, now)
    return sticky.random_partition(partition_count, available)
