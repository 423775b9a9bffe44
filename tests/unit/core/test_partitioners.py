"""Partitioners: the hashes against references, the sticky rule, and librdkafka's own choices.

The last section runs confluent-kafka against librdkafka's in-process mock cluster: for the same
keys, every deterministic partitioner must answer exactly the partition librdkafka chose, and
missing/empty keys must take the same path (hash, sticky or per-record random) as in librdkafka.
"""

from __future__ import annotations

import itertools
import random
import zlib
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise

import pytest
from confluent_kafka import Producer
from hypothesis import given
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as reference_murmur2  # type: ignore[import-untyped]

from kafkawire.core.partitioners import (
    BUILTIN_PARTITIONERS,
    DEFAULT_PARTITIONER,
    RANDOM,
    STICKY,
    InvalidPartitionError,
    StickyPartitioner,
    TimedStickyPartitioner,
    choose_partition,
    fnv1a,
    murmur2,
    partition_consistent,
    partition_consistent_random,
    partition_for_key,
    partition_murmur2,
    partition_murmur2_random,
    resolve_partitioner,
)
from tests.harness.judge import judge_config
from tests.harness.mock_cluster import MockCluster

# -- hashes ---------------------------------------------------------------------------------------


@given(st.binary(max_size=64))
def test_murmur2_matches_reference(data: bytes) -> None:
    assert murmur2(data) == reference_murmur2(data) & 0xFFFFFFFF


@given(st.binary(min_size=1, max_size=32), st.integers(1, 1000))
def test_partition_for_key_is_positive_murmur2_modulo_count(key: bytes, count: int) -> None:
    assert partition_for_key(key, count) == (reference_murmur2(key) & 0x7FFFFFFF) % count
    assert partition_murmur2(key, count) == partition_murmur2_random(key, count) == partition_for_key(key, count)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # Go's hash/fnv New32a, as a signed int32 made positive (Sarama's NewHashPartitioner).
        (b"kafka", 0x0D33C4E1),
        (b"giberish123456789", 0x77A58295),
        (b"1234", 0x023BDD03),
        (b"234", 0x2DEA3CD2),
        (b"34", 0x740FA83E),
        (b"4", 0x310CA263),
        (b"PreAmbleWillBeRemoved,ThePrePartThatIs", 0x65CBD69C),
        (b"", 0x7EE3623B),  # the offset basis 0x811C9DC5 is negative as int32
    ],
)
def test_fnv1a_is_librdkafkas_absolute_value(data: bytes, expected: int) -> None:
    assert fnv1a(data) == expected


def test_consistent_is_crc32_modulo_count() -> None:
    assert partition_consistent(b"123456789", 1000) == 0xCBF43926 % 1000  # the CRC-32 check value
    assert partition_consistent_random(b"123456789", 7) == zlib.crc32(b"123456789") % 7


# -- missing and empty keys (as measured on confluent-kafka; repeated against it below) ------------


@pytest.mark.parametrize("count", [1, 7, 100])
def test_missing_and_empty_keys_per_partitioner(count: int) -> None:
    got = {name: (fn(None, count), fn(b"", count)) for name, fn in BUILTIN_PARTITIONERS.items()}
    empty_murmur2 = (murmur2(b"") & 0x7FFFFFFF) % count
    empty_fnv1a = fnv1a(b"") % count
    assert got == {
        "random": (STICKY, RANDOM),
        "consistent": (0, 0),
        "consistent_random": (STICKY, STICKY),
        "murmur2": (empty_murmur2, empty_murmur2),
        "murmur2_random": (STICKY, empty_murmur2),
        "fnv1a": (empty_fnv1a, empty_fnv1a),
        "fnv1a_random": (STICKY, empty_fnv1a),
    }


def test_random_gives_keyed_records_their_own_random_partition() -> None:
    assert BUILTIN_PARTITIONERS["random"](b"k", 5) == RANDOM


@given(st.binary(min_size=1, max_size=40), st.integers(1, 500))
def test_partitions_are_in_range(key: bytes, count: int) -> None:
    for name, fn in BUILTIN_PARTITIONERS.items():
        if name != "random":
            assert 0 <= fn(key, count) < count


