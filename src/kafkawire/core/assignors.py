"""Client-side partition assignors of classic consumer groups, as pure functions.

The group leader runs the assignor every member supports (by wire name, so kafkawire, Java and
librdkafka consumers can share a group) over every member's subscription and the partition counts
from metadata. Member order follows Java's MemberInfo: static members (group.instance.id) first,
by instance id, then the rest by member id; range and roundrobin give Java's assignments exactly.

``cooperative-sticky`` (KIP-429) keeps what members own, balances to within one partition, and never
hands a partition straight from one member to another in the same rebalance: the move is left out
of this round's assignment, the owner revokes it, rejoins, and the next round assigns it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..protocol.consumer_protocol import Subscription, TopicPartitions

RANGE = "range"
ROUNDROBIN = "roundrobin"
COOPERATIVE_STICKY = "cooperative-sticky"

Partition = tuple[str, int]


@dataclass(frozen=True)
class JoinedMember:
    """One member as the leader sees it in JoinGroup's answer."""

    member_id: str
    subscription: Subscription
    group_instance_id: str | None = None

    @property
    def order(self) -> tuple[int, str]:
        if self.group_instance_id is not None:
            return (0, self.group_instance_id)
        return (1, self.member_id)


def _sorted(members: Mapping[str, JoinedMember]) -> list[JoinedMember]:
    return sorted(members.values(), key=lambda m: m.order)


def _as_topic_partitions(owned: dict[str, list[Partition]]) -> dict[str, TopicPartitions]:
    out: dict[str, TopicPartitions] = {}
    for member_id, parts in owned.items():
        tps: TopicPartitions = {}
        for topic, p in sorted(parts):
            tps.setdefault(topic, []).append(p)
        out[member_id] = tps
    return out


def range_assign(
    members: Mapping[str, JoinedMember], partition_counts: Mapping[str, int]
) -> dict[str, TopicPartitions]:
    """Per topic, consecutive ranges in member order; the first members get one more when uneven."""
    result: dict[str, list[Partition]] = {m: [] for m in members}
    topics = sorted({t for m in members.values() for t in m.subscription.topics if t in partition_counts})
    for topic in topics:
        consumers = [m for m in _sorted(members) if topic in m.subscription.topics]
        count = partition_counts[topic]
        per, extra = divmod(count, len(consumers))
        for i, member in enumerate(consumers):
            start = i * per + min(i, extra)
            length = per + (1 if i < extra else 0)
            result[member.member_id].extend((topic, p) for p in range(start, start + length))
    return _as_topic_partitions(result)


def roundrobin_assign(
    members: Mapping[str, JoinedMember], partition_counts: Mapping[str, int]
) -> dict[str, TopicPartitions]:
    """Every partition in (topic, partition) order, dealt round the members that subscribe to it."""
    result: dict[str, list[Partition]] = {m: [] for m in members}
    ring = _sorted(members)
    topics = sorted({t for m in ring for t in m.subscription.topics if t in partition_counts})
    position = 0
    for topic in topics:
        for p in range(partition_counts[topic]):
            while topic not in ring[position % len(ring)].subscription.topics:
                position += 1
            result[ring[position % len(ring)].member_id].append((topic, p))
            position += 1
    return _as_topic_partitions(result)


def cooperative_sticky_assign(
    members: Mapping[str, JoinedMember], partition_counts: Mapping[str, int]
) -> dict[str, TopicPartitions]:
    """Sticky and balanced, then without partitions that would move between members this round."""
    subscribed = {m: set(members[m].subscription.topics) for m in members}
    all_partitions = sorted(
        (t, p)
        for t in {t for ts in subscribed.values() for t in ts}
        if t in partition_counts
        for p in range(partition_counts[t])
    )
    previous_owner = _previous_owners(members, set(all_partitions), subscribed)
    assignment: dict[str, list[Partition]] = {m: [] for m in members}
    for tp, owner in sorted(previous_owner.items()):
        assignment[owner].append(tp)
    eligible = {tp: [m for m in members if tp[0] in subscribed[m]] for tp in all_partitions}
    _trim_to_quota(assignment, len(all_partitions))
    taken = {tp for parts in assignment.values() for tp in parts}
    # unowned partitions, those with the fewest candidates first, to the least loaded candidate
    for tp in sorted((tp for tp in all_partitions if tp not in taken), key=lambda tp: (len(eligible[tp]), tp)):
        if eligible[tp]:
            target = min(eligible[tp], key=lambda m: (len(assignment[m]), members[m].order))
            assignment[target].append(tp)
    _balance(assignment, eligible, members)
    # KIP-429: a partition changing owner is withheld for one round, until its owner revoked it
    for member_id, parts in assignment.items():
        assignment[member_id] = [tp for tp in parts if previous_owner.get(tp, member_id) == member_id]
    return _as_topic_partitions(assignment)


