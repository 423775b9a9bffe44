"""murmur2 equals the reference implementation kafka-python ships (the Java client's algorithm)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as reference_murmur2

from kafkawire.core.partitioning import murmur2, partition_for_key


@given(st.binary(max_size=64))
def test_murmur2_matches_reference(data: bytes) -> None:
    assert murmur2(data) == reference_murmur2(data) & 0xFFFFFFFF


@given(st.binary(min_size=1, max_size=32), st.integers(1, 1000))
def test_partition_is_positive_hash_modulo_count(key: bytes, count: int) -> None:
    assert partition_for_key(key, count) == (reference_murmur2(key) & 0x7FFFFFFF) % count
