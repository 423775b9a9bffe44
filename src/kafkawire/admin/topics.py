"""Topic and cluster calls: create, delete, grow topics; list topics; describe the cluster."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from ..base.model import ClusterMetadata, TopicPartition
from ..client import routers
from ..core.kafka_error import KafkaError, KafkaException
from ..core.metadata import request_body
from ..core.policy.admin import ADMIN_READ
from ..core.versions import UnsupportedVersionError
from ..protocol.apis import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
    ELECT_LEADERS,
    METADATA,
)
from ..protocol.codec import Struct
from .acl_types import NO_OPERATIONS as _NO_OPERATIONS
from .acl_types import operations_from_bits
from .base import (
    _CLUSTER,
    AdminBase,
    _by_topic,
    _changing,
    _check_list,
    _error,
    _invalid,
    _no_duplicates,
    _tp,
    _unless_failed_with,
    _wire_configs,
)
from .topic_types import ElectionType, TopicCollection, TopicDescription, TopicPartitionInfo, Uuid
from .types import (
    DescribeClusterResult,
    NewPartitions,
    NewTopic,
    Node,
    check_new_partitions,
    check_new_topic,
)

_NO_SUCH_API = frozenset({KafkaError._UNSUPPORTED_FEATURE})  # the broker lacks the API: ask the older one


class TopicCalls(AdminBase):
    """Topics and the cluster."""

    def create_topics(self, new_topics: list[NewTopic], **kwargs: Any) -> dict[str, Future[None]]:
        """Create topics (on the controller). ``validate_only=True`` checks without creating.

        ``operation_timeout`` (s) is how long the broker waits for the topics to exist everywhere
        before answering (0: answer at once; default socket.timeout.ms, as librdkafka's);
        ``request_timeout`` bounds the whole call, retries included.
        """
        topics = _check_list(new_topics, "NewTopic objects", NewTopic)
        request_s, operation_ms, validate_only = self._options(kwargs, operation=True, validate=True)
        for t in topics:
            check_new_topic(t)
        _no_duplicates((t.topic for t in topics), "topics")
        by_name = {t.topic: t for t in topics}

        def body(names: list[str], version: int) -> dict[str, Any]:
            return {
                "topics": [_create_topic_entry(by_name[n]) for n in names],
                "timeout_ms": operation_ms,
                "validate_only": validate_only,
            }

        def parse(response: Struct, names: list[str], node: int | None) -> dict[str, Any]:
            return {t.name: _error(t.error_code, t.get("error_message")) for t in response.topics}

        return self._run(
            by_name, CREATE_TOPICS, routers.CONTROLLER, body, parse, request_s, policy=_changing(operation_ms)
        )

    def delete_topics(self, topics: list[str], **kwargs: Any) -> dict[str, Future[None]]:
        """Delete topics (on the controller); an unknown topic fails its future with UNKNOWN_TOPIC_OR_PART."""
        names = _check_list(topics, "topic strings", str, error=ValueError)
        request_s, operation_ms, _ = self._options(kwargs, operation=True)
        _no_duplicates(names, "topics")

        def body(keys: list[str], version: int) -> dict[str, Any]:
            if version >= 6:
                return {"topics": [{"name": n} for n in keys], "timeout_ms": operation_ms}
            return {"topic_names": keys, "timeout_ms": operation_ms}

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            return {r.name: _error(r.error_code, r.get("error_message")) for r in response.responses}

        return self._run(
            names, DELETE_TOPICS, routers.CONTROLLER, body, parse, request_s, policy=_changing(operation_ms)
        )

    def create_partitions(self, new_partitions: list[NewPartitions], **kwargs: Any) -> dict[str, Future[None]]:
        """Grow topics to a new total partition count (on the controller)."""
        items = _check_list(new_partitions, "NewPartitions objects", NewPartitions)
        request_s, operation_ms, validate_only = self._options(kwargs, operation=True, validate=True)
        for p in items:
            check_new_partitions(p)
        _no_duplicates((p.topic for p in items), "topics")
        by_name = {p.topic: p for p in items}

        def body(names: list[str], version: int) -> dict[str, Any]:
            return {
                "topics": [
                    {
                        "name": n,
                        "count": by_name[n].new_total_count,
                        "assignments": None
                        if by_name[n].replica_assignment is None
                        else [{"broker_ids": list(r)} for r in by_name[n].replica_assignment or ()],
                    }
                    for n in names
                ],
                "timeout_ms": operation_ms,
                "validate_only": validate_only,
            }

        def parse(response: Struct, names: list[str], node: int | None) -> dict[str, Any]:
            return {r.name: _error(r.error_code, r.get("error_message")) for r in response.results}

        return self._run(
            by_name, CREATE_PARTITIONS, routers.CONTROLLER, body, parse, request_s, policy=_changing(operation_ms)
        )

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        """Brokers, controller and topics (one, or all); an unknown ``topic`` is created by a broker
        that auto-creates topics, unless ``allow.auto.create.topics`` is false."""
        self._check_handle()
        seconds = None if timeout is None or timeout < 0 else timeout
        return self._client.list_topics(topic, seconds, auto_create=self._config["allow.auto.create.topics"])

    def cluster_id(self, timeout: float = -1) -> str | None:
        """The cluster's id from metadata, asked for when not yet known; ``timeout`` -1: no limit."""
        self._check_handle()
        return self._client.cluster_id(None if timeout is None or timeout < 0 else timeout)

    def describe_cluster(self, **kwargs: Any) -> Future[DescribeClusterResult]:
        """The cluster id, the controller and the brokers: DescribeCluster (Kafka 2.8+), else a
        Metadata request for no topics, as confluent-kafka asks brokers without DescribeCluster."""
        include_ops = kwargs.pop("include_authorized_operations", False)
        if not isinstance(include_ops, bool):
            raise TypeError("include_authorized_operations must be a bool")
        request_s, _, _ = self._options(kwargs)
        deadline = self._client.engine.now() + request_s

        def result(response: Struct, brokers: list[Any], node_id: Callable[[Any], int]) -> DescribeClusterResult:
            nodes = [Node(node_id(b), b.host, b.port, b.get("rack")) for b in brokers]
            controller = next((n for n in nodes if n.id == response.controller_id), None)
            ops = response.get("cluster_authorized_operations", _NO_OPERATIONS)
            authorized = operations_from_bits(ops) if include_ops else None
            return DescribeClusterResult(controller, nodes, response.get("cluster_id"), authorized)

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            if response.error_code:
                return {_CLUSTER: KafkaError(response.error_code, response.get("error_message"))}
            return {_CLUSTER: result(response, response.brokers, lambda b: b.broker_id)}

        def from_metadata(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            return {_CLUSTER: result(response, response.brokers, lambda b: b.node_id)}

        def metadata_body(keys: list[str], version: int) -> dict[str, Any]:
            wanted = request_body([], version)
            if 8 <= version <= 10:
                wanted["include_cluster_authorized_operations"] = include_ops
            return wanted

        def fallback() -> Future[Any]:
            remaining = max(0.0, deadline - self._client.engine.now())
            return self._run(
                [_CLUSTER], METADATA, routers.ANY_BROKER, metadata_body, from_metadata, remaining, policy=ADMIN_READ
            )[_CLUSTER]

        body: Callable[[list[str], int], Mapping[str, Any]] = lambda keys, version: {  # noqa: E731
            "include_cluster_authorized_operations": include_ops
        }
        first = self._run([_CLUSTER], DESCRIBE_CLUSTER, routers.ANY_BROKER, body, parse, request_s, policy=ADMIN_READ)
        return _unless_failed_with(first[_CLUSTER], _NO_SUCH_API, fallback)

    def describe_topics(self, topics: TopicCollection, **kwargs: Any) -> dict[str, Future[TopicDescription]]:
        """Each topic's id, partitions (leader, replicas, in-sync replicas) and, when asked, the
        operations the caller may perform on it; from a Metadata request that creates nothing."""
        if not isinstance(topics, TopicCollection):
            raise TypeError("Expected input to be a TopicCollection")
        names = topics.topic_names
        if not isinstance(names, list):
            raise TypeError("Expected the topic names of the TopicCollection to be a list")
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"Expected topic names to be strings, not {type(name).__name__}")
            if not name:
                raise ValueError("Empty topic name")
        include_ops = kwargs.pop("include_authorized_operations", False)
        if not isinstance(include_ops, bool):
            raise TypeError("include_authorized_operations must be a bool")
        request_s, _, _ = self._options(kwargs)
        if len(set(names)) != len(names):  # refused in the futures, as librdkafka refuses them
            return {name: _invalid("Duplicate topics not allowed") for name in names}
        if not names:
            return {}

        def body(keys: list[str], version: int) -> dict[str, Any]:
            wanted = request_body(keys, version)
            if version >= 8:
                wanted["include_topic_authorized_operations"] = include_ops
            return wanted

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            nodes = {b.node_id: Node(b.node_id, b.host, b.port, b.get("rack")) for b in response.brokers}
            out: dict[str, Any] = {}
            for t in response.topics:
                if t.error_code:
                    out[t.name] = KafkaError(t.error_code)
                    continue
                partitions = [
                    TopicPartitionInfo(
                        p.partition_index,
                        nodes.get(p.leader_id),
                        [nodes[r] for r in p.replica_nodes if r in nodes],
                        [nodes[r] for r in p.isr_nodes if r in nodes],
                    )
                    for p in sorted(t.partitions, key=lambda p: p.partition_index)
                ]
                topic_id = t.get("topic_id")
                ops = t.get("topic_authorized_operations", _NO_OPERATIONS)
                out[t.name] = TopicDescription(
                    t.name,
                    Uuid(0, 0) if topic_id is None else Uuid.from_uuid(topic_id),
                    bool(t.get("is_internal", False)),
                    partitions,
                    operations_from_bits(ops) if include_ops else None,
                )
            return out

        return self._run(names, METADATA, routers.ANY_BROKER, body, parse, request_s, policy=ADMIN_READ)

    def elect_leaders(
        self, election_type: ElectionType, partitions: list[TopicPartition] | None = None, **kwargs: Any
    ) -> Future[dict[TopicPartition, KafkaException | None]]:
        """Elect each partition's preferred (or, Kafka 2.4+, unclean) leader at the
        controller; None: every partition. The future gives each partition's outcome."""
        if not isinstance(election_type, ElectionType):
            raise TypeError(f"election_type must be an ElectionType, not {type(election_type).__name__}")
        if partitions is not None:
            if not isinstance(partitions, list):
                raise TypeError(f"Expected 'partitions' to be a list, got '{type(partitions).__name__}'")
            for tp in partitions:
                if not isinstance(tp, TopicPartition):
                    raise TypeError(
                        f"Element of the 'partitions' list must be of type 'TopicPartition' got '{type(tp).__name__}'"
                    )
                if not tp.topic:
                    raise ValueError("Elements of the 'partitions' list must not have empty topic")
                if tp.partition < 0:
                    raise ValueError("Elements of the 'partitions' list must not have negative partition")
        self._check_open()
        request_s, operation_ms, _ = self._options(kwargs, operation=True)
        if partitions is not None and len({_tp(tp) for tp in partitions}) != len(partitions):
            return _invalid("Duplicate partitions specified")
        wanted = (
            None
            if partitions is None
            else [
                {"topic": topic, "partitions": [tp.partition for tp in tps]}
                for topic, tps in _by_topic(partitions).items()
            ]
        )

        def body(keys: list[str], version: int) -> dict[str, Any]:
            if version == 0 and election_type is not ElectionType.PREFERRED:
                # Kafka 2.2-2.3 (ElectPreferredLeaders) elect preferred leaders only.
                raise UnsupportedVersionError(
                    "the broker does not support unclean leader elections (ElectLeaders v1+, Kafka 2.4)"
                )
            return {"election_type": election_type.value, "topic_partitions": wanted, "timeout_ms": operation_ms}

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            error = _error(response.get("error_code", 0), None)
            if error is not None:
                return {_CLUSTER: error}
            outcome: dict[TopicPartition, KafkaException | None] = {}
            for t in response.replica_election_results:
                for p in t.partition_result:
                    failed = _error(p.error_code, p.error_message)
                    outcome[TopicPartition(t.topic, p.partition_id)] = (
                        None if failed is None else KafkaException(failed)
                    )
            return {_CLUSTER: outcome}

        return self._run([_CLUSTER], ELECT_LEADERS, routers.CONTROLLER, body, parse, request_s)[_CLUSTER]


def _create_topic_entry(t: NewTopic) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": t.topic,
        "num_partitions": t.num_partitions,
        "replication_factor": t.replication_factor,
        "assignments": [],
        "configs": _wire_configs(t.config or {}),
    }
    if t.replica_assignment is not None:
        # Kafka wants -1 for both counts when replicas are placed explicitly.
        entry["num_partitions"] = -1
        entry["replication_factor"] = -1
        entry["assignments"] = [
            {"partition_index": i, "broker_ids": list(replicas)} for i, replicas in enumerate(t.replica_assignment)
        ]
    return entry
