"""The assignors: Java's documented assignments for range and roundrobin, and cooperative-sticky's
promises (no overlap, balance, stickiness, two-round handover) over random groups."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.core.assignors import (
    ASSIGNORS,
    JoinedMember,
    _generation,
    cooperative_sticky_assign,
    encode_sticky_user_data,
    range_assign,
    roundrobin_assign,
)
from kafkawire.protocol.consumer_protocol import Subscription, TopicPartitions


def member(
    member_id: str,
    topics: list[str],
    owned: TopicPartitions | None = None,
    generation: int = -1,
    instance: str | None = None,
) -> JoinedMember:
    return JoinedMember(
        member_id, Subscription(topics, owned_partitions=owned or {}, generation_id=generation), instance
    )


def group(*members: JoinedMember) -> dict[str, JoinedMember]:
    return {m.member_id: m for m in members}


def test_range_gives_consecutive_ranges_per_topic_as_java() -> None:
    # Java's RangeAssignor javadoc: C0, C1 subscribing t0 and t1 of 3 partitions each
    members = group(member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"]))
    assert range_assign(members, {"t0": 3, "t1": 3}) == {
        "C0": {"t0": [0, 1], "t1": [0, 1]},
        "C1": {"t0": [2], "t1": [2]},
    }


def test_roundrobin_deals_partitions_in_order_as_java() -> None:
    members = group(member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"]))
    assert roundrobin_assign(members, {"t0": 3, "t1": 3}) == {
        "C0": {"t0": [0, 2], "t1": [1]},
        "C1": {"t0": [1], "t1": [0, 2]},
    }


def test_roundrobin_skips_members_not_subscribed_as_java() -> None:
    # Java's javadoc: C0 [t0], C1 [t0, t1], C2 [t0, t1, t2]; t0 1 partition, t1 2, t2 3
    members = group(member("C0", ["t0"]), member("C1", ["t0", "t1"]), member("C2", ["t0", "t1", "t2"]))
    assert roundrobin_assign(members, {"t0": 1, "t1": 2, "t2": 3}) == {
        "C0": {"t0": [0]},
        "C1": {"t1": [0]},
        "C2": {"t1": [1], "t2": [0, 1, 2]},
    }


def test_static_members_come_first_ordered_by_instance_id() -> None:
    members = group(member("a-dynamic", ["t"]), member("z-static", ["t"], instance="i-1"))
    assert range_assign(members, {"t": 3}) == {"z-static": {"t": [0, 1]}, "a-dynamic": {"t": [2]}}


def test_topics_missing_from_metadata_are_not_assigned() -> None:
    members = group(member("C0", ["t", "gone"]))
    for assign in ASSIGNORS.values():
        assert assign(members, {"t": 1}) == {"C0": {"t": [0]}}


def test_cooperative_sticky_keeps_owned_partitions_and_withholds_moves_for_one_round() -> None:
    round1 = group(member("A", ["t"], {"t": [0, 1, 2, 3]}, generation=1), member("B", ["t"]))
    first = cooperative_sticky_assign(round1, {"t": 4})
    assert first == {"A": {"t": [0, 1]}, "B": {}}  # 2 and 3 move to B: withheld while A revokes them
    round2 = group(member("A", ["t"], first["A"], generation=2), member("B", ["t"], first["B"], generation=2))
    assert cooperative_sticky_assign(round2, {"t": 4}) == {"A": {"t": [0, 1]}, "B": {"t": [2, 3]}}


def test_cooperative_sticky_double_claims_go_to_the_newest_generation() -> None:
    members = group(member("A", ["t"], {"t": [0]}, generation=3), member("B", ["t"], {"t": [0]}, generation=4))
    assert cooperative_sticky_assign(members, {"t": 2}) == {"A": {"t": [1]}, "B": {"t": [0]}}


def test_generation_is_read_from_sticky_user_data_when_the_field_is_absent() -> None:
    sub = Subscription(["t"], user_data=encode_sticky_user_data({"t": [0, 1]}, 12))
    assert _generation(sub) == 12
    assert _generation(Subscription(["t"], user_data=b"\x01\x02")) == -1
    assert _generation(Subscription(["t"], generation_id=5, user_data=b"junk")) == 5


TOPICS = ["a", "b", "c"]


@st.composite
def groups(draw: st.DrawFn) -> tuple[dict[str, JoinedMember], dict[str, int]]:
    counts = {t: draw(st.integers(0, 6)) for t in TOPICS}
    n = draw(st.integers(1, 5))
    members = {}
    for i in range(n):
        topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))
        members[f"m{i}"] = member(f"m{i}", sorted(topics))
    return members, counts


def _flatten(assignment: dict[str, TopicPartitions]) -> list[tuple[str, int]]:
    return [(t, p) for tps in assignment.values() for t, ps in tps.items() for p in ps]


@settings(max_examples=150, deadline=None)
@given(groups(), st.sampled_from(sorted(ASSIGNORS)))
def test_every_assignor_covers_each_subscribed_partition_once(
    case: tuple[dict[str, JoinedMember], dict[str, int]], name: str
) -> None:
    members, counts = case
    assignment = ASSIGNORS[name](members, counts)
    flat = _flatten(assignment)
    assert len(flat) == len(set(flat)), "a partition assigned twice"
    wanted = {(t, p) for m in members.values() for t in m.subscription.topics for p in range(counts[t])}
    assert set(flat) == wanted
    for member_id, tps in assignment.items():
        assert set(tps) <= set(members[member_id].subscription.topics)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(1, 6), st.randoms(use_true_random=False))
def test_cooperative_sticky_converges_balanced_and_sticky(
    partitions: int, before: int, after: int, rnd: random.Random
) -> None:
    """A group of `before` members grows or shrinks to `after`: two rounds reach balance; owners keep most."""
    counts = {"t": partitions}
    owned = cooperative_sticky_assign(group(*(member(f"m{i}", ["t"]) for i in range(before))), counts)
    survivors = rnd.sample(range(max(before, after)), k=after)
    generation = 1
    for _round in range(2):
        members = group(*(member(f"m{i}", ["t"], owned.get(f"m{i}", {}), generation) for i in survivors))
        new = cooperative_sticky_assign(members, counts)
        for m, tps in new.items():  # nobody is given a partition someone else still owns
            for p in tps.get("t", []):
                assert all(p not in owned.get(o, {}).get("t", []) for o in members if o != m)
        for m in members:  # stickiness: everyone keeps what it owned, up to its fair share
            mine = set(owned.get(m, {}).get("t", []))
            assert len(set(new[m].get("t", [])) & mine) >= min(len(mine), partitions // len(members))
        owned, generation = new, generation + 1
    sizes = [len(owned[m].get("t", [])) for m in owned]
    assert sum(sizes) == partitions and max(sizes) - min(sizes) <= 1
