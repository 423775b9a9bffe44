"""Classic consumer group membership (JoinGroup/SyncGroup/Heartbeat/LeaveGroup), sans-IO.

The member's states and legal moves are one table (TRANSITIONS); what a group error means is
another (VERDICTS), keyed by named error codes. `Membership` holds member id, generation and the
owned partitions, builds request bodies, and turns answers into a `Step` that says which
partitions to assign, revoke or declare lost and whether to (re)join. Callers pass ``now``
(seconds); finding the coordinator and resending belong to the caller (the request driver).

Eager protocols (range, roundrobin) revoke everything before rejoining; cooperative ones (KIP-429)
keep what they own, revoke only what the new assignment takes away, then rejoin once more so the
leader can hand those partitions on.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from ..protocol import error_codes as ec
from ..protocol.consumer_protocol import PROTOCOL_TYPE, TopicPartitions
from .member_states import moved
from .policy import Meanings


class GroupState(enum.Enum):
    UNJOINED = "unjoined"  # not in the group (new, left, or lost the membership)
    JOINING = "joining"  # JoinGroup sent
    SYNCING = "syncing"  # SyncGroup sent (after a successful JoinGroup)
    STABLE = "stable"  # holding an assignment, heartbeating
    FATAL = "fatal"  # fenced or refused for good: the consumer reports and stops


class GroupEvent(enum.Enum):
    JOIN = "join sent"
    JOINED = "join answered"
    SYNCED = "sync answered"
    REJOIN = "rejoin needed"
    LEFT = "left or lost"
    FAILED = "fatal error"


TRANSITIONS: dict[tuple[GroupState, GroupEvent], GroupState] = {
    (GroupState.UNJOINED, GroupEvent.JOIN): GroupState.JOINING,
    (GroupState.JOINING, GroupEvent.JOIN): GroupState.JOINING,  # resent (member id required, coordinator moved)
    (GroupState.JOINING, GroupEvent.JOINED): GroupState.SYNCING,
    (GroupState.SYNCING, GroupEvent.SYNCED): GroupState.STABLE,
    (GroupState.STABLE, GroupEvent.JOIN): GroupState.JOINING,  # a cooperative member rejoins while keeping partitions
    **{
        (s, GroupEvent.REJOIN): GroupState.UNJOINED
        for s in (GroupState.JOINING, GroupState.SYNCING, GroupState.STABLE, GroupState.UNJOINED)
    },
    **{
        (s, GroupEvent.LEFT): GroupState.UNJOINED
        for s in (GroupState.JOINING, GroupState.SYNCING, GroupState.STABLE, GroupState.UNJOINED)
    },
    **{(s, GroupEvent.FAILED): GroupState.FATAL for s in GroupState},
}


class GroupVerdict(enum.Enum):
    """What a group error tells the member to do."""

    REJOIN = "rejoin"  # a rebalance began: join again as who we are
    RESET_GENERATION = "rejoin, new generation"  # our generation is stale: partitions are lost, rejoin
    RESET_MEMBER = "rejoin as a new member"  # the coordinator forgot us: partitions are lost
    ADOPT_MEMBER_ID = "rejoin with the given member id"  # KIP-394: first join hands out the id
    COORDINATOR = "find the coordinator, then ask again (a join: rejoin)"
    RETRY = "ask again later"
    REFUSED = "report, then join again later"  # a JoinGroup refused for a reason of ours
    UNKNOWN = "not in the table: a heartbeat asks again, a sync starts over"
    FATAL = "stop"


VERDICTS = Meanings(
    "classic group (JoinGroup, SyncGroup, Heartbeat)",
    {
        ec.REBALANCE_IN_PROGRESS: GroupVerdict.REJOIN,
        ec.ILLEGAL_GENERATION: GroupVerdict.RESET_GENERATION,
        ec.UNKNOWN_MEMBER_ID: GroupVerdict.RESET_MEMBER,
        ec.MEMBER_ID_REQUIRED: GroupVerdict.ADOPT_MEMBER_ID,
        ec.NOT_COORDINATOR: GroupVerdict.COORDINATOR,
        ec.COORDINATOR_NOT_AVAILABLE: GroupVerdict.COORDINATOR,
        ec.COORDINATOR_LOAD_IN_PROGRESS: GroupVerdict.RETRY,
        ec.FENCED_INSTANCE_ID: GroupVerdict.FATAL,  # another process took our group.instance.id
        ec.GROUP_AUTHORIZATION_FAILED: GroupVerdict.FATAL,
        ec.INVALID_SESSION_TIMEOUT: GroupVerdict.FATAL,
        ec.INCONSISTENT_GROUP_PROTOCOL: GroupVerdict.FATAL,
        ec.INVALID_GROUP_ID: GroupVerdict.FATAL,
        ec.GROUP_MAX_SIZE_REACHED: GroupVerdict.FATAL,
    },
    GroupVerdict.UNKNOWN,
)


def verdict(error_code: int) -> GroupVerdict:
    """Only the codes the table names fatal end the membership. Any other is the broker's trouble
    (a Kafka 2.3 broker answers a Heartbeat with UNKNOWN_SERVER_ERROR when it loses track of a
    member): as librdkafka, the member asks again, and the session timeout bounds how long."""
    return VERDICTS.meaning(error_code)


# What stops a member elsewhere only refuses a JoinGroup (a session timeout out of the broker's
# range, no rights on the group, ...): as librdkafka, the application hears of each refusal (an
# error event from poll()) and the member asks again after REFUSED_JOIN_PAUSE; a static member
# fenced by another stays stopped.
REFUSED_JOIN_PAUSE = 2.0  # seconds (librdkafka asks again every 2 s)


def join_verdict(error_code: int) -> GroupVerdict:
    what = verdict(error_code)
    refused = what in (GroupVerdict.FATAL, GroupVerdict.UNKNOWN) and error_code != ec.FENCED_INSTANCE_ID
    return GroupVerdict.REFUSED if refused else what


@dataclass
class GroupStep:
    """What the consumer must do after an answer or a timer: in this order, revoke or lose, assign, join."""

    assign: TopicPartitions = field(default_factory=dict)
    revoke: TopicPartitions = field(default_factory=dict)
    lost: TopicPartitions = field(default_factory=dict)
    rejoin: bool = False
    find_coordinator: bool = False
    retry: bool = False  # send the same request again after a backoff
    error: int | None = None  # a fatal group error to report
    refused: int | None = None  # the error a JoinGroup was refused with: report it, join again later
    members: list[Any] | None = None  # as leader: every member's JoinGroup metadata, to assign
    synced: bool = False  # a rebalance ended: the application hears of it even when nothing changed

    @property
    def holds_rejoin(self) -> bool:
        """The rejoin waits until the application has served this step's revocation or loss (its
        callback ran, so it could commit, or finish a transaction, as the member it consumed
        under), as librdkafka joins again only after its rebalance callback: a new assignment's
        committed offsets are then read after what that callback finished."""
        return self.rejoin and bool(self.revoke or self.lost)


@dataclass
class GroupConfig:
    group_id: str
    session_timeout: float  # seconds
    rebalance_timeout: float  # max.poll.interval.ms, in seconds
    heartbeat_interval: float
    group_instance_id: str | None = None
    cooperative: bool = False


def _minus(a: TopicPartitions, b: TopicPartitions) -> TopicPartitions:
    out: TopicPartitions = {}
    for topic, parts in a.items():
        rest = [p for p in parts if p not in set(b.get(topic, ()))]
        if rest:
            out[topic] = rest
    return out


class Membership:
    """One consumer's membership of a classic group; every method takes the time as ``now``."""

    def __init__(self, config: GroupConfig) -> None:
        self.config = config
        self.state = GroupState.UNJOINED
        self.member_id = ""
        self.generation = -1
        self.protocol: str | None = None
        self.leader = ""
        self.owned: TopicPartitions = {}
        self._last_heartbeat_ok = 0.0
        self._next_heartbeat = 0.0

    def _move(self, event: GroupEvent) -> None:
        self.state = moved(TRANSITIONS, self.state, event, self.config.group_id)

    @property
    def is_leader(self) -> bool:
        return bool(self.member_id) and self.member_id == self.leader

    # --- requests ----------------------------------------------------------------------------

    def join_request(self, protocols: list[tuple[str, bytes]]) -> dict[str, Any]:
        """JoinGroup's body; ``protocols`` are (assignor name, subscription bytes) by preference."""
        self._move(GroupEvent.JOIN)
        return {
            "group_id": self.config.group_id,
            "session_timeout_ms": int(self.config.session_timeout * 1000),
            "rebalance_timeout_ms": int(self.config.rebalance_timeout * 1000),
            "member_id": self.member_id,
            "group_instance_id": self.config.group_instance_id,
            "protocol_type": PROTOCOL_TYPE,
            "protocols": [{"name": name, "metadata": meta} for name, meta in protocols],
        }

    def sync_request(self, assignments: dict[str, bytes]) -> dict[str, Any]:
        """SyncGroup's body; only the leader sends assignments (member id -> assignment bytes)."""
        return {
            "group_id": self.config.group_id,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": self.config.group_instance_id,
            "protocol_type": PROTOCOL_TYPE,
            "protocol_name": self.protocol,
            "assignments": [{"member_id": m, "assignment": a} for m, a in sorted(assignments.items())],
        }

    def heartbeat_request(self, now: float) -> dict[str, Any]:
        self._next_heartbeat = now + self.config.heartbeat_interval
        return {
            "group_id": self.config.group_id,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": self.config.group_instance_id,
        }

    def held_heartbeat_request(self, now: float) -> dict[str, Any] | None:
        """A Heartbeat while a rejoin waits for the application's revocation (and the transactions
        carrying our offsets): the coordinator keeps a member of a rebalancing group only while it
        heartbeats, and one dropped after ``session.timeout.ms`` sees its partitions given to
        another member whose committed offsets predate the transaction it then commits (issue 39:
        copied twice). As Java's member, which heartbeats until it sends its JoinGroup. None once
        the membership itself is gone (nothing to keep)."""
        if self.state is not GroupState.UNJOINED or not self.member_id or self.generation < 0:
            return None
        return self.heartbeat_request(now)

    def leave_request(self) -> Callable[[int], dict[str, Any]] | None:
        """LeaveGroup's body by version (v3 batched the member ids), or None when there is nothing
        to leave. A static member never leaves (KIP-345: its partitions wait for it until the session
        times out)."""
        if not self.member_id or self.config.group_instance_id is not None:
            return None
        group_id, member_id = self.config.group_id, self.member_id

        def body(version: int) -> dict[str, Any]:
            if version < 3:
                return {"group_id": group_id, "member_id": member_id}
            me = {"member_id": member_id, "group_instance_id": None, "reason": "the consumer is closing"}
            return {"group_id": group_id, "members": [me]}

        return body

    # --- timers ------------------------------------------------------------------------------

    def heartbeat_due(self, now: float) -> bool:
        return self.state is GroupState.STABLE and now >= self._next_heartbeat

    def next_heartbeat(self) -> float | None:
        return self._next_heartbeat if self.state is GroupState.STABLE else None

    def session_expired(self, now: float) -> GroupStep | None:
        """No successful heartbeat for a whole session: the coordinator has dropped us; our partitions
        are someone else's by now (lost, not revoked)."""
        if self.state is GroupState.STABLE and now - self._last_heartbeat_ok > self.config.session_timeout:
            return self._reset(GroupVerdict.RESET_MEMBER)
        return None

    def rejoin(self) -> GroupStep:
        """Our subscription changed: join again (an eager member gives everything back first)."""
        return self._reset(GroupVerdict.REJOIN)

    def left(self) -> GroupStep:
        """We left (close, unsubscribe, max.poll.interval.ms exceeded): everything is revoked."""
        step = GroupStep(revoke=self.owned)
        self.owned = {}
        self.member_id, self.generation = ("", -1) if self.config.group_instance_id is None else (self.member_id, -1)
        self._move(GroupEvent.LEFT)
        return step

    # --- answers -----------------------------------------------------------------------------

    def on_join(self, response: Any, now: float) -> GroupStep:
        code = response.error_code
        if code == ec.MEMBER_ID_REQUIRED:
            self.member_id = response.member_id
            return GroupStep(rejoin=True)
        if code != ec.NONE:
            if join_verdict(code) is GroupVerdict.REFUSED:
                return GroupStep(refused=code)
            return self._on_error(code)
        self._move(GroupEvent.JOINED)
        self.member_id = response.member_id
        self.generation = response.generation_id
        self.protocol = response.protocol_name
        self.leader = response.leader
        members = list(response.members) if self.is_leader and not getattr(response, "skip_assignment", False) else None
        return GroupStep(members=members)

    def on_sync(
        self, response: Any, assignment: TopicPartitions | None, now: float, subscribed: Collection[str] | None = None
    ) -> GroupStep:
        """``assignment`` is the decoded answer (None when it could not be decoded). One that cannot
        be read or names a topic outside ``subscribed`` is not ours (the leader's or the wire's
        fault): join again, as Java's consumer does, rather than sit on partitions nobody reads."""
        if response.error_code != ec.NONE:
            return self._on_error(response.error_code)
        if assignment is None or (subscribed is not None and not set(assignment).issubset(subscribed)):
            return self._reset(GroupVerdict.REJOIN)
        self._move(GroupEvent.SYNCED)
        self._last_heartbeat_ok = now
        self._next_heartbeat = now + self.config.heartbeat_interval
        if not self.config.cooperative:
            self.owned = assignment
            return GroupStep(assign=assignment, synced=True)
        revoke = _minus(self.owned, assignment)
        step = GroupStep(assign=_minus(assignment, self.owned), revoke=revoke, rejoin=bool(revoke), synced=True)
        self.owned = _minus(self.owned, revoke)
        for topic, parts in step.assign.items():
            self.owned.setdefault(topic, []).extend(parts)
        return step

    def on_heartbeat(self, error_code: int, now: float) -> GroupStep:
        if error_code == ec.NONE:
            self._last_heartbeat_ok = now
            return GroupStep()
        return self._on_error(error_code)

    def on_no_answer(self) -> GroupStep:
        """A request got no answer (connection lost, timed out): as if the coordinator had moved."""
        return self._on_error(ec.COORDINATOR_NOT_AVAILABLE)

    def _on_error(self, code: int) -> GroupStep:
        what = verdict(code)
        if what is GroupVerdict.UNKNOWN:
            what = GroupVerdict.RETRY if self.state is GroupState.STABLE else GroupVerdict.REJOIN
        if what is GroupVerdict.RETRY:
            return GroupStep(retry=True)
        if what is GroupVerdict.COORDINATOR and self.state is GroupState.STABLE:
            # the membership lives on at the coordinator's new home: heartbeat there
            return GroupStep(find_coordinator=True, retry=True)
        if what is GroupVerdict.FATAL:
            step = GroupStep(lost=self.owned, error=code)
            self.owned = {}
            self._move(GroupEvent.FAILED)
            return step
        return self._reset(what)

    def _reset(self, what: GroupVerdict) -> GroupStep:
        step = GroupStep(rejoin=True, find_coordinator=what is GroupVerdict.COORDINATOR)
        if what in (GroupVerdict.RESET_GENERATION, GroupVerdict.RESET_MEMBER):
            step.lost, self.owned = self.owned, {}
            self.generation = -1
            if what is GroupVerdict.RESET_MEMBER:
                self.member_id = ""
        elif not self.config.cooperative and self.state is GroupState.STABLE:
            step.revoke, self.owned = self.owned, {}  # eager: give everything back before rejoining
        if self.state is not GroupState.UNJOINED:
            self._move(GroupEvent.REJOIN)
        return step
