"""Topic and cluster calls: create, delete, grow topics; list topics; describe the cluster."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from ..client import routers
from ..core.policy.admin import ADMIN_READ
from ..errors import KafkaError
from ..model import ClusterMetadata
from ..protocol.apis import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
)
from ..protocol.codec import Struct
from .base import _CLUSTER, AdminBase, _changing, _check_list, _error, _no_duplicates
from .types import (
    DescribeClusterResult,
    NewPartitions,
    NewTopic,
    Node,
    check_new_partitions,
    check_new_topic,
)


class TopicCalls(AdminBase):
    """Topics and the cluster."""

    def create_topics(self, new_topics: list[NewTopic], **kwargs: Any) -> dict[str, Future[None]]:
        """Create topics (on the controller). ``validate_only=True`` checks without creating.

        ``operation_timeout`` (s) is how long the broker waits for the topics to exist everywhere
        before answering (0: answer at once); ``request_timeout`` bounds the whole call, retries included.
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

        return self._run(by_name, CREATE_TOPICS, routers.CONTROLLER, body, parse, request_s, policy=_changing(operation_ms))

    def delete_topics(self, topics: list[str], **kwargs: Any) -> dict[str, Future[None]]:
        """Delete topics (on the controller); an unknown topic fails its future with UNKNOWN_TOPIC_OR_PART."""
        names = _check_list(topics, "topic strings", str)
        request_s, operation_ms, _ = self._options(kwargs, operation=True)
        _no_duplicates(names, "topics")

        def body(keys: list[str], version: int) -> dict[str, Any]:
            if version >= 6:
                return {"topics": [{"name": n} for n in keys], "timeout_ms": operation_ms}
            return {"topic_names": keys, "timeout_ms": operation_ms}

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            return {r.name: _error(r.error_code, r.get("error_message")) for r in response.responses}

        return self._run(names, DELETE_TOPICS, routers.CONTROLLER, body, parse, request_s, policy=_changing(operation_ms))

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

        return self._run(by_name, CREATE_PARTITIONS, routers.CONTROLLER, body, parse, request_s, policy=_changing(operation_ms))

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        """Brokers, controller and topics (one, or all); never creates a topic."""
        return self._client.list_topics(topic, None if timeout is None or timeout < 0 else timeout)

    def describe_cluster(self, **kwargs: Any) -> Future[DescribeClusterResult]:
        """The cluster id, the controller and the brokers (DescribeCluster)."""
        include_ops = kwargs.pop("include_authorized_operations", False)
        if not isinstance(include_ops, bool):
            raise TypeError("include_authorized_operations must be a bool")
        request_s, _, _ = self._options(kwargs)

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            if response.error_code:
                return {_CLUSTER: KafkaError(response.error_code, response.get("error_message"))}
            nodes = [Node(b.broker_id, b.host, b.port, b.get("rack")) for b in response.brokers]
            controller = next((n for n in nodes if n.id == response.controller_id), None)
            ops = response.get("cluster_authorized_operations", -(2**31))
            authorized = None if not include_ops or ops == -(2**31) else [b for b in range(32) if ops >> b & 1]
            return {_CLUSTER: DescribeClusterResult(controller, nodes, response.cluster_id, authorized)}

        body: Callable[[list[str], int], Mapping[str, Any]] = lambda keys, version: {  # noqa: E731
            "include_cluster_authorized_operations": include_ops
        }
        futures = self._run([_CLUSTER], DESCRIBE_CLUSTER, routers.ANY_BROKER, body, parse, request_s, policy=ADMIN_READ)
        return futures[_CLUSTER]


def _create_topic_entry(t: NewTopic) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": t.topic,
        "num_partitions": t.num_partitions,
        "replication_factor": t.replication_factor,
        "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in (t.config or {}).items()],
    }
    if t.replica_assignment is not None:
        # Kafka wants -1 for both counts when replicas are placed explicitly.
        entry["num_partitions"] = -1
        entry["replication_factor"] = -1
        entry["assignments"] = [
            {"partition_index": i, "broker_ids": list(replicas)} for i, replicas in enumerate(t.replica_assignment)
        ]
    return entry
