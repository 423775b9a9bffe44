"""`AdminClient`: confluent-kafka's admin API over kafkawire's request driver.

The calls live with their concern (topics.py, configs.py, groups.py, group_offsets.py, records.py,
acls.py, scram.py) over the shared
plumbing in base.py; this module puts them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..client.driver import wait
from ..core.kafka_error import KafkaError, KafkaException
from .acls import AclCalls
from .configs import ConfigCalls
from .group_offset_calls import GroupOffsetCalls
from .groups import GroupCalls, decode_assignment
from .records import RecordCalls
from .scram import ScramCalls
from .topics import TopicCalls
from .types import ConfigResource, NewTopic

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
    an earlier run is as good as a new one. A replication factor of -1 (the broker's default) is
    refused by brokers before 2.4 (CreateTopics before v4, KIP-464) as INVALID_REPLICATION_FACTOR:
    then the broker's ``default.replication.factor`` is read and asked for, as that broker would
    have applied it. Any other error is raised.
    """
    admin = AdminClient(dict(conf))
    try:
        try:
            return _create(admin, topic, timeout)
        except KafkaException as exc:
            if topic.replication_factor != -1 or _code(exc) != KafkaError.INVALID_REPLICATION_FACTOR:
                raise
        explicit = NewTopic(
            topic.topic, topic.num_partitions, _default_replication_factor(admin, timeout), config=topic.config or {}
        )
        return _create(admin, explicit, timeout)
    finally:
        admin.close()


def _create(admin: AdminClient, topic: NewTopic, timeout: float) -> bool:
    futures = admin.create_topics([topic], operation_timeout=timeout, request_timeout=timeout)
    try:
        wait(futures[topic.topic], timeout)
        return True
    except KafkaException as exc:
        if _code(exc) == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        raise


def _code(exc: KafkaException) -> int | None:
    error = exc.args[0] if exc.args else None
    return error.code() if isinstance(error, KafkaError) else None


def _default_replication_factor(admin: AdminClient, timeout: float) -> int:
    broker = min(admin.list_topics(timeout=timeout).brokers)
    resource = ConfigResource(ConfigResource.Type.BROKER, str(broker))
    entries = wait(admin.describe_configs([resource], request_timeout=timeout)[resource], timeout)
    return int(entries["default.replication.factor"].value or "1")  # unset: Kafka's own default, 1
