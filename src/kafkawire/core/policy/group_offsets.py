"""OffsetCommit and OffsetFetch at a group's coordinator: the coordinator table, plus "ask again"
for every code Kafka marks retriable (UNKNOWN_TOPIC_OR_PARTITION while a topic is being created,
UNSTABLE_OFFSET_COMMIT while a transaction holds offsets, REQUEST_TIMED_OUT). Membership errors
(REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) are final for
the call: the consumer's group state decides what they mean (core/group.py)."""

from __future__ import annotations

from . import ErrorPolicy
from .coordinator import COORDINATOR

GROUP_OFFSETS = ErrorPolicy("group offsets", COORDINATOR.table)  # unlisted retriable codes: RETRY
