"""The cluster scenarios give both clients' groups one coordinator by picking group ids of one
__consumer_offsets partition (tests/harness/cluster_scenarios.py `offsets_partition`): the pick
must be Kafka's, ``Utils.abs(groupId.hashCode) % partitions``, or the two groups can have different
coordinators and a fault on one coordinator meets one client only (issue 53: the group cut from a
leader read 2,278 records again on one client and none on the other)."""

from __future__ import annotations

from tests.harness.cluster_scenarios import offsets_partition


def test_partitions_of_ids_whose_hash_code_is_negative_are_kafkas() -> None:
    # both hash codes are negative; 12 and 30 are what Kafka's formula gives for 50 partitions
    # (Utils.abs: the absolute value; the low 31 bits would give 36 and 18)
    assert offsets_partition("my-group", 50) == 12
    assert offsets_partition("kafka-txn-0", 50) == 30


def test_the_minimum_hash_code_goes_to_partition_zero() -> None:
    # Utils.abs(Integer.MIN_VALUE) is 0; "polygenelubricants".hashCode() == Integer.MIN_VALUE
    assert offsets_partition("polygenelubricants", 7) == 0
