"""The cluster's picture: brokers, topics, partitions (leader, replicas, follower, log), coordinators.

Sans-IO: it knows the brokers' ports but opens nothing; the server thread and the handlers share
it under the cluster's lock.
"""

from __future__ import annotations

import uuid
import zlib
from dataclasses import dataclass, field

from kafkawire.protocol import error_codes as E

from .log import DEFAULT_MAX_BYTES, PartitionLog

CLUSTER_ID = "kafkawire-mock"
GROUP = "group"
TRANSACTION = "transaction"
COORDINATOR_KINDS = {GROUP: 0, TRANSACTION: 1}  # FindCoordinator's key_type
_LEGAL_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


@dataclass
class Partition:
    index: int
    leader: int
    replicas: list[int]
    log: PartitionLog
    follower: int = -1  # the preferred read replica to point readers at (-1: none)
    follower_wmarks: tuple[int, int] | None = None  # (low, high) a follower reports; None: the leader's

    def serves(self, broker_id: int) -> bool:
        return broker_id == self.leader or broker_id == self.follower


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Broker:
    node_id: int
    host: str
    port: int


def topic_name_error(name: str) -> int:
    """Kafka's topic name rules: 1-249 characters of [a-zA-Z0-9._-], not "." or ".."."""
    if not name or len(name) > 249 or name in (".", "..") or set(name) - _LEGAL_TOPIC_CHARS:
        return E.INVALID_TOPIC_EXCEPTION
    return E.NONE


class ClusterState:
    """What every broker of the mock cluster agrees on."""

    def __init__(
        self,
        brokers: list[Broker],
        *,
        auto_create_topics: bool = True,
        default_partitions: int = 4,
        max_partition_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.brokers = {b.node_id: b for b in brokers}
        self.auto_create_topics = auto_create_topics
        self.default_partitions = default_partitions
        self.max_partition_bytes = max_partition_bytes
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        self.coordinator_pins: dict[tuple[str, str], int] = {}

    @property
    def controller_id(self) -> int:
        return min(self.brokers)

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> int:
        """Create a topic (an error code if it cannot be made)."""
        if topic_name_error(name):
            return E.INVALID_TOPIC_EXCEPTION
        if name in self.topics:
            return E.TOPIC_ALREADY_EXISTS
        if partitions < 1:
            return E.INVALID_PARTITIONS
        if not 1 <= replication_factor <= len(self.brokers):
            return E.INVALID_REPLICATION_FACTOR
        topic = Topic(name, uuid.uuid4(), [])
        self.topics[name] = topic
        self.topics_by_id[topic.topic_id] = topic
        self.add_partitions(topic, partitions, replication_factor)
        return E.NONE

    def add_partitions(self, topic: Topic, total: int, replication_factor: int | None = None) -> None:
        ids = sorted(self.brokers)
        rf = replication_factor or len(topic.partitions[0].replicas)
        for index in range(len(topic.partitions), total):
            replicas = [ids[(index + k) % len(ids)] for k in range(rf)]
            topic.partitions.append(Partition(index, replicas[0], replicas, PartitionLog(self.max_partition_bytes)))

    def delete_topic(self, name: str) -> int:
        topic = self.topics.pop(name, None)
        if topic is None:
            return E.UNKNOWN_TOPIC_OR_PARTITION
        del self.topics_by_id[topic.topic_id]
        return E.NONE

    def topic(self, name: str | None, topic_id: uuid.UUID | None = None, *, create: bool = False) -> Topic | None:
        """A topic by name (or by id when the name is empty); auto-created when allowed."""
        if not name and topic_id is not None:
            return self.topics_by_id.get(topic_id)
        if not name:
            return None
        topic = self.topics.get(name)
        replication = min(3, len(self.brokers))
        if (
            topic is None
            and create
            and self.auto_create_topics
            and not self.create_topic(name, self.default_partitions, replication)
        ):
            topic = self.topics[name]
        return topic

    def partition(self, name: str | None, index: int, topic_id: uuid.UUID | None = None) -> Partition | None:
        topic = self.topic(name, topic_id)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        return topic.partitions[index]

    def set_leader(self, name: str, index: int, broker_id: int) -> int:
        partition = self.partition(name, index)
        if partition is None:
            return E.UNKNOWN_TOPIC_OR_PARTITION
        partition.leader = broker_id
        partition.log.leader_epoch += 1
        if broker_id != -1 and broker_id not in partition.replicas:
            partition.replicas.append(broker_id)
        return E.NONE

    def coordinator(self, kind: str, key: str) -> int:
        """The broker coordinating ``key``: pinned by the test, else a hash of the key."""
        pinned = self.coordinator_pins.get((kind, key))
        if pinned is not None:
            return pinned
        ids = sorted(self.brokers)
        return ids[zlib.crc32(key.encode()) % len(ids)]
