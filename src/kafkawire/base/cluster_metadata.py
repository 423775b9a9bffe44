"""The public cluster metadata values (``list_topics()``'s answer), shaped like confluent-kafka's:
`BrokerMetadata`, `PartitionMetadata`, `TopicMetadata`, `ClusterMetadata`, built from the core's
decoded metadata by `cluster_metadata_from`.
"""

from __future__ import annotations

from ..core import metadata as core_metadata
from ..core.kafka_error import KafkaError


class BrokerMetadata:
    """A broker as the cluster metadata names it."""

    def __init__(self, id: int = -1, host: str | None = None, port: int = -1) -> None:
        self.id = id
        self.host = host
        self.port = port

    def __repr__(self) -> str:
        # confluent-kafka's repr: tests compare it with theirs
        return f"BrokerMetadata({self.id}, {self.host}:{self.port})"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.id}"


class PartitionMetadata:
    """A partition's leader and replicas. The ids may name brokers missing from `ClusterMetadata.brokers`."""

    def __init__(
        self,
        id: int = -1,
        leader: int = -1,
        replicas: list[int] | None = None,
        isrs: list[int] | None = None,
        error: KafkaError | None = None,
    ) -> None:
        self.id = id
        self.leader = leader
        self.replicas: list[int] = [] if replicas is None else replicas
        self.isrs: list[int] = [] if isrs is None else isrs
        self.error = error

    def __repr__(self) -> str:
        # confluent-kafka's repr: tests compare it with theirs
        if self.error is not None:
            return f"PartitionMetadata({self.id}, {self.error})"
        return f"PartitionMetadata({self.id})"

    def __str__(self) -> str:
        return str(self.id)


class TopicMetadata:
    """A topic's partitions, or the error that kept the broker from describing it."""

    def __init__(
        self,
        topic: str | None = None,
        partitions: dict[int, PartitionMetadata] | None = None,
        error: KafkaError | None = None,
    ) -> None:
        self.topic = topic
        self.partitions: dict[int, PartitionMetadata] = {} if partitions is None else partitions
        self.error = error

    def __repr__(self) -> str:
        # confluent-kafka's repr: tests compare it with theirs
        if self.error is not None:
            return f"TopicMetadata({self.topic}, {len(self.partitions)} partitions, {self.error})"
        return f"TopicMetadata({self.topic}, {len(self.partitions)} partitions)"

    def __str__(self) -> str:
        return str(self.topic)


class ClusterMetadata:
    """What ``list_topics()`` returns: brokers, topics, and which broker answered."""

    def __init__(
        self,
        cluster_id: str | None = None,
        controller_id: int = -1,
        brokers: dict[int, BrokerMetadata] | None = None,
        topics: dict[str, TopicMetadata] | None = None,
        orig_broker_id: int = -1,
        orig_broker_name: str | None = None,
    ) -> None:
        self.cluster_id = cluster_id
        self.controller_id = controller_id
        self.brokers: dict[int, BrokerMetadata] = {} if brokers is None else brokers
        self.topics: dict[str, TopicMetadata] = {} if topics is None else topics
        self.orig_broker_id = orig_broker_id
        self.orig_broker_name = orig_broker_name

    def __repr__(self) -> str:
        return f"ClusterMetadata({self.cluster_id})"

    def __str__(self) -> str:
        return str(self.cluster_id)


def broker_name(host: str, port: int, node_id: int) -> str:
    """librdkafka's broker name, ``host:port/id``, or ``host:port/bootstrap`` before the id is known."""
    return f"{host}:{port}/{node_id if node_id >= 0 else 'bootstrap'}"


def _error_or_none(code: int) -> KafkaError | None:
    return None if code == 0 else KafkaError(code)


def cluster_metadata_from(
    core: core_metadata.ClusterView, orig_broker_id: int, orig_broker_name: str, topic: str | None = None
) -> ClusterMetadata:
    """Copy the client's internal picture into fresh public objects the caller may keep or mutate:
    every topic it knows, or only ``topic`` (list_topics(topic): copying every known topic to keep
    one made each call cost as much as all of them, bench/PROFILE.md, "Topics")."""
    brokers = {node_id: BrokerMetadata(b.node_id, b.host, b.port) for node_id, b in core.brokers.items()}
    known = {**core.topics, **core.ignored}  # (a blacklisted topic is listed, as librdkafka)
    if topic is not None:
        known = {topic: known[topic]} if topic in known else {}
    topics = {
        name: TopicMetadata(
            info.name,
            {
                pid: PartitionMetadata(
                    p.partition, p.leader, list(p.replicas), list(p.isr), _error_or_none(p.error_code)
                )
                for pid, p in sorted(info.partitions.items())  # librdkafka sorts them by id
            },
            _error_or_none(info.error_code),
        )
        for name, info in known.items()
    }
    return ClusterMetadata(core.cluster_id, core.controller_id, brokers, topics, orig_broker_id, orig_broker_name)
