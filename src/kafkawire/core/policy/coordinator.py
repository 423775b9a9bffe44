"""Coordinator conversations (transactions, groups, FindCoordinator): when to find the coordinator
again, when to just ask again, and what is final (fencing and authorization)."""

from __future__ import annotations

from ...protocol import error_codes as ec
from ..kafka_error import KafkaError
from . import LOST_ANSWER, Action, ErrorPolicy

COORDINATOR = ErrorPolicy(
    "coordinator",
    {
        # Moved or not there yet: find it again.
        ec.COORDINATOR_NOT_AVAILABLE: Action.REFIND_COORDINATOR,
        ec.NOT_COORDINATOR: Action.REFIND_COORDINATOR,
        # Busy: the same coordinator will answer later.
        ec.COORDINATOR_LOAD_IN_PROGRESS: Action.RETRY,
        ec.CONCURRENT_TRANSACTIONS: Action.RETRY,
        # No answer: the coordinator may be gone; look it up again.
        **dict.fromkeys(LOST_ANSWER, Action.REFIND_COORDINATOR),
        KafkaError._UNKNOWN_BROKER: Action.REFIND_COORDINATOR,
        KafkaError._WAIT_COORD: Action.REFIND_COORDINATOR,
    },
    retriable=Action.FAIL,  # any other code is the caller's to judge (e.g. abortable)
)

# TxnOffsetCommit's per-partition answers that only mean "ask again" (the partition is not known
# to the coordinator yet, the write timed out).
TXN_OFFSET_COMMIT = COORDINATOR.extend(
    "txn offset commit",
    {ec.UNKNOWN_TOPIC_OR_PARTITION: Action.RETRY, ec.REQUEST_TIMED_OUT: Action.RETRY},
)

# A group member's (and a consumer's) standing lookup of its group's coordinator: whatever the
# answer (not there yet, no broker up, not authorized), asked again after a backoff until found, as
# librdkafka's group keeps querying on its timer.
FIND_COORDINATOR = ErrorPolicy("coordinator lookup", {}, retriable=Action.RETRY, local=Action.RETRY, final=Action.RETRY)
