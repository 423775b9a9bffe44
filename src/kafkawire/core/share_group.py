"""KIP-932 share group membership (ShareGroupHeartbeat), sans-IO.

A share group member makes up its own member id, joins with epoch 0, heartbeats with the epoch the
coordinator last gave it and leaves with -1. The coordinator answers an assignment by topic id
when it changed; several members may share a partition and nothing is revoked or handed back, so
there is no reconciliation: the new assignment is where the member fetches from from now on.
States and their moves are one table (TRANSITIONS), the error verdicts another (VERDICTS, over the
ones shared with KIP-848 groups in `member_states.py`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from ..protocol import error_codes as ec
from .member_states import HEARTBEAT_VERDICTS, JOIN_EPOCH, LEAVE_EPOCH, HeartbeatVerdict, TopicIdPartitions, moved
from .policy import Meanings


class ShareGroupState(enum.Enum):
    UNJOINED = "unjoined"
    JOINING = "joining"  # epoch 0 sent, no answer yet
    STABLE = "stable"  # a member with an epoch
    LEAVING = "leaving"  # epoch -1 sent
    LEFT = "left"
    FATAL = "fatal"


class ShareGroupEvent(enum.Enum):
    JOIN = "join"
    JOINED = "joined"
    FENCED = "fenced"
    LEAVE = "leave"
    LEFT = "left"
    FAILED = "fatal error"


_MEMBER_STATES = (ShareGroupState.JOINING, ShareGroupState.STABLE)

TRANSITIONS: dict[tuple[ShareGroupState, ShareGroupEvent], ShareGroupState] = {
    (ShareGroupState.UNJOINED, ShareGroupEvent.JOIN): ShareGroupState.JOINING,
    (ShareGroupState.JOINING, ShareGroupEvent.JOINED): ShareGroupState.STABLE,
    **{(s, ShareGroupEvent.FENCED): ShareGroupState.UNJOINED for s in _MEMBER_STATES},
    **{(s, ShareGroupEvent.LEAVE): ShareGroupState.LEAVING for s in (*_MEMBER_STATES, ShareGroupState.UNJOINED)},
    (ShareGroupState.LEAVING, ShareGroupEvent.LEFT): ShareGroupState.LEFT,
    **{(s, ShareGroupEvent.FAILED): ShareGroupState.FATAL for s in ShareGroupState},
}


VERDICTS = Meanings(
    "share group (ShareGroupHeartbeat)",
    {**HEARTBEAT_VERDICTS, ec.TOPIC_AUTHORIZATION_FAILED: HeartbeatVerdict.FATAL},
    HeartbeatVerdict.FATAL,
)


def verdict(error_code: int) -> HeartbeatVerdict:
    return VERDICTS.meaning(error_code)


@dataclass
class ShareGroupStep:
    """What an answer means for the IO side: a new assignment to fetch from (None: unchanged), or
    what to do about an error."""

    assignment: TopicIdPartitions | None = None
    find_coordinator: bool = False
    retry: bool = False
    error: int | None = None


class ShareGroupMember:
    def __init__(self, group_id: str, member_id: str, topics: list[str], rack_id: str | None = None) -> None:
        self.group_id = group_id
        self.member_id = member_id
        self.topics = list(topics)
        self.rack_id = rack_id
        self.state = ShareGroupState.UNJOINED
        self.epoch = JOIN_EPOCH
        self.assignment: TopicIdPartitions = {}
        self.heartbeat_interval = 5.0  # until the coordinator says (seconds)
        self._send_topics = True  # the topic list goes in the next heartbeat (joining, or changed)

    def _move(self, event: ShareGroupEvent) -> None:
        self.state = moved(TRANSITIONS, self.state, event, self.group_id)

    def subscribe(self, topics: list[str]) -> bool:
        """A new topic list; True when it differs (the next heartbeat carries it)."""
        if sorted(topics) == sorted(self.topics):
            return False
        self.topics = list(topics)
        self._send_topics = True
        return True

    def heartbeat_request(self) -> dict[str, Any]:
        if self.state is ShareGroupState.UNJOINED:
            self._move(ShareGroupEvent.JOIN)
            self._send_topics = True
        body: dict[str, Any] = {
            "group_id": self.group_id,
            "member_id": self.member_id,
            "member_epoch": self.epoch,
            "rack_id": self.rack_id if self.epoch == JOIN_EPOCH else None,
            "subscribed_topic_names": list(self.topics) if self._send_topics else None,
        }
        self._send_topics = False
        return body

    def on_heartbeat(self, response: Any) -> ShareGroupStep:
        code = response.error_code
        if code:
            return self._on_error(code)
        if response.member_id:
            self.member_id = response.member_id
        self.epoch = response.member_epoch
        if response.heartbeat_interval_ms > 0:
            self.heartbeat_interval = response.heartbeat_interval_ms / 1000
        if self.state is ShareGroupState.JOINING:
            self._move(ShareGroupEvent.JOINED)
        if response.assignment is None:
            return ShareGroupStep()
        new = {t.topic_id: sorted(t.partitions) for t in response.assignment.topic_partitions}
        if new == self.assignment:
            return ShareGroupStep()
        self.assignment = new
        return ShareGroupStep(assignment=dict(new))

    def _on_error(self, code: int) -> ShareGroupStep:
        kind = verdict(code)
        if kind is HeartbeatVerdict.COORDINATOR:
            self._send_topics = True
            return ShareGroupStep(find_coordinator=True)
        if kind is HeartbeatVerdict.RETRY:
            self._send_topics = True
            return ShareGroupStep(retry=True)
        if kind is HeartbeatVerdict.FENCED:
            self._move(ShareGroupEvent.FENCED)
            self.epoch = JOIN_EPOCH
            lost = bool(self.assignment)
            self.assignment = {}
            return ShareGroupStep(assignment={} if lost else None)
        self._move(ShareGroupEvent.FAILED)
        self.assignment = {}
        return ShareGroupStep(assignment={}, error=code)

    def leave_request(self) -> dict[str, Any] | None:
        """The leaving heartbeat, or None when the coordinator never knew us (nothing to leave)."""
        joined = self.state is ShareGroupState.STABLE
        if self.state in (ShareGroupState.LEAVING, ShareGroupState.LEFT, ShareGroupState.FATAL):
            return None
        self._move(ShareGroupEvent.LEAVE)
        self.assignment = {}
        if not joined:
            self._move(ShareGroupEvent.LEFT)
            return None
        return {
            "group_id": self.group_id,
            "member_id": self.member_id,
            "member_epoch": LEAVE_EPOCH,
            "rack_id": None,
            "subscribed_topic_names": None,
        }

    def left(self) -> None:
        if self.state is ShareGroupState.LEAVING:
            self._move(ShareGroupEvent.LEFT)
