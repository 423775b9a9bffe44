"""ListOffsets for readers: anything retriable (a moved or missing leader, a topic not created yet,
a lost connection) is asked again with fresh metadata until the call's deadline."""

from __future__ import annotations

from ..kafka_error import KafkaError
from . import LOST_ANSWER, Action, ErrorPolicy

LIST_OFFSETS = ErrorPolicy(
    "list offsets",
    {
        **dict.fromkeys(LOST_ANSWER, Action.REFRESH_METADATA),
        KafkaError._UNKNOWN_BROKER: Action.REFRESH_METADATA,
        KafkaError._ALL_BROKERS_DOWN: Action.REFRESH_METADATA,
    },
    retriable=Action.REFRESH_METADATA,
)
