"""What the group members' sans-IO state machines share, so each fact stands in one place.

Every member (classic `group.py`, KIP-848 `consumer_group.py`, KIP-932 `share_group.py`) declares
its own states, events and TRANSITIONS table and moves by `moved`, which refuses what its table
does not list. The two heartbeat protocols (KIP-848, KIP-932) also share their epochs, assignments
by topic id, and the verdicts of the errors both can answer; each adds the codes only it knows.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from typing import TypeVar

from ..protocol import error_codes as ec

JOIN_EPOCH = 0
LEAVE_EPOCH = -1

TopicIdPartitions = dict[uuid.UUID, list[int]]

S = TypeVar("S", bound=enum.Enum)
E = TypeVar("E", bound=enum.Enum)


class IllegalMove(RuntimeError):
    """A move the TRANSITIONS table does not allow (a bug in the caller)."""


def moved(transitions: Mapping[tuple[S, E], S], state: S, event: E, group_id: str) -> S:
    """The state ``event`` leads to from ``state``."""
    new = transitions.get((state, event))
    if new is None:
        raise IllegalMove(f"group {group_id}: {event.value} is illegal in state {state.value}")
    return new


class HeartbeatVerdict(enum.Enum):
    """What a heartbeat error tells a KIP-848 or share member to do."""

    FENCED = "assignment lost: join again with epoch 0"
    COORDINATOR = "find the coordinator, heartbeat again"
    RETRY = "heartbeat again after a backoff"
    FATAL = "stop"


# Unlisted codes are fatal (a protocol's own table may list some anyway, to say why).
HEARTBEAT_VERDICTS: dict[int, HeartbeatVerdict] = {
    ec.FENCED_MEMBER_EPOCH: HeartbeatVerdict.FENCED,
    ec.UNKNOWN_MEMBER_ID: HeartbeatVerdict.FENCED,
    ec.NOT_COORDINATOR: HeartbeatVerdict.COORDINATOR,
    ec.COORDINATOR_NOT_AVAILABLE: HeartbeatVerdict.COORDINATOR,
    ec.COORDINATOR_LOAD_IN_PROGRESS: HeartbeatVerdict.RETRY,
    ec.GROUP_AUTHORIZATION_FAILED: HeartbeatVerdict.FATAL,
    ec.GROUP_MAX_SIZE_REACHED: HeartbeatVerdict.FATAL,
    ec.INVALID_REQUEST: HeartbeatVerdict.FATAL,
    ec.UNSUPPORTED_VERSION: HeartbeatVerdict.FATAL,
}
