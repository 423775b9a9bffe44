"""Classic consumer groups at the coordinator: join, sync, heartbeat, leave, and committed offsets.

The rebalance follows Kafka's group coordinator: a join moves the group to PreparingRebalance;
it completes when every known member has rejoined (or the rebalance timeout passes; the missing
ones are dropped); the leader's SyncGroup hands out the assignment. Members that stop heart-
beating for their session timeout leave. The broker does not care whether the members assign
eagerly or cooperatively: cooperative members simply rejoin once more. Sans-IO.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from kafkawire.protocol import error_codes as E

EMPTY = "Empty"
PREPARING = "PreparingRebalance"
COMPLETING = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"
INITIAL_REBALANCE_DELAY_MS = 200  # Kafka waits 3 s for more first members; short for tests


@dataclass
class MockMember:
    member_id: str
    instance_id: str | None
    client_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: list[tuple[str, bytes]]
    last_seen_ms: int
    joined: bool = False  # rejoined in the current rebalance
    assignment: bytes = b""


@dataclass
class Group:
    group_id: str
    state: str = EMPTY
    generation: int = 0
    protocol_type: str = ""
    protocol: str | None = None
    leader: str | None = None
    members: dict[str, MockMember] = field(default_factory=dict)
    rebalance_deadline_ms: int = 0
    join_delay_until_ms: int = 0
    offsets: dict[tuple[str, int], tuple[int, str | None, int]] = field(default_factory=dict)
    kind: str = "classic"

    def chosen_protocol(self) -> str | None:
        """The first protocol of the leader's list that every member supports."""
        members = list(self.members.values())
        if not members:
            return None
        common = set.intersection(*({name for name, _ in m.protocols} for m in members))
        for name, _ in members[0].protocols:
            if name in common:
                return name
        return None


