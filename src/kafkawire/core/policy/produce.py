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

from ...errors import KafkaError
from ...protocol import error_codes as ec
from ...protocol import errors as broker_errors


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

PRODUCE_ERRORS: dict[int, Policy] = {
    # The leader moved or is unknown: the batch never reached a log.
    ec.UNKNOWN_TOPIC_OR_PARTITION: _RETRY_REFRESH,
    ec.LEADER_NOT_AVAILABLE: _RETRY_REFRESH,
    ec.NOT_LEADER_OR_FOLLOWER: _RETRY_REFRESH,
    ec.KAFKA_STORAGE_ERROR: _RETRY_REFRESH,
    ec.FENCED_LEADER_EPOCH: _RETRY_REFRESH,
    ec.UNKNOWN_LEADER_EPOCH: _RETRY_REFRESH,
    # The broker may have appended before giving up.
    ec.REQUEST_TIMED_OUT: _RETRY_MAYBE,
    ec.NETWORK_EXCEPTION: _RETRY_REFRESH_MAYBE,
    ec.NOT_ENOUGH_REPLICAS_AFTER_APPEND: _RETRY_MAYBE,
    # Refused before appending; worth another try.
    ec.CORRUPT_MESSAGE: _RETRY,  # a bit flipped on the way
    ec.NOT_ENOUGH_REPLICAS: _RETRY,
    ec.CONCURRENT_TRANSACTIONS: _RETRY,
    # Permanent for these records.
    ec.MESSAGE_TOO_LARGE: _FAIL,
    ec.INVALID_TOPIC_EXCEPTION: _FAIL,
    ec.RECORD_LIST_TOO_LARGE: _FAIL,
    ec.INVALID_REQUIRED_ACKS: _FAIL,
    ec.TOPIC_AUTHORIZATION_FAILED: _FAIL,
    ec.CLUSTER_AUTHORIZATION_FAILED: _FAIL,
    ec.INVALID_TIMESTAMP: _FAIL,
    ec.UNSUPPORTED_VERSION: _FAIL,
    ec.UNSUPPORTED_FOR_MESSAGE_FORMAT: _FAIL,
    ec.UNSUPPORTED_COMPRESSION_TYPE: _FAIL,
    ec.INVALID_RECORD: _FAIL,
    # Whole-request failures, reported locally.
    KafkaError._TRANSPORT: _RETRY_REFRESH_MAYBE,
    KafkaError._TIMED_OUT: _RETRY_REFRESH_MAYBE,
    KafkaError._BAD_MSG: _RETRY_REFRESH_MAYBE,
    KafkaError._MSG_TIMED_OUT: _FAIL_MAYBE,
    KafkaError._DESTROY: _FAIL_MAYBE,
    KafkaError._UNSUPPORTED_FEATURE: _FAIL,
    KafkaError._INVALID_ARG: _FAIL,
}


def produce_policy(code: int) -> Policy:
    policy = PRODUCE_ERRORS.get(code)
    if policy is not None:
        return policy
    if code >= -1 and broker_errors.error_for(code).retriable:
        return _RETRY_MAYBE
    return _FAIL_MAYBE if code < -1 else _FAIL
