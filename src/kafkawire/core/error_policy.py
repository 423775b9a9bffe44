"""What the producer does about each error: one table, as librdkafka's ``rd_kafka_err_action``.

For every error a Produce can end in (a broker's per-partition code or a local failure of the
request), the table says whether to retry, whether metadata must be refreshed first, and whether
the records may already be in the log (``Persisted``), which decides whether a failure reported
to the user is "not written" or "maybe written". Codes missing from the table fall back on the
broker error table's ``retriable`` flag.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..protocol import errors as broker_errors


class Persisted(enum.Enum):
    NOT = "not persisted"
    POSSIBLY = "possibly persisted"
    PERSISTED = "persisted"


@dataclass(frozen=True)
class Policy:
    retry: bool
    refresh_metadata: bool
    persisted: Persisted


_RETRY_REFRESH = Policy(retry=True, refresh_metadata=True, persisted=Persisted.NOT)
_RETRY = Policy(retry=True, refresh_metadata=False, persisted=Persisted.NOT)
_RETRY_MAYBE = Policy(retry=True, refresh_metadata=False, persisted=Persisted.POSSIBLY)
_RETRY_REFRESH_MAYBE = Policy(retry=True, refresh_metadata=True, persisted=Persisted.POSSIBLY)
_FAIL = Policy(retry=False, refresh_metadata=False, persisted=Persisted.NOT)
_FAIL_MAYBE = Policy(retry=False, refresh_metadata=False, persisted=Persisted.POSSIBLY)

# Local codes (librdkafka's numbering) that reach the policy when a request fails as a whole.
TRANSPORT = -195
TIMED_OUT = -185
MSG_TIMED_OUT = -192
BAD_MSG = -199
DESTROY = -197
UNSUPPORTED_FEATURE = -165
INVALID_ARG = -186

PRODUCE_ERRORS: dict[int, Policy] = {
    # The leader moved or is unknown: the batch never reached a log.
    3: _RETRY_REFRESH,  # UNKNOWN_TOPIC_OR_PARTITION
    5: _RETRY_REFRESH,  # LEADER_NOT_AVAILABLE
    6: _RETRY_REFRESH,  # NOT_LEADER_OR_FOLLOWER
    56: _RETRY_REFRESH,  # KAFKA_STORAGE_ERROR
    74: _RETRY_REFRESH,  # FENCED_LEADER_EPOCH
    75: _RETRY_REFRESH,  # UNKNOWN_LEADER_EPOCH
    # The broker may have appended before giving up.
    7: _RETRY_MAYBE,  # REQUEST_TIMED_OUT
    13: _RETRY_REFRESH_MAYBE,  # NETWORK_EXCEPTION
    20: _RETRY_MAYBE,  # NOT_ENOUGH_REPLICAS_AFTER_APPEND
    # Refused before appending; worth another try.
    2: _RETRY,  # CORRUPT_MESSAGE (a bit flipped on the way)
    19: _RETRY,  # NOT_ENOUGH_REPLICAS
    51: _RETRY,  # CONCURRENT_TRANSACTIONS
    # Permanent for these records.
    10: _FAIL,  # MESSAGE_TOO_LARGE
    17: _FAIL,  # INVALID_TOPIC_EXCEPTION
    18: _FAIL,  # RECORD_LIST_TOO_LARGE
    21: _FAIL,  # INVALID_REQUIRED_ACKS
    29: _FAIL,  # TOPIC_AUTHORIZATION_FAILED
    31: _FAIL,  # CLUSTER_AUTHORIZATION_FAILED
    32: _FAIL,  # INVALID_TIMESTAMP
    35: _FAIL,  # UNSUPPORTED_VERSION
    43: _FAIL,  # UNSUPPORTED_FOR_MESSAGE_FORMAT
    76: _FAIL,  # UNSUPPORTED_COMPRESSION_TYPE
    87: _FAIL,  # INVALID_RECORD
    # Whole-request failures, reported locally.
    TRANSPORT: _RETRY_REFRESH_MAYBE,
    TIMED_OUT: _RETRY_REFRESH_MAYBE,
    BAD_MSG: _RETRY_REFRESH_MAYBE,
    MSG_TIMED_OUT: _FAIL_MAYBE,
    DESTROY: _FAIL_MAYBE,
    UNSUPPORTED_FEATURE: _FAIL,
    INVALID_ARG: _FAIL,
}


def produce_policy(code: int) -> Policy:
    policy = PRODUCE_ERRORS.get(code)
    if policy is not None:
        return policy
    if code >= -1 and broker_errors.error_for(code).retriable:
        return _RETRY_MAYBE
    return _FAIL_MAYBE if code < -1 else _FAIL
