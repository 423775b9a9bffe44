"""The admin client's error policies.

Kafka's retriable codes are asked again with fresh metadata (NOT_CONTROLLER, a moved leader), a
moved coordinator is found again, except two codes final for an admin call: the broker's own
operation timed out (``operation_timeout`` said how long to wait) and an unknown topic (asking
again will not create it). A lost connection is asked again only by calls that change nothing
(the request may have been carried out).
"""

from __future__ import annotations

from ...protocol import error_codes as ec
from ..kafka_error import KafkaError
from . import Action, ErrorPolicy

ADMIN_WRITE = ErrorPolicy(
    "admin",
    {
        ec.REQUEST_TIMED_OUT: Action.FAIL,
        ec.UNKNOWN_TOPIC_OR_PARTITION: Action.FAIL,
        ec.NOT_COORDINATOR: Action.REFIND_COORDINATOR,
        ec.COORDINATOR_NOT_AVAILABLE: Action.REFIND_COORDINATOR,
    },
    retriable=Action.REFRESH_METADATA,
)

ADMIN_READ = ADMIN_WRITE.extend("admin read-only", {KafkaError._TRANSPORT: Action.REFRESH_METADATA})

# Kafka 2.3 (and older) answers CreateTopics, CreatePartitions and DeleteTopics sent with a
# timeout of 0 or less with REQUEST_TIMED_OUT, meaning "started, not waited for"; confluent-kafka
# reports success, and so do we when the call asked not to wait (operation_timeout <= 0).
ADMIN_STARTED = ADMIN_WRITE.extend("admin without waiting", {ec.REQUEST_TIMED_OUT: Action.SUCCEED})
