"""KIP-848 consumer group membership (group.protocol=consumer), sans-IO.

One request, ConsumerGroupHeartbeat, does everything: join (epoch 0), heartbeat, report what the
member owns, leave (epoch -1, or -2 for a static member that will return). The coordinator runs the
assignor and answers a target assignment by topic id; the member reconciles towards it, revoking
first and assigning next, and acknowledges by reporting its owned partitions in the next heartbeat.
States and their moves are one table (TRANSITIONS), error verdicts another (VERDICTS, over the
ones shared with share groups in `member_states.py`). Callers pass ``now`` in seconds; topic ids are
resolved to names by the caller (metadata).
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..protocol import error_codes as ec
from .member_states import HEARTBEAT_VERDICTS, JOIN_EPOCH, LEAVE_EPOCH, HeartbeatVerdict, TopicIdPartitions, moved
from .policy import Meanings

STATIC_LEAVE_EPOCH = -2  # a static member going away for a while: keep its assignment


class ConsumerGroupState(enum.Enum):
    UNJOINED = "unjoined"
    JOINING = "joining"  # epoch 0 sent, no answer yet
    RECONCILING = "reconciling"  # the target differs from what we own: callbacks to run, then acknowledge
    STABLE = "stable"  # we own the target assignment
    LEAVING = "leaving"  # epoch -1/-2 sent
    FATAL = "fatal"


class ConsumerGroupEvent(enum.Enum):
    JOIN = "join"
    TARGET_CHANGED = "new target assignment"
    RECONCILED = "reconciled"
    FENCED = "fenced"
    LEAVE = "leave"
    LEFT = "left"
    FAILED = "fatal error"


_MEMBER_STATES = (ConsumerGroupState.JOINING, ConsumerGroupState.RECONCILING, ConsumerGroupState.STABLE)

TRANSITIONS: dict[tuple[ConsumerGroupState, ConsumerGroupEvent], ConsumerGroupState] = {
    (ConsumerGroupState.UNJOINED, ConsumerGroupEvent.JOIN): ConsumerGroupState.JOINING,
    **{(s, ConsumerGroupEvent.TARGET_CHANGED): ConsumerGroupState.RECONCILING for s in _MEMBER_STATES},
    (ConsumerGroupState.RECONCILING, ConsumerGroupEvent.RECONCILED): ConsumerGroupState.STABLE,
    (ConsumerGroupState.JOINING, ConsumerGroupEvent.RECONCILED): ConsumerGroupState.STABLE,  # joined with nothing to do
    **{(s, ConsumerGroupEvent.FENCED): ConsumerGroupState.UNJOINED for s in _MEMBER_STATES},
    **{
        (s, ConsumerGroupEvent.LEAVE): ConsumerGroupState.LEAVING
        for s in (*_MEMBER_STATES, ConsumerGroupState.UNJOINED)
    },
    (ConsumerGroupState.LEAVING, ConsumerGroupEvent.LEFT): ConsumerGroupState.UNJOINED,
    **{(s, ConsumerGroupEvent.FAILED): ConsumerGroupState.FATAL for s in ConsumerGroupState},
}


VERDICTS = Meanings(
    "consumer group (ConsumerGroupHeartbeat, KIP-848)",
    {
        **HEARTBEAT_VERDICTS,
        ec.STALE_MEMBER_EPOCH: HeartbeatVerdict.FENCED,
        ec.UNRELEASED_INSTANCE_ID: HeartbeatVerdict.FATAL,  # another live member holds our group.instance.id
        ec.UNSUPPORTED_ASSIGNOR: HeartbeatVerdict.FATAL,
    },
    HeartbeatVerdict.FATAL,
)


def verdict(error_code: int) -> HeartbeatVerdict:
    return VERDICTS.meaning(error_code)


@dataclass
class ConsumerGroupStep:
    assign: TopicIdPartitions = field(default_factory=dict)
    revoke: TopicIdPartitions = field(default_factory=dict)
    lost: TopicIdPartitions = field(default_factory=dict)
    find_coordinator: bool = False
    retry: bool = False
    error: int | None = None


@dataclass
class ConsumerGroupConfig:
    group_id: str
    rebalance_timeout: float  # max.poll.interval.ms in seconds
    subscribed_topics: list[str]
    group_instance_id: str | None = None
    rack_id: str | None = None
    server_assignor: str | None = None  # group.remote.assignor; None: the broker's default


def _minus(a: TopicIdPartitions, b: TopicIdPartitions) -> TopicIdPartitions:
    out: TopicIdPartitions = {}
    for topic, parts in a.items():
        rest = sorted(set(parts) - set(b.get(topic, ())))
        if rest:
            out[topic] = rest
    return out


class ConsumerGroupMember:
    """One member of a KIP-848 group. The member id is ours (KIP-1082), kept for the member's life."""

    def __init__(self, config: ConsumerGroupConfig, member_id: str | None = None) -> None:
        self.config = config
        self.member_id = member_id or str(uuid.uuid4())
        self.epoch = JOIN_EPOCH
        self.state = ConsumerGroupState.UNJOINED
        self.owned: TopicIdPartitions = {}
        self.target: TopicIdPartitions | None = None
        self._handed: TopicIdPartitions | None = None  # the target of the reconciliation under way
        self.heartbeat_interval = 5.0  # until the coordinator tells
        self._next_heartbeat = 0.0

    def _move(self, event: ConsumerGroupEvent) -> None:
        self.state = moved(TRANSITIONS, self.state, event, self.config.group_id)

    def heartbeat_due(self, now: float) -> bool:
        return self.state in _MEMBER_STATES and now >= self._next_heartbeat

    def heartbeat_request(self, now: float) -> dict[str, Any]:
        """The next heartbeat; joins when unjoined. Every field is sent in full (equal values are
        allowed), so a lost answer never leaves the coordinator with a stale picture."""
        if self.state not in _MEMBER_STATES:
            self._move(ConsumerGroupEvent.JOIN)  # from UNJOINED; illegal once leaving or fatal
            self.epoch = JOIN_EPOCH
        self._next_heartbeat = now + self.heartbeat_interval
        return {
            "group_id": self.config.group_id,
            "member_id": self.member_id,
            "member_epoch": self.epoch,
            "instance_id": self.config.group_instance_id,
            "rack_id": self.config.rack_id,
            "rebalance_timeout_ms": int(self.config.rebalance_timeout * 1000),
            "subscribed_topic_names": sorted(self.config.subscribed_topics),
            # v1+: an empty regex means "names, no regex" (and clears an earlier one), as librdkafka
            # sends it; its mock coordinator requires both fields or neither
            "subscribed_topic_regex": "",
            "server_assignor": self.config.server_assignor,
            "topic_partitions": [{"topic_id": t, "partitions": sorted(p)} for t, p in sorted(self.owned.items())],
        }

    def resubscribe(self, topics: list[str]) -> bool:
        """A new subscription (a pattern matched other topics): the next heartbeat, due now,
        carries it and the coordinator assigns from it. False when nothing changed."""
        topics = sorted(topics)
        if topics == sorted(self.config.subscribed_topics):
            return False
        self.config.subscribed_topics = topics
        self._next_heartbeat = 0.0
        return True

    def leave_request(self) -> dict[str, Any] | None:
        if self.state not in _MEMBER_STATES:
            return None
        self._move(ConsumerGroupEvent.LEAVE)
        epoch = STATIC_LEAVE_EPOCH if self.config.group_instance_id is not None else LEAVE_EPOCH
        return {
            "group_id": self.config.group_id,
            "member_id": self.member_id,
            "member_epoch": epoch,
            "instance_id": self.config.group_instance_id,
        }

    def on_left(self) -> ConsumerGroupStep:
        step = ConsumerGroupStep(revoke=self.owned)
        self.owned, self.target, self.epoch = {}, None, JOIN_EPOCH
        self._move(ConsumerGroupEvent.LEFT)
        return step

    def on_heartbeat(self, response: Any, now: float) -> ConsumerGroupStep:
        """The coordinator's answer: a new epoch, maybe a new target; reconcile towards it."""
        code = response.error_code
        if code != ec.NONE:
            return self._on_error(code)
        if response.member_id:
            self.member_id = response.member_id
        self.epoch = response.member_epoch
        if response.heartbeat_interval_ms > 0:
            self.heartbeat_interval = response.heartbeat_interval_ms / 1000
            self._next_heartbeat = now + self.heartbeat_interval
        if response.assignment is not None:
            self.target = {tp.topic_id: sorted(tp.partitions) for tp in response.assignment.topic_partitions}
        # while the application still serves a change, the next one is relative to what it was handed
        held = self._handed if self.state is ConsumerGroupState.RECONCILING and self._handed is not None else self.owned
        if self.target is None or self.target == held:
            if self.state is ConsumerGroupState.JOINING and self.target is not None:
                self._move(ConsumerGroupEvent.RECONCILED)
            return ConsumerGroupStep()
        self._move(ConsumerGroupEvent.TARGET_CHANGED)
        self._handed = dict(self.target)
        return ConsumerGroupStep(revoke=_minus(held, self.target), assign=_minus(self.target, held))

    def reconciled(self, now: float) -> None:
        """The application's callbacks ran: we own the target; acknowledge it at once."""
        if self.state is not ConsumerGroupState.RECONCILING or self.target is None:
            return
        self.owned = {t: list(p) for t, p in self.target.items()}
        self._move(ConsumerGroupEvent.RECONCILED)
        self._next_heartbeat = now

    def _on_error(self, code: int) -> ConsumerGroupStep:
        what = verdict(code)
        if what is HeartbeatVerdict.COORDINATOR:
            return ConsumerGroupStep(find_coordinator=True, retry=True)
        if what is HeartbeatVerdict.RETRY:
            return ConsumerGroupStep(retry=True)
        step = ConsumerGroupStep(lost=self.owned, error=code if what is HeartbeatVerdict.FATAL else None)
        self.owned, self.target, self.epoch = {}, None, JOIN_EPOCH
        self._move(ConsumerGroupEvent.FAILED if what is HeartbeatVerdict.FATAL else ConsumerGroupEvent.FENCED)
        return step
