"""OffsetCommit and OffsetFetch at a group's coordinator: the coordinator table, plus "ask again"
for every code Kafka marks retriable (UNSTABLE_OFFSET_COMMIT while a transaction holds offsets,
REQUEST_TIMED_OUT; UNKNOWN_TOPIC_OR_PARTITION for a fetch, not a commit). Membership errors
(REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) are final for
the call: the consumer's group state decides what they mean (core/group.py)."""

from __future__ import annotations

from ...protocol import error_codes as ec
from . import Action, ErrorPolicy
from .coordinator import COORDINATOR

GROUP_OFFSETS = ErrorPolicy("group offsets", COORDINATOR.table)  # unlisted retriable codes: RETRY

# A commit naming a partition the broker does not have fails at once with that code, as
# librdkafka's (asked again, it would only say the same until the call's timeout).
COMMIT_OFFSETS = GROUP_OFFSETS.extend("offset commit", {ec.UNKNOWN_TOPIC_OR_PARTITION: Action.FAIL})