def _previous_owners(
    members: Mapping[str, JoinedMember], existing: set[Partition], subscribed: dict[str, set[str]]
) -> dict[Partition, str]:
    """Who owns what now; a partition claimed twice goes to the claim of the highest generation."""
    claims: dict[Partition, tuple[int, str]] = {}
    for member_id, member in members.items():
        generation = _generation(member.subscription)
        for topic, parts in member.subscription.owned_partitions.items():
            if topic not in subscribed[member_id]:
                continue
            for p in parts:
                tp = (topic, p)
                if tp in existing and (tp not in claims or generation > claims[tp][0]):
                    claims[tp] = (generation, member_id)
    return {tp: owner for tp, (_gen, owner) in claims.items()}


def _trim_to_quota(assignment: dict[str, list[Partition]], total: int) -> None:
    """Nobody keeps more than the largest fair share of what it owned."""
    members = list(assignment)
    if not members:
        return
    max_quota = -(-total // len(members))
    for member_id in members:
        parts = assignment[member_id]
        if len(parts) > max_quota:
            assignment[member_id] = sorted(parts)[:max_quota]


def _balance(
    assignment: dict[str, list[Partition]], eligible: dict[Partition, list[str]], members: Mapping[str, JoinedMember]
) -> None:
    """Move partitions from the most to the least loaded eligible member until no move narrows the gap."""
    moved = True
    while moved:
        moved = False
        for donor in sorted(assignment, key=lambda m: (-len(assignment[m]), members[m].order)):
            for tp in sorted(assignment[donor], reverse=True):
                candidates = [m for m in eligible[tp] if len(assignment[m]) + 1 < len(assignment[donor])]
                if candidates:
                    target = min(candidates, key=lambda m: (len(assignment[m]), members[m].order))
                    assignment[donor].remove(tp)
                    assignment[target].append(tp)
                    moved = True
                    break
            if moved:
                break


# --- the sticky assignors' user data: the previous assignment and its generation ------------------

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def encode_sticky_user_data(owned: TopicPartitions, generation: int) -> bytes:
    """StickyAssignorUserData v1 (previous_assignment:[topic [partition]], generation:int32).

    librdkafka's cooperative-sticky leader reads a member's generation from it; Java's reads the
    subscription's generation_id (v2+) instead, which we send too.
    """
    out = bytearray(_I32.pack(len(owned)))
    for topic, parts in sorted(owned.items()):
        raw = topic.encode()
        out += _I16.pack(len(raw)) + raw + _I32.pack(len(parts))
        for p in sorted(parts):
            out += _I32.pack(p)
    out += _I32.pack(generation)
    return bytes(out)


def _generation(sub: Subscription) -> int:
    """The subscription's generation (v2+), else the sticky user data's, else -1 (unknown)."""
    if sub.generation_id >= 0:
        return sub.generation_id
    data = sub.user_data
    if data and len(data) >= 4:
        try:
            (count,) = _I32.unpack_from(data, 0)
            pos = 4
            for _ in range(count):
                (n,) = _I16.unpack_from(data, pos)
                pos += 2 + n
                (np_,) = _I32.unpack_from(data, pos)
                pos += 4 + 4 * np_
            if pos + 4 == len(data):
                return int(_I32.unpack_from(data, pos)[0])
        except struct.error:
            return -1
    return -1


Assignor = Callable[[Mapping[str, JoinedMember], Mapping[str, int]], dict[str, TopicPartitions]]

ASSIGNORS: dict[str, Assignor] = {
    RANGE: range_assign,
    ROUNDROBIN: roundrobin_assign,
    COOPERATIVE_STICKY: cooperative_sticky_assign,
}

# Which rebalance protocol each assignor needs: eager revokes everything before rejoining.
COOPERATIVE: frozenset[str] = frozenset({COOPERATIVE_STICKY})
