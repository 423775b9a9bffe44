"""Fetch for the range reader and the fetch engine: a moved or missing leader, a lost or unreadable
answer, anything Kafka calls retriable is asked again with fresh metadata; OFFSET_OUT_OF_RANGE is
the reader's to judge (the log start moved: data loss, or the range ends there). A fetch session's
errors (KIP-227: core/fetch_session.py) are asked again of the same broker, with a full Fetch."""

from __future__ import annotations

from ...protocol import error_codes as ec
from ..kafka_error import KafkaError
from . import LOST_ANSWER, Action, ErrorPolicy

FETCH = ErrorPolicy(
    "fetch",
    {
        ec.OFFSET_OUT_OF_RANGE: Action.FAIL,
        ec.FETCH_SESSION_ID_NOT_FOUND: Action.RETRY,
        ec.INVALID_FETCH_SESSION_EPOCH: Action.RETRY,
        ec.FETCH_SESSION_TOPIC_ID_ERROR: Action.RETRY,
        **dict.fromkeys(LOST_ANSWER, Action.REFRESH_METADATA),
        KafkaError._UNKNOWN_BROKER: Action.REFRESH_METADATA,
        KafkaError._ALL_BROKERS_DOWN: Action.REFRESH_METADATA,
    },
    retriable=Action.REFRESH_METADATA,
)