# -- resolve_partitioner --------------------------------------------------------------------------


def test_names_are_librdkafkas() -> None:
    assert set(BUILTIN_PARTITIONERS) == {
        "random",
        "consistent",
        "consistent_random",
        "murmur2",
        "murmur2_random",
        "fnv1a",
        "fnv1a_random",
    }
    assert DEFAULT_PARTITIONER in BUILTIN_PARTITIONERS
    for name, fn in BUILTIN_PARTITIONERS.items():
        assert resolve_partitioner(name) is fn


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="unknown partitioner 'Murmur2'") as info:
        resolve_partitioner("Murmur2")  # librdkafka compares names case-sensitively
    for name in BUILTIN_PARTITIONERS:
        assert name in str(info.value)


def test_builtin_function_passes_through_with_its_sentinels() -> None:
    resolved = resolve_partitioner(partition_murmur2_random)
    assert resolved is partition_murmur2_random
    assert resolved(None, 3) == STICKY


def test_user_callable_and_object() -> None:
    seen: list[tuple[bytes | None, int]] = []

    def last_partition(key: bytes | None, count: int) -> int:
        seen.append((key, count))
        return count - 1

    class ByLength:
        def partition(self, key: bytes | None, partition_count: int) -> int:
            return len(key or b"") % partition_count

    assert resolve_partitioner(last_partition)(b"k", 4) == 3
    assert seen == [(b"k", 4)]
    by_length = resolve_partitioner(ByLength())
    assert by_length(b"abcde", 3) == 2
    assert by_length(None, 3) == 0


