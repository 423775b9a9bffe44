"""Fetch for the range reader: a moved or missing leader, a lost or unreadable answer, anything
Kafka calls retriable is asked again with fresh metadata; OFFSET_OUT_OF_RANGE is the reader's to
judge (the log start moved: data loss, or the range ends there)."""

from __future__ import annotations

from ...errors import KafkaError
from ...protocol import error_codes as ec
from . import LOST_ANSWER, Action, ErrorPolicy

FETCH = ErrorPolicy(
    "fetch",
    {
        ec.OFFSET_OUT_OF_RANGE: Action.FAIL,
        **dict.fromkeys(LOST_ANSWER, Action.REFRESH_METADATA),
        KafkaError._UNKNOWN_BROKER: Action.REFRESH_METADATA,
        KafkaError._ALL_BROKERS_DOWN: Action.REFRESH_METADATA,
    },
    retriable=Action.REFRESH_METADATA,
)
