"""What the producer does about each error a Produce can end in (a broker's per-partition code or
a local failure of the whole request), as librdkafka's ``rd_kafka_err_action`` decides it: retry,
refresh the leader first and retry, or fail. Unlisted codes follow the broker error table's
``retriable`` flag; local ones fail. ``core/produce_verdict.py`` weighs the answer against the
retry count, the delivery timeout and idempotence."""

from __future__ import annotations

from ...protocol import error_codes as ec
from ..kafka_error import KafkaError
from . import Action, ErrorPolicy

PRODUCE = ErrorPolicy(
    "produce",
    {
        # The leader moved or is unknown: the batch never reached a log.
        ec.UNKNOWN_TOPIC_OR_PARTITION: Action.REFRESH_METADATA,
        ec.LEADER_NOT_AVAILABLE: Action.REFRESH_METADATA,
        ec.NOT_LEADER_OR_FOLLOWER: Action.REFRESH_METADATA,
        ec.KAFKA_STORAGE_ERROR: Action.REFRESH_METADATA,
        ec.FENCED_LEADER_EPOCH: Action.REFRESH_METADATA,
        ec.UNKNOWN_LEADER_EPOCH: Action.REFRESH_METADATA,
        # The broker may have appended before giving up.
        ec.REQUEST_TIMED_OUT: Action.RETRY,
        ec.NETWORK_EXCEPTION: Action.REFRESH_METADATA,
        ec.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Action.RETRY,
        # Refused before appending; worth another try.
        ec.CORRUPT_MESSAGE: Action.RETRY,  # a bit flipped on the way
        ec.NOT_ENOUGH_REPLICAS: Action.RETRY,
        ec.CONCURRENT_TRANSACTIONS: Action.RETRY,
        # Permanent for these records.
        ec.MESSAGE_TOO_LARGE: Action.FAIL,
        ec.INVALID_TOPIC_EXCEPTION: Action.FAIL,
        ec.RECORD_LIST_TOO_LARGE: Action.FAIL,
        ec.INVALID_REQUIRED_ACKS: Action.FAIL,
        ec.TOPIC_AUTHORIZATION_FAILED: Action.FAIL,
        ec.CLUSTER_AUTHORIZATION_FAILED: Action.FAIL,
        ec.INVALID_TIMESTAMP: Action.FAIL,
        ec.UNSUPPORTED_VERSION: Action.FAIL,
        ec.UNSUPPORTED_FOR_MESSAGE_FORMAT: Action.FAIL,
        ec.UNSUPPORTED_COMPRESSION_TYPE: Action.FAIL,
        ec.INVALID_RECORD: Action.FAIL,
        # Whole-request failures, reported locally.
        KafkaError._TRANSPORT: Action.REFRESH_METADATA,
        KafkaError._TIMED_OUT: Action.REFRESH_METADATA,
        KafkaError._BAD_MSG: Action.REFRESH_METADATA,
        KafkaError._MSG_TIMED_OUT: Action.FAIL,
        KafkaError._DESTROY: Action.FAIL,
        KafkaError._UNSUPPORTED_FEATURE: Action.FAIL,
        KafkaError._INVALID_ARG: Action.FAIL,
    },
    retriable=Action.RETRY,
    local=Action.FAIL,
)
