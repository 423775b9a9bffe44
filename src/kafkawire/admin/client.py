"""`AdminClient`: confluent-kafka's admin API over kafkawire's request driver.

The calls live with their concern (topics.py, configs.py, groups.py, group_offsets.py, records.py,
acls.py, scram.py) over the shared
plumbing in base.py; this module puts them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..client.driver import wait
from ..errors import KafkaError, KafkaException
from .acls import AclCalls
from .configs import ConfigCalls
from .group_offsets import GroupOffsetCalls
from .groups import GroupCalls, decode_assignment
from .records import RecordCalls
from .scram import ScramCalls
from .topics import TopicCalls
from .types import (
    NewTopic,
)

__all__ = ["AdminClient", "create_topic_if_missing", "decode_assignment"]


class AdminClient(TopicCalls, ConfigCalls, GroupCalls, GroupOffsetCalls, RecordCalls, AclCalls, ScramCalls):
    """Create, describe, change and delete topics, configs, groups and records.

    Built like confluent-kafka's ``AdminClient``: every call returns a dict of futures keyed by
    the entity (topic name, `ConfigResource`, group id, `TopicPartition`, `AclBinding`, user), and
    an entity's failure is a `KafkaException` on its own future. Callbacks run in ``poll()``.
    """


def create_topic_if_missing(conf: Mapping[str, Any], topic: NewTopic, timeout: float) -> bool:
    """Create ``topic`` unless it exists; True when this call created it.

    For set-up code (the demo, the pipeline, the exactly-once control topic) where a topic left by
    an earlier run is as good as a new one. Any other error is raised.
    """
    admin = AdminClient(dict(conf))
    try:
        futures = admin.create_topics([topic], operation_timeout=timeout, request_timeout=timeout)
        wait(futures[topic.topic], timeout)
        return True
    except KafkaException as exc:
        error = exc.args[0]
        if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        raise
    finally:
        admin.close()