class _Index:
    """An integer-like answer (as numpy's integers), accepted through ``__index__``."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_user_index_like_answer_is_accepted() -> None:
    partitioner = resolve_partitioner(lambda key, count: _Index(1))  # type: ignore[arg-type,return-value]
    assert partitioner(b"k", 2) == 1


@pytest.mark.parametrize("answer", [3, 4, -1, -2, 1.0, "1", None, True])
def test_user_answer_out_of_range_raises(answer: object) -> None:
    partitioner = resolve_partitioner(lambda key, count: answer)  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidPartitionError) as info:
        partitioner(b"k", 3)
    assert info.value.result == answer
    assert info.value.partition_count == 3


def test_user_exception_propagates_unchanged() -> None:
    def broken(key: bytes | None, count: int) -> int:
        raise KeyError("boom")

    with pytest.raises(KeyError):
        resolve_partitioner(broken)(b"k", 3)


def test_bad_specs_are_type_errors() -> None:
    class Custom:
        def partition(self, key: bytes | None, partition_count: int) -> int:
            return 0

    with pytest.raises(TypeError, match="pass an instance"):
        resolve_partitioner(Custom)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not int"):
        resolve_partitioner(3)  # type: ignore[arg-type]


# -- the sticky partitioner -----------------------------------------------------------------------


def _runs(partitions: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs as (partition, length)."""
    runs: list[tuple[int, int]] = []
    for p in partitions:
        if runs and runs[-1][0] == p:
            runs[-1] = (p, runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs


@pytest.mark.parametrize(
    ("record_bytes", "run_length"),
    [(100, 10), (300, 3), (999, 1), (1000, 1), (5000, 1)],
)
def test_sticky_moves_when_a_record_would_take_a_partition_past_batch_size(record_bytes: int, run_length: int) -> None:
    sticky = StickyPartitioner(batch_size=1000, rng=random.Random(1))
    chosen = [sticky.partition("t", 8, None, record_bytes) for _ in range(run_length * 50)]
    runs = _runs(chosen)
    assert [length for _, length in runs] == [run_length] * 50  # every move goes elsewhere


def test_sticky_state_is_per_topic() -> None:
    sticky = StickyPartitioner(batch_size=1000, rng=random.Random(2))
    first_a = sticky.partition("a", 8, None, 500)
    first_b = sticky.partition("b", 8, None, 500)
    assert sticky.partition("a", 8, None, 500) == first_a  # b's bytes did not count for a
    assert sticky.partition("b", 8, None, 500) == first_b
    assert sticky.partition("a", 8, None, 1) != first_a


def test_sticky_leaves_a_partition_that_lost_its_leader_at_once() -> None:
    sticky = StickyPartitioner(batch_size=10**9, rng=random.Random(3))
    current = sticky.partition("t", 6, None, 10)
    others = [p for p in range(6) if p != current]
    moved = sticky.partition("t", 6, others, 10)
    assert moved in others
    assert sticky.partition("t", 6, None, 10) == moved  # and sticks to the new one


def test_sticky_chooses_only_available_partitions() -> None:
    sticky = StickyPartitioner(batch_size=1, rng=random.Random(4))
    chosen = {sticky.partition("t", 10, (7, 2, 5), 1) for _ in range(300)}
    assert chosen == {2, 5, 7}


@pytest.mark.parametrize("available", [None, ()])
def test_sticky_without_availability_uses_all_partitions(available: tuple[int, ...] | None) -> None:
    sticky = StickyPartitioner(batch_size=1, rng=random.Random(5))
    assert {sticky.partition("t", 6, available, 1) for _ in range(300)} == set(range(6))


def test_sticky_with_one_choice_stays() -> None:
    sticky = StickyPartitioner(batch_size=1, rng=random.Random(6))
    assert {sticky.partition("t", 1, None, 10) for _ in range(20)} == {0}
    assert {sticky.partition("u", 5, [3], 10) for _ in range(20)} == {3}


def test_sticky_repicks_when_the_partition_count_no_longer_covers_it() -> None:
    sticky = StickyPartitioner(batch_size=10**9, rng=random.Random(7))
    assert sticky.partition("t", 10, [8], 0) == 8
    assert sticky.partition("t", 5, None, 0) < 5


def test_sticky_is_deterministic_under_a_seed() -> None:
    def sequence(seed: int) -> list[int]:
        sticky = StickyPartitioner(batch_size=500, rng=random.Random(seed))
        return [sticky.partition("t", 12, None, 100) for _ in range(500)]

    assert sequence(42) == sequence(42)
    assert sequence(42) != sequence(43)


def test_sticky_moves_are_uniform() -> None:
    sticky = StickyPartitioner(batch_size=1, rng=random.Random(8))
    chosen = [sticky.partition("t", 5, None, 1) for _ in range(50_001)]
    counts = Counter(chosen)
    assert set(counts) == set(range(5))
    assert all(9_500 < c < 10_500 for c in counts.values()), counts
    moves = Counter(pairwise(chosen))
    assert all(a != b for a, b in moves)
    assert len(moves) == 20  # every other partition is reachable from every partition
    assert all(2_200 < c < 2_800 for c in moves.values()), moves


def test_random_partition_is_per_record_among_available() -> None:
    sticky = StickyPartitioner(batch_size=10**9, rng=random.Random(9))
    counts = Counter(sticky.random_partition(10, [1, 4, 8]) for _ in range(30_000))
    assert set(counts) == {1, 4, 8}
    assert all(9_500 < c < 10_500 for c in counts.values()), counts
    assert len({sticky.random_partition(4, None) for _ in range(100)}) == 4


def test_sticky_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        StickyPartitioner(batch_size=0, rng=random.Random())
    sticky = StickyPartitioner(batch_size=10, rng=random.Random())
    with pytest.raises(ValueError):
        sticky.partition("t", 0, None, 1)
    with pytest.raises(ValueError):
        sticky.random_partition(0, None)


# -- choose_partition -----------------------------------------------------------------------------


def test_choose_hashes_keys_and_sends_keyless_records_sticky() -> None:
    sticky = StickyPartitioner(batch_size=300, rng=random.Random(10))
    murmur = resolve_partitioner("murmur2_random")
    keyless = [choose_partition(murmur, sticky, "t", None, 16, None, 100) for _ in range(2)]
    for i in range(50):  # keyed records neither move nor fill the sticky partition
        key = b"key-%d" % i
        assert choose_partition(murmur, sticky, "t", key, 16, None, 100) == partition_for_key(key, 16)
    keyless += [choose_partition(murmur, sticky, "t", None, 16, None, 100) for _ in range(4)]
    assert [length for _, length in _runs(keyless)] == [3, 3]


def test_choose_random_spreads_keyed_records_while_keyless_ones_stick() -> None:
    sticky = StickyPartitioner(batch_size=10**9, rng=random.Random(11))
    rnd = resolve_partitioner("random")
    keyed = {choose_partition(rnd, sticky, "t", b"k", 8, None, 10) for _ in range(200)}
    keyless = {choose_partition(rnd, sticky, "t", None, 8, None, 10) for _ in range(200)}
    assert keyed == set(range(8))
    assert len(keyless) == 1


def test_choose_surfaces_bad_user_answers() -> None:
    sticky = StickyPartitioner(batch_size=100, rng=random.Random(12))
    with pytest.raises(InvalidPartitionError):
        choose_partition(resolve_partitioner(lambda key, count: -1), sticky, "t", None, 4, None, 1)


# -- against librdkafka (confluent-kafka on the mock cluster) -------------------------------------

COUNTS = (1, 2, 3, 7, 16, 100)
KEYED = ("murmur2_random", "murmur2", "consistent", "consistent_random", "fnv1a", "fnv1a_random")


@pytest.fixture(scope="module")
def mock_topics() -> Iterator[tuple[str, dict[int, str]]]:
    """One mock broker with a topic per partition count: (bootstrap, {count: topic})."""
    with MockCluster(broker_count=1) as cluster:
        topics = {count: f"partitioners-{count}" for count in COUNTS}
        for count, topic in topics.items():
            cluster.create_topic(topic, partitions=count)
        yield cluster.bootstraps, topics


def _confluent_partitions(
    bootstrap: str,
    partitioner: str,
    keys_by_topic: dict[str, list[bytes | None]],
    sticky_linger_ms: int,
) -> dict[str, list[int]]:
    """Produce every key with confluent-kafka (one flush); the partitions it chose, in key order."""
    chosen = {topic: [-1] * len(keys) for topic, keys in keys_by_topic.items()}
    failures: list[object] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            failures.append(err)
        else:
            chosen[msg.topic()][int(msg.value())] = msg.partition()  # type: ignore[attr-defined]

    conf = {
        "partitioner": partitioner,
        "sticky.partitioning.linger.ms": sticky_linger_ms,
        "linger.ms": 20,
        "acks": 1,
    }
    producer = Producer(judge_config(bootstrap, **conf))
    for topic in keys_by_topic:  # learn leaders first: librdkafka re-partitions queued records at random
        producer.produce(topic, b"warm-up", key=b"warm-up")
    assert producer.flush(30) == 0
    for topic, keys in keys_by_topic.items():
        for index, key in enumerate(keys):
            producer.produce(topic, str(index).encode(), key=key, on_delivery=on_delivery)
    assert producer.flush(30) == 0
    assert failures == []
    return chosen


@pytest.mark.broker
@pytest.mark.parametrize("name", KEYED)
def test_keyed_partitions_equal_librdkafkas(name: str, mock_topics: tuple[str, dict[int, str]]) -> None:
    bootstrap, topics = mock_topics
    rng = random.Random(2024)
    keys: list[bytes | None] = [rng.randbytes(rng.randint(1, 48)) for _ in range(10_000)]
    chosen = _confluent_partitions(bootstrap, name, {topics[n]: keys for n in COUNTS}, sticky_linger_ms=10)
    partitioner = BUILTIN_PARTITIONERS[name]
    for count in COUNTS:
        ours = [partitioner(key, count) for key in keys]
        mismatches = [i for i, (a, b) in enumerate(zip(ours, chosen[topics[count]], strict=True)) if a != b]
        assert not mismatches, (
            f"{name}, {count} partitions: {len(mismatches)} differ, first key {keys[mismatches[0]]!r}"
        )


@pytest.mark.broker
@pytest.mark.parametrize("name", list(BUILTIN_PARTITIONERS))
def test_missing_and_empty_keys_take_librdkafkas_path(name: str, mock_topics: tuple[str, dict[int, str]]) -> None:
    """A number must be librdkafka's partition; STICKY records share one partition; RANDOM ones spread.

    librdkafka's sticky partition only moves after ``sticky.partitioning.linger.ms``; at a minute
    every STICKY record of a topic must land on the same partition.
    """
    bootstrap, topics = mock_topics
    keys: list[bytes | None] = [None, b""] * 64
    counts = (1, 7, 16, 100)
    chosen = _confluent_partitions(bootstrap, name, {topics[n]: keys for n in counts}, sticky_linger_ms=60_000)
    partitioner = BUILTIN_PARTITIONERS[name]
    for count in counts:
        sticky_group: set[int] = set()
        for key in (None, b""):
            theirs = {p for k, p in zip(keys, chosen[topics[count]], strict=True) if k == key}
            ours = partitioner(key, count)
            if ours == STICKY:
                sticky_group |= theirs
            elif ours == RANDOM:
                assert len(theirs) > 1 or count == 1, (name, count, key, theirs)
            else:
                assert theirs == {ours}, (name, count, key)
        assert len(sticky_group) <= 1, (name, count, sticky_group)


def test_a_sticky_linger_moves_keyless_records_on_after_that_long() -> None:
    """librdkafka's timer, on top of the byte rule (the base class's alone: time never moves it)."""
    sticky = TimedStickyPartitioner(batch_size=10**9, linger=0.010, rng=random.Random(6))
    first = sticky.partition("t", 8, None, 10, now=100.0)
    assert sticky.partition("t", 8, None, 10, now=100.009) == first
    moved = sticky.partition("t", 8, None, 10, now=100.010)
    assert moved != first
    assert sticky.partition("t", 8, None, 10, now=100.019) == moved
    assert sticky.topics["t"].until == 100.010 + 0.010  # the time the C lane compares with
    bytes_only = StickyPartitioner(batch_size=10**9, rng=random.Random(6))
    kept = bytes_only.partition("t", 8, None, 10, now=0.0)
    assert bytes_only.partition("t", 8, None, 10, now=1e6) == kept


def test_records_placed_as_metadata_arrives_are_redrawn_one_by_one() -> None:
    """librdkafka's unassigned records: each keyless one redrawn (no partition served yet), keyed
    ones hashed as ever; the last drawn is sticky from then on, with the timer started then."""
    sticky = TimedStickyPartitioner(batch_size=10**9, linger=0.010, rng=random.Random(8))
    placed = [
        choose_partition(partition_consistent_random, sticky, "t", None, 3, None, 10, 50.0, served=False)
        for _ in range(60)
    ]
    assert set(placed) == {0, 1, 2}
    assert sum(a == b for a, b in itertools.pairwise(placed)) < 40  # drawn anew, not stuck
    assert sticky.topics["t"].until == 50.010
    assert sticky.topics["t"].produced == 10
    assert choose_partition(partition_consistent_random, sticky, "t", None, 3, None, 10, 50.005) == placed[-1]
    assert choose_partition(partition_consistent_random, sticky, "t", b"k", 3, None, 10, 50.0, served=False) == (
        partition_consistent(b"k", 3)
    )


def test_a_sticky_linger_of_zero_turns_stickiness_off() -> None:
    sticky = TimedStickyPartitioner(batch_size=10**9, linger=0.0, rng=random.Random(7))
    chosen = [sticky.partition("t", 4, None, 1, now=5.0) for _ in range(200)]
    assert set(chosen) == {0, 1, 2, 3}
    assert sum(a == b for a, b in itertools.pairwise(chosen)) < 120  # not runs: each record drawn anew


def test_sticky_linger_is_twice_linger_ms_unless_set() -> None:
    """librdkafka's rule, from linger.ms as given (before message.timeout.ms shortens it)."""
    from kafkawire.producer.producer_config import parse_producer_config

    assert parse_producer_config({}).sticky_linger_ms == 10
    assert parse_producer_config({"linger.ms": 0}).sticky_linger_ms == 0
    assert parse_producer_config({"linger.ms": 7.6}).sticky_linger_ms == 15
    assert parse_producer_config({"linger.ms": 600_000, "message.timeout.ms": 0}).sticky_linger_ms == 900_000
    assert parse_producer_config({"message.timeout.ms": 4}).sticky_linger_ms == 10  # linger.ms 3.9 then
    assert parse_producer_config({"sticky.partitioning.linger.ms": 0}).sticky_linger_ms == 0
    assert parse_producer_config({"sticky.partitioning.linger.ms": "25"}).sticky_linger_ms == 25