class Groups:
    """Every classic group of the cluster (each answered only by its coordinator, see handlers)."""

    def __init__(self) -> None:
        self.groups: dict[str, Group] = {}
        self._ids = itertools.count(1)
        self.pending: set[str] = set()  # member ids handed out with MEMBER_ID_REQUIRED

    def get(self, group_id: str, *, create: bool = False) -> Group | None:
        group = self.groups.get(group_id)
        if group is None and create:
            group = self.groups[group_id] = Group(group_id)
        return group

    def new_member_id(self, client_id: str) -> str:
        return f"{client_id or 'member'}-{next(self._ids)}"

    def join(self, group: Group, member_id: str, body: Any, client_id: str, now_ms: int) -> tuple[int, str]:
        """A member (re)joins; (error, its member id). The answer waits for the rebalance."""
        if group.members and body.protocol_type != group.protocol_type:
            return E.INCONSISTENT_GROUP_PROTOCOL, member_id
        protocols = [(p.name, bytes(p.metadata)) for p in body.protocols]
        if not protocols:
            return E.INCONSISTENT_GROUP_PROTOCOL, member_id
        if member_id and member_id not in group.members and member_id not in self.pending:
            return E.UNKNOWN_MEMBER_ID, member_id
        self.pending.discard(member_id)
        if not member_id:
            self._drop_static(group, body.group_instance_id)
            member_id = self.new_member_id(client_id)
        rebalance_timeout = body.rebalance_timeout_ms if body.rebalance_timeout_ms > 0 else body.session_timeout_ms
        group.members[member_id] = MockMember(
            member_id,
            body.group_instance_id,
            client_id,
            body.session_timeout_ms,
            rebalance_timeout,
            protocols,
            now_ms,
            joined=True,
        )
        group.protocol_type = body.protocol_type
        if group.state != PREPARING:
            self._prepare(group, now_ms)
        return E.NONE, member_id

    def _drop_static(self, group: Group, instance_id: str | None) -> None:
        """A static member that joins again replaces its old self."""
        for member in [m for m in group.members.values() if instance_id is not None and m.instance_id == instance_id]:
            del group.members[member.member_id]
            if group.leader == member.member_id:
                group.leader = None

    def _prepare(self, group: Group, now_ms: int) -> None:
        timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        delay = INITIAL_REBALANCE_DELAY_MS if group.state == EMPTY else 0
        group.state = PREPARING
        group.rebalance_deadline_ms = now_ms + max(timeout, delay)
        group.join_delay_until_ms = now_ms + delay
        for member in group.members.values():
            member.assignment = b""

    def join_result(self, group: Group, member_id: str, now_ms: int, expired: bool) -> dict[str, Any] | None:
        """The JoinGroup answer once the rebalance can complete; None while it waits."""
        member = group.members.get(member_id)
        if member is None:
            return {"error_code": E.UNKNOWN_MEMBER_ID, "member_id": member_id}
        if group.state == PREPARING:
            everyone = all(m.joined for m in group.members.values())
            ready = everyone and now_ms >= group.join_delay_until_ms
            if not ready and not expired and now_ms < group.rebalance_deadline_ms:
                return None
            self._complete_join(group)
        if group.state not in (COMPLETING, STABLE) or member_id not in group.members:
            return {"error_code": E.REBALANCE_IN_PROGRESS, "member_id": member_id}
        return {
            "error_code": E.NONE,
            "generation_id": group.generation,
            "protocol_type": group.protocol_type,
            "protocol_name": group.protocol,
            "leader": group.leader,
            "member_id": member_id,
            "members": [
                {"member_id": m.member_id, "group_instance_id": m.instance_id, "metadata": _metadata(m, group.protocol)}
                for m in group.members.values()
            ]
            if member_id == group.leader
            else [],
        }

    def _complete_join(self, group: Group) -> None:
        for member_id in [m.member_id for m in group.members.values() if not m.joined]:
            del group.members[member_id]
        if not group.members:
            group.state = EMPTY
            group.generation += 1
            return
        if group.leader not in group.members:
            group.leader = next(iter(group.members))
        group.generation += 1
        group.protocol = group.chosen_protocol()
        group.state = COMPLETING
        for member in group.members.values():
            member.joined = False

    def sync(self, group: Group, body: Any, now_ms: int) -> int:
        """A SyncGroup arrives; the leader's carries the assignment. Returns an error code."""
        error = self.check_member(group, body.member_id, body.generation_id, now_ms)
        if error:
            return error
        if group.state == PREPARING:
            return E.REBALANCE_IN_PROGRESS
        if body.member_id == group.leader and group.state == COMPLETING:
            given = {a.member_id: bytes(a.assignment) for a in body.assignments}
            for member in group.members.values():
                member.assignment = given.get(member.member_id, b"")
            group.state = STABLE
        return E.NONE

    def sync_result(self, group: Group, member_id: str, generation: int, expired: bool) -> dict[str, Any] | None:
        member = group.members.get(member_id)
        if member is None or generation != group.generation:
            return {"error_code": E.REBALANCE_IN_PROGRESS}
        if group.state == STABLE:
            return {
                "error_code": E.NONE,
                "protocol_type": group.protocol_type,
                "protocol_name": group.protocol,
                "assignment": member.assignment,
            }
        if group.state == COMPLETING and not expired:
            return None
        return {"error_code": E.REBALANCE_IN_PROGRESS}

    def check_member(self, group: Group, member_id: str, generation: int, now_ms: int) -> int:
        member = group.members.get(member_id)
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        member.last_seen_ms = now_ms
        if generation != group.generation:
            return E.ILLEGAL_GENERATION
        return E.NONE

    def heartbeat(self, group: Group, member_id: str, generation: int, now_ms: int) -> int:
        error = self.check_member(group, member_id, generation, now_ms)
        if error:
            return error
        return E.REBALANCE_IN_PROGRESS if group.state == PREPARING else E.NONE

    def leave(self, group: Group, member_id: str, now_ms: int) -> int:
        if group.members.pop(member_id, None) is None:
            return E.UNKNOWN_MEMBER_ID
        if group.leader == member_id:
            group.leader = None
        if group.members:
            self._prepare(group, now_ms)
        else:
            group.state = EMPTY
            group.generation += 1
        return E.NONE

    def expire(self, now_ms: int) -> None:
        for group in self.groups.values():
            gone = [
                m.member_id
                for m in group.members.values()
                if now_ms - m.last_seen_ms > m.session_timeout_ms and not (group.state == PREPARING and m.joined)
            ]
            for member_id in gone:
                self.leave(group, member_id, now_ms)

    def commit_check(self, group: Group, member_id: str, generation: int, now_ms: int) -> int:
        """May this OffsetCommit write? A simple commit (generation -1) always may, when the group has no members."""
        if generation < 0 and not member_id:
            return E.NONE if not group.members else E.UNKNOWN_MEMBER_ID
        error = self.check_member(group, member_id, generation, now_ms)
        if error:
            return error
        return E.REBALANCE_IN_PROGRESS if group.state == PREPARING else E.NONE


def _metadata(member: MockMember, protocol: str | None) -> bytes:
    return next((meta for name, meta in member.protocols if name == protocol), b"")
