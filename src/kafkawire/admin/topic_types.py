"""Topic values of the admin API, named and shaped as in ``confluent_kafka`` (``TopicCollection``,
``TopicPartitionInfo``, ``ElectionType`` are top-level there) and ``confluent_kafka.admin``."""

from __future__ import annotations

import uuid
from typing import Any

from .types import Node, _Ordered

__all__ = ["ElectionType", "TopicCollection", "TopicDescription", "TopicPartitionInfo"]


class TopicCollection:
    """Topics named for ``describe_topics()``; the names are checked by the call."""

    def __init__(self, topic_names: list[str]) -> None:
        self.topic_names = topic_names

    def __repr__(self) -> str:
        return f"TopicCollection({self.topic_names!r})"


class TopicPartitionInfo:
    """A partition as ``describe_topics()`` reports it: its id, leader, replicas and in-sync replicas."""

    def __init__(self, id: int, leader: Node | None, replicas: list[Node], isr: list[Node]) -> None:
        self.id = id
        self.leader = leader
        self.replicas = replicas
        self.isr = isr

    def __repr__(self) -> str:
        return f"TopicPartitionInfo(id={self.id}, leader={self.leader}, replicas={self.replicas}, isr={self.isr})"


class TopicDescription:
    """A topic's id (None from brokers before Kafka 2.8), internal flag, partitions, and the
    operations the caller may perform on it (asked for with ``include_authorized_operations``)."""

    def __init__(
        self,
        name: str,
        topic_id: uuid.UUID | None,
        is_internal: bool,
        partitions: list[TopicPartitionInfo],
        authorized_operations: list[Any] | None = None,
    ) -> None:
        self.name = name
        self.topic_id = topic_id
        self.is_internal = is_internal
        self.partitions = partitions
        self.authorized_operations = None if authorized_operations is None else list(authorized_operations)

    def __repr__(self) -> str:
        return f"TopicDescription({self.name!r}, partitions={len(self.partitions)})"


class ElectionType(_Ordered):
    """``elect_leaders()``'s kind of election; the values are Kafka's wire numbers."""

    PREFERRED = 0
    UNCLEAN = 1
