"""KIP-848 consumer groups at the coordinator: members heartbeat, the coordinator assigns.

Every change of membership or subscription bumps the group epoch and recomputes the target
assignment (each subscribed topic's partitions dealt round-robin over its sorted subscribers).
A member is given its target minus what another member still owns; it moves to the group epoch
once it holds no partition it must give up. Sans-IO.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkawire.protocol import error_codes as E

if TYPE_CHECKING:
    from .state import ClusterState

HEARTBEAT_INTERVAL_MS = 500
SESSION_TIMEOUT_MS = 45000
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2

Owned = set[tuple[uuid.UUID, int]]


@dataclass
class ConsumerMember:
    member_id: str
    epoch: int = 0
    subscribed: list[str] = field(default_factory=list)
    regex: str | None = None  # KIP-848 v1: topics matching it are subscribed too (re-matched as topics come)
    given: Owned = field(default_factory=set)  # what the last answer assigned
    reported: Owned = field(default_factory=set)  # what the member last said it owns
    last_seen_ms: int = 0


@dataclass
class ConsumerGroup:
    group_id: str
    epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, Owned] = field(default_factory=dict)
    offsets: dict[tuple[str, int], tuple[int, str | None, int]] = field(default_factory=dict)
    kind: str = "consumer"

    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        settled = all(
            m.epoch == self.epoch and m.given == self.target.get(m.member_id, set()) for m in self.members.values()
        )
        return "Stable" if settled else "Reconciling"


class ConsumerGroups:
    """Every KIP-848 group of the cluster."""

    def __init__(self) -> None:
        self.groups: dict[str, ConsumerGroup] = {}

    def heartbeat(self, group: ConsumerGroup, body: Any, state: ClusterState, now_ms: int) -> dict[str, Any]:
        member_id = body.member_id
        if body.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            if group.members.pop(member_id, None) is not None:
                self._retarget(group, state)
            return {"error_code": E.NONE, "member_id": member_id, "member_epoch": body.member_epoch}
        member = group.members.get(member_id)
        if body.member_epoch == 0:
            if member is None:
                member_id = member_id or f"{uuid.uuid4()}"
                member = group.members[member_id] = ConsumerMember(member_id)
            member.epoch = 0
            member.given = set()
        elif member is None:
            return {"error_code": E.UNKNOWN_MEMBER_ID, "member_id": member_id}
        elif body.member_epoch != member.epoch and body.member_epoch != member.epoch - 1:
            return {"error_code": E.FENCED_MEMBER_EPOCH, "member_id": member_id}
        member.last_seen_ms = now_ms
        if body.topic_partitions is not None:
            member.reported = {(tp.topic_id, p) for tp in body.topic_partitions for p in tp.partitions}
        if body.subscribed_topic_names is not None:
            member.subscribed = list(body.subscribed_topic_names)
        if body.subscribed_topic_regex is not None:
            member.regex = body.subscribed_topic_regex or None
        if body.member_epoch == 0 or self._target_of(group, state) != group.target:
            self._retarget(group, state)
        before = set(member.given)
        self._reconcile(group, member)
        answer: dict[str, Any] = {
            "error_code": E.NONE,
            "member_id": member_id,
            "member_epoch": member.epoch,
            "heartbeat_interval_ms": HEARTBEAT_INTERVAL_MS,
        }
        if body.member_epoch == 0 or member.given != before or member.given != member.reported:
            answer["assignment"] = {"topic_partitions": _by_topic(member.given)}
        return answer

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        target = group.target.get(member.member_id, set())
        keep = member.given & target
        revoking = member.given - target
        if revoking:
            member.given = keep
            return  # the member gives these up first; its epoch waits
        held_elsewhere: Owned = set()
        for other in group.members.values():
            if other is not member:
                held_elsewhere |= other.given | other.reported
        member.given = keep | (target - held_elsewhere)
        member.epoch = group.epoch

    def _target_of(self, group: ConsumerGroup, state: ClusterState) -> dict[str, Owned]:
        target: dict[str, Owned] = {m: set() for m in group.members}
        topics = {m.member_id: _topics_of(m, state) for m in group.members.values()}
        for name in sorted(set().union(*topics.values())):
            topic = state.topic(name)
            if topic is None:
                continue
            subscribers = sorted(member_id for member_id, names in topics.items() if name in names)
            for partition in topic.partitions:
                target[subscribers[partition.index % len(subscribers)]].add((topic.topic_id, partition.index))
        return target

    def _retarget(self, group: ConsumerGroup, state: ClusterState) -> None:
        group.epoch += 1
        group.target = self._target_of(group, state)

    def expire(self, now_ms: int, state: ClusterState) -> None:
        for group in self.groups.values():
            gone = [m for m in group.members.values() if now_ms - m.last_seen_ms > SESSION_TIMEOUT_MS]
            for member in gone:
                del group.members[member.member_id]
            if gone:
                self._retarget(group, state)

    def commit_check(self, group: ConsumerGroup, member_id: str, epoch: int) -> int:
        if epoch < 0 and not member_id:
            return E.NONE if not group.members else E.UNKNOWN_MEMBER_ID
        member = group.members.get(member_id)
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        return E.NONE if epoch in (member.epoch, member.epoch - 1) else E.STALE_MEMBER_EPOCH


def _topics_of(member: ConsumerMember, state: ClusterState) -> set[str]:
    topics = set(member.subscribed)
    if member.regex:
        try:
            topics |= {name for name in state.topics if re.fullmatch(member.regex, name)}
        except re.error:
            pass  # Kafka refuses such a regex (INVALID_REGULAR_EXPRESSION); here it matches nothing
    return topics


def _by_topic(owned: Owned) -> list[dict[str, Any]]:
    topics: dict[uuid.UUID, list[int]] = {}
    for topic_id, partition in sorted(owned):
        topics.setdefault(topic_id, []).append(partition)
    return [{"topic_id": topic_id, "partitions": partitions} for topic_id, partitions in topics.items()]
