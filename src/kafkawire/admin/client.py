"""`AdminClient`: confluent-kafka's admin API over kafkawire's protocol layer and IO client.

Every call checks its input in the caller's thread (TypeError/ValueError before any request),
then hands an `Operation` to the IO thread and returns futures at once. The futures resolve on
the IO thread, so their done-callbacks run there and must not block.
"""

from __future__ import annotations

import struct
import warnings
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from ..client import routers
from ..client.cluster import Client
from ..client.coordinators import GROUP, Coordinators, ToCoordinator
from ..client.driver import Operation, Router
from ..client.list_offsets import OffsetAnswer, list_offsets_operation
from ..config import parse_config
from ..core.policy import ErrorPolicy
from ..core.policy.admin import ADMIN_READ, ADMIN_STARTED, ADMIN_WRITE
from ..errors import KafkaError, KafkaException
from ..model import BrokerMetadata, ClusterMetadata, TopicPartition
from ..protocol.apis import (
    ALTER_CONFIGS,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_RECORDS,
    DELETE_TOPICS,
    DESCRIBE_CLUSTER,
    DESCRIBE_CONFIGS,
    DESCRIBE_GROUPS,
    INCREMENTAL_ALTER_CONFIGS,
    LIST_GROUPS,
)
from ..protocol.codec import Struct
from ..protocol.schema import Api
from .config import ADMIN_OPTIONS
from .types import (
    CONFIG_WIRE_TYPE,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ConsumerGroupState,
    DeletedRecords,
    DescribeClusterResult,
    GroupMember,
    GroupMetadata,
    IsolationLevel,
    ListConsumerGroupsResult,
    ListOffsetsResultInfo,
    MemberAssignment,
    MemberDescription,
    NewPartitions,
    NewTopic,
    Node,
    OffsetSpec,
    ResourceType,
    check_new_partitions,
    check_new_topic,
)

K = TypeVar("K")

_MAX_TIMEOUT_S = 3600.0  # librdkafka's bound for request_timeout and operation_timeout
_GROUP_ID_NOT_FOUND = 69
_CLUSTER = "cluster"


def _error(code: int, message: str | None) -> KafkaError | None:
    """A response entry's error, keeping the broker's message (brokers fill it with "No error." too)."""
    return None if code == 0 else KafkaError(code, message or None)


def _seconds(name: str, value: Any, low: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    if not low <= value <= _MAX_TIMEOUT_S:
        raise ValueError(
            f'Invalid value type for "{name}": expecting integer in range {int(low * 1000)}..{int(_MAX_TIMEOUT_S * 1000)}'
        )
    return float(value)


def _check_list(value: Any, what: str, element: type | tuple[type, ...], *, error: type[Exception] = TypeError) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"Expected a list of {what}, not {type(value).__name__}")
    if not value:
        raise ValueError(f"Expected non-empty list of {what}")
    for item in value:
        if not isinstance(item, element):
            raise error(f"Expected list of {what}, got an element of type {type(item).__name__}")
    return value


def _no_duplicates(keys: Iterable[Any], what: str) -> None:
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            raise ValueError(f"Duplicate {what} not allowed: {key}")
        seen.add(key)


class AdminClient:
    """Create, describe, change and delete topics, configs, groups and records.

    Built like confluent-kafka's ``AdminClient``: every call returns a dict of futures keyed by
    the entity (topic name, `ConfigResource`, group id, `TopicPartition`), and an entity's
    failure is a `KafkaException` on its own future.
    """

    def __init__(self, conf: Mapping[str, Any], *, _client: Client | None = None, **kwargs: Any) -> None:
        """``kwargs`` are more configuration keys. ``_client`` is for tests only: a stand-in for the
        network `Client` (its ``request_io``, ``refresh_metadata_io``, ``metadata`` and ``engine``),
        so routing, retries and request bodies can be unit-tested at the client boundary."""
        merged = {**conf, **kwargs}
        self._config = parse_config(merged, ADMIN_OPTIONS)
        self._client = Client(merged) if _client is None else _client
        self._client.on_error = self._config["error_cb"]
        self._default_timeout = self._config["socket.timeout.ms"] / 1000
        self._backoff = (self._config["retry.backoff.ms"], self._config["retry.backoff.max.ms"])
        self._live: set[Operation[Any]] = set()
        self._coordinators = Coordinators(self._client)
        self._to_group = ToCoordinator(self._coordinators, GROUP)

    def close(self) -> None:
        """Fail what is still in flight with ``_DESTROY`` and stop the IO thread."""
        self._client.close()
        for op in list(self._live):
            op.abort(KafkaError(KafkaError._DESTROY, "admin client closed"))

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- common plumbing -------------------------------------------------------------------

    def _options(
        self, kwargs: Mapping[str, Any], *, operation: bool = False, validate: bool = False
    ) -> tuple[float, int, bool]:
        """(request timeout s, operation timeout ms, validate_only) from a call's keyword arguments."""
        allowed = {"request_timeout"} | ({"operation_timeout"} if operation else set()) | (
            {"validate_only"} if validate else set()
        )
        for key in kwargs:
            if key not in allowed:
                raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        request_timeout = kwargs.get("request_timeout")
        request_s = self._default_timeout if request_timeout is None else _seconds("request_timeout", request_timeout, 0)
        operation_s = _seconds("operation_timeout", kwargs.get("operation_timeout", 0), -0.001)
        validate_only = kwargs.get("validate_only", False)
        if not isinstance(validate_only, bool):
            raise TypeError(f"Expected validate_only to be bool type, not {type(validate_only).__name__}")
        return request_s, max(-1, int(operation_s * 1000)), validate_only

    def _run(
        self,
        keys: Iterable[K],
        api: Api,
        router: Router,
        body: Callable[[list[K], int], Mapping[str, Any]],
        parse: Callable[[Struct, list[K], int | None], Mapping[K, Any]],
        timeout: float,
        *,
        policy: ErrorPolicy = ADMIN_WRITE,
    ) -> dict[K, Future[Any]]:
        return Operation(
            self._client,
            keys,
            api=api,
            router=router,
            body=body,
            parse=parse,
            policy=policy,
            deadline=self._client.engine.now() + timeout,
            backoff_ms=self._backoff,
            live=self._live,
        ).start().futures

    # --- topics ----------------------------------------------------------------------------

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

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """New SASL username and password for the next authentications (confluent-kafka's call)."""
        self._client.set_sasl_credentials(username, password)

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

    # --- configs ---------------------------------------------------------------------------

    def _config_resources(self, resources: Any, element_error: type[Exception]) -> tuple[list[ConfigResource], Router]:
        """Checked resources and where they go: the one BROKER resource's broker, else ``None``."""
        items = _check_list(resources, "ConfigResource objects", ConfigResource, error=element_error)
        _no_duplicates(items, "resources")
        brokers = [r for r in items if r.restype is ResourceType.BROKER]
        if len(brokers) > 1:
            raise ValueError("Only one ConfigResource of type BROKER is allowed per call")
        for r in items:
            if r.restype not in CONFIG_WIRE_TYPE:
                raise ValueError(f"Unsupported resource type {r.restype} for {r.name}")
        if brokers:
            try:
                node = int(brokers[0].name)
            except ValueError:
                raise ValueError(f"Expected an int32 broker_id for ConfigResource(type=BROKER, name={brokers[0].name})") from None
            return items, routers.ToNode(node)
        return items, routers.ANY_BROKER

    def describe_configs(self, resources: list[ConfigResource], **kwargs: Any) -> dict[ConfigResource, Future[dict[str, ConfigEntry]]]:
        """Every config entry of each resource, with synonyms; at most one BROKER resource per call."""
        items, router = self._config_resources(resources, ValueError)
        request_s, _, _ = self._options(kwargs)

        def body(keys: list[ConfigResource], version: int) -> dict[str, Any]:
            return {
                "resources": [
                    {"resource_type": CONFIG_WIRE_TYPE[r.restype], "resource_name": r.name, "configuration_keys": None}
                    for r in keys
                ],
                "include_synonyms": True,
            }

        def parse(response: Struct, keys: list[ConfigResource], node: int | None) -> dict[ConfigResource, Any]:
            by_wire = {(CONFIG_WIRE_TYPE[r.restype], r.name): r for r in keys}
            out: dict[ConfigResource, Any] = {}
            for result in response.results:
                key = by_wire.get((result.resource_type, result.resource_name))
                if key is None:
                    continue
                error = _error(result.error_code, result.get("error_message"))
                out[key] = error if error is not None else {c.name: _config_entry(c) for c in result.configs}
            return out

        return self._run(items, DESCRIBE_CONFIGS, router, body, parse, request_s, policy=ADMIN_READ)

    def alter_configs(self, resources: list[ConfigResource], **kwargs: Any) -> dict[ConfigResource, Future[None]]:
        """Replace the whole dynamic configuration of each resource with its ``set_config`` values.

        Warning: every dynamic key of the resource that is not set is reverted to its default.
        Prefer `incremental_alter_configs`, which changes only the keys named.
        """
        warnings.warn(
            "alter_configs has been deprecated. Use incremental_alter_configs instead.", DeprecationWarning, stacklevel=2
        )
        items, router = self._config_resources(resources, ValueError)
        request_s, _, validate_only = self._options(kwargs, validate=True)

        def body(keys: list[ConfigResource], version: int) -> dict[str, Any]:
            return {
                "resources": [
                    {
                        "resource_type": CONFIG_WIRE_TYPE[r.restype],
                        "resource_name": r.name,
                        "configs": [{"name": k, "value": v} for k, v in r.set_config_dict.items()],
                    }
                    for r in keys
                ],
                "validate_only": validate_only,
            }

        return self._run(items, ALTER_CONFIGS, _controller_unless(router), body, _alter_parse, request_s)

    def incremental_alter_configs(self, resources: list[ConfigResource], **kwargs: Any) -> dict[ConfigResource, Future[None]]:
        """Apply each resource's ``incremental_configs`` (SET, DELETE, APPEND, SUBTRACT); other keys stay."""
        items, router = self._config_resources(resources, TypeError)
        request_s, _, validate_only = self._options(kwargs, validate=True)
        for r in items:
            if not r.incremental_configs:
                raise ValueError(
                    "expected non-empty list of ConfigEntry to alter incrementally in incremental_configs field"
                )
            for entry in r.incremental_configs:
                if not isinstance(entry, ConfigEntry):
                    raise TypeError("incremental_configs must hold ConfigEntry objects")
                if not isinstance(entry.incremental_operation, AlterConfigOpType):
                    raise TypeError("ConfigEntry.incremental_operation must be an AlterConfigOpType")
                if entry.incremental_operation is not AlterConfigOpType.DELETE and not isinstance(entry.value, str):
                    raise TypeError(f"ConfigEntry {entry.name}: value must be a string for {entry.incremental_operation.name}")
            _no_duplicates((e.name for e in r.incremental_configs), f"config entries of {r}")

        def body(keys: list[ConfigResource], version: int) -> dict[str, Any]:
            return {
                "resources": [
                    {
                        "resource_type": CONFIG_WIRE_TYPE[r.restype],
                        "resource_name": r.name,
                        "configs": [
                            {
                                "name": e.name,
                                "config_operation": e.incremental_operation.value,  # type: ignore[union-attr]
                                "value": None if e.incremental_operation is AlterConfigOpType.DELETE else e.value,
                            }
                            for e in r.incremental_configs
                        ],
                    }
                    for r in keys
                ],
                "validate_only": validate_only,
            }

        return self._run(items, INCREMENTAL_ALTER_CONFIGS, _controller_unless(router), body, _alter_parse, request_s)

    # --- groups ----------------------------------------------------------------------------

    def _per_broker(
        self, request_s: float, body: Mapping[str, Any] | Callable[[int], Mapping[str, Any]], api: Api
    ) -> Future[dict[int, Any]]:
        """One request to every broker in the metadata; a future of broker id -> response or KafkaError."""
        outer: Future[dict[int, Any]] = Future()
        outer.set_running_or_notify_cancel()
        client = self._client

        def start() -> None:
            def known(_response: Struct | None, error: KafkaError | None) -> None:
                brokers = sorted(client.metadata.brokers)
                if not brokers:
                    outer.set_exception(KafkaException(error or KafkaError(KafkaError._TRANSPORT, "no brokers known")))
                    return
                futures = Operation(
                    client,
                    brokers,
                    api=api,
                    router=routers.EVERY_BROKER,
                    body=lambda keys, version: body(version) if callable(body) else body,
                    parse=lambda response, keys, node: {keys[0]: response},
                    policy=ADMIN_READ,
                    deadline=deadline,
                    backoff_ms=self._backoff,
                    live=self._live,
                ).start_io().futures
                _gather(futures, outer)

            client.refresh_metadata_io([], known, timeout=request_s)

        deadline = client.engine.now() + request_s
        client.engine.call_soon(start)
        return outer

    def list_consumer_groups(self, **kwargs: Any) -> Future[ListConsumerGroupsResult]:
        """Every group every broker coordinates (optionally only in ``states``); failed brokers go to ``errors``."""
        states = kwargs.pop("states", None)
        if states is not None:
            if not isinstance(states, set):
                raise TypeError("'states' must be a set")
            if not all(isinstance(s, ConsumerGroupState) for s in states):
                raise TypeError("All elements of states must be of type ConsumerGroupState")
        request_s, _, _ = self._options(kwargs)
        wanted = None if not states else {s.wire_name() for s in states}

        def body(version: int) -> dict[str, Any]:
            return {"states_filter": sorted(wanted) if wanted and version >= 4 else []}

        result: Future[ListConsumerGroupsResult] = Future()
        result.set_running_or_notify_cancel()

        def combine(answers: Future[dict[int, Any]]) -> None:
            try:
                per_broker = answers.result()
            except Exception as exc:
                result.set_exception(exc)
                return
            valid: dict[str, ConsumerGroupListing] = {}
            errors: list[Exception] = []
            for response in per_broker.values():
                if isinstance(response, KafkaError):
                    errors.append(KafkaException(response))
                    continue
                if response.error_code:
                    errors.append(KafkaException(KafkaError(response.error_code)))
                    continue
                for g in response.groups:
                    state = ConsumerGroupState.from_wire(g.get("group_state"))
                    if wanted is not None and g.get("group_state") and g.group_state not in wanted:
                        continue
                    valid[g.group_id] = ConsumerGroupListing(g.group_id, g.protocol_type == "", state)
            result.set_result(ListConsumerGroupsResult(list(valid.values()), errors))

        self._per_broker(request_s, body, LIST_GROUPS).add_done_callback(combine)
        return result

    def _describe_groups(
        self, groups: list[str], router: Router, request_s: float
    ) -> dict[str, Future[tuple[Struct, int | None]]]:
        """DescribeGroups at each group's coordinator: the raw entry and the broker that answered."""

        def body(keys: list[str], version: int) -> dict[str, Any]:
            return {"groups": keys, "include_authorized_operations": False}

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for g in response.groups:
                error = _error(g.error_code, g.get("error_message"))
                out[g.group_id] = error if error is not None else (g, node)
            return out

        return self._run(groups, DESCRIBE_GROUPS, router, body, parse, request_s, policy=ADMIN_READ)

    def describe_consumer_groups(self, group_ids: list[str], **kwargs: Any) -> dict[str, Future[ConsumerGroupDescription]]:
        """State, assignor and members (with their assignments) of each group, from its coordinator."""
        if not isinstance(group_ids, list):
            raise TypeError("Expected input to be list of group ids to be described")
        if not group_ids:
            raise ValueError("Expected at least one group to be described")
        if not all(isinstance(g, str) for g in group_ids):
            raise TypeError("Expected group ids to be strings")
        kwargs.pop("include_authorized_operations", None)
        request_s, _, _ = self._options(kwargs)
        _no_duplicates(group_ids, "groups")
        raw = self._describe_groups(group_ids, self._to_group, request_s)
        client = self._client

        def describe(entry: tuple[Struct, int | None]) -> ConsumerGroupDescription:
            g, node = entry
            state = ConsumerGroupState.from_wire(g.group_state)
            if state is ConsumerGroupState.DEAD:
                raise KafkaException(KafkaError(_GROUP_ID_NOT_FOUND, f"group {g.group_id} does not exist"))
            members = [
                MemberDescription(
                    m.member_id,
                    m.client_id,
                    m.client_host,
                    MemberAssignment(decode_assignment(m.member_assignment)),
                    m.get("group_instance_id"),
                )
                for m in g.members
            ]
            broker = client.metadata.brokers.get(node) if node is not None else None
            coordinator = None if broker is None else Node(broker.node_id, broker.host, broker.port, broker.rack)
            return ConsumerGroupDescription(g.group_id, g.protocol_type == "", members, g.protocol_data, state, coordinator)

        return {group: _then(fut, describe) for group, fut in raw.items()}

    def list_groups(self, group: str | None = None, timeout: float = -1) -> list[GroupMetadata]:
        """The legacy listing (librdkafka's): every group of every broker, described, or just ``group``."""
        request_s = self._default_timeout if timeout is None or timeout < 0 else timeout
        if group is not None:
            if not isinstance(group, str):
                raise TypeError("group must be a string")
            placement: dict[str, int | None] | None = None
            raw = self._describe_groups([group], self._to_group, request_s)
        else:
            per_broker = self._per_broker(request_s, {}, LIST_GROUPS).result(request_s + 1)
            placement = {}
            for node, response in per_broker.items():
                if isinstance(response, KafkaError):
                    raise KafkaException(response)
                if response.error_code:
                    raise KafkaException(KafkaError(response.error_code))
                for g in response.groups:
                    placement[g.group_id] = node
            if not placement:
                return []
            raw = self._describe_groups(list(placement), routers.Placed(placement), request_s)
        out = []
        for group_id, fut in raw.items():
            metadata = GroupMetadata()
            metadata.id = group_id
            try:
                g, answered_by = fut.result(request_s + 1)
            except KafkaException as exc:
                error = exc.args[0]
                metadata.error = error if isinstance(error, KafkaError) else KafkaError(KafkaError._FAIL, str(error))
                out.append(metadata)
                continue
            broker = None if answered_by is None else self._client.metadata.brokers.get(answered_by)
            if broker is not None:
                metadata.broker = BrokerMetadata(broker.node_id, broker.host, broker.port)
            metadata.state = g.group_state
            metadata.protocol_type = g.protocol_type
            metadata.protocol = g.protocol_data
            for m in g.members:
                member = GroupMember()
                member.id = m.member_id
                member.client_id = m.client_id
                member.client_host = m.client_host
                member.metadata = m.member_metadata
                member.assignment = m.member_assignment
                metadata.members.append(member)
            out.append(metadata)
        return out

    # --- offsets and records -----------------------------------------------------------------

    def list_offsets(
        self, topic_partition_offsets: dict[TopicPartition, OffsetSpec], **kwargs: Any
    ) -> dict[TopicPartition, Future[ListOffsetsResultInfo]]:
        """Each partition's earliest, latest, max-timestamp or by-timestamp offset, from its leader."""
        if not isinstance(topic_partition_offsets, dict):
            raise TypeError("Expected topic_partition_offsets to be dict of [TopicPartitions,OffsetSpec] for list offsets request")
        for tp, spec in topic_partition_offsets.items():
            if not isinstance(tp, TopicPartition):
                raise TypeError("partition must be a TopicPartition")
            if not tp.topic:
                raise ValueError("partition topic name cannot be empty")
            if tp.partition < 0:
                raise ValueError("partition index must be non-negative")
            if not isinstance(spec, OffsetSpec):
                raise TypeError("Value must be a OffsetSpec")
        isolation = kwargs.pop("isolation_level", IsolationLevel.READ_UNCOMMITTED)
        if not isinstance(isolation, IsolationLevel):
            raise TypeError("isolation_level argument should be an IsolationLevel")
        request_s, _, _ = self._options(kwargs)
        op = list_offsets_operation(
            self._client,
            {_tp(tp): spec.timestamp for tp, spec in topic_partition_offsets.items()},
            isolation_level=isolation.value,
            deadline=self._client.engine.now() + request_s,
            backoff_ms=self._backoff,
            policy=ADMIN_READ,
            live=self._live,
        ).start()

        def info(answer: OffsetAnswer) -> ListOffsetsResultInfo:
            return ListOffsetsResultInfo(answer.offset, answer.timestamp, answer.leader_epoch)

        return {tp: _then(fut, info) for tp, fut in op.futures.items()}

    def delete_records(self, topic_partition_offsets: list[TopicPartition], **kwargs: Any) -> dict[TopicPartition, Future[DeletedRecords]]:
        """Delete each partition's records before its offset (OFFSET_END, -1: all of them), at its leader."""
        if not isinstance(topic_partition_offsets, list):
            raise TypeError(f"Expected Request to be a list, got '{type(topic_partition_offsets).__name__}' ")
        for tp in topic_partition_offsets:
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"Element of the request list must be of type 'TopicPartition' got '{type(tp).__name__}' ")
            if tp.partition < 0:
                raise ValueError("'partition' cannot be negative")
        if not topic_partition_offsets:
            raise ValueError("Expected non-empty list of TopicPartition objects")
        _no_duplicates(topic_partition_offsets, "partitions")
        request_s, operation_ms, _ = self._options(kwargs, operation=True)
        offsets = {_tp(tp): tp.offset for tp in topic_partition_offsets}

        def body(keys: list[TopicPartition], version: int) -> dict[str, Any]:
            return {
                "topics": [
                    {"name": topic, "partitions": [{"partition_index": tp.partition, "offset": offsets[tp]} for tp in tps]}
                    for topic, tps in _by_topic(keys).items()
                ],
                "timeout_ms": operation_ms,
            }

        def parse(response: Struct, keys: list[TopicPartition], node: int | None) -> dict[TopicPartition, Any]:
            out: dict[TopicPartition, Any] = {}
            for t in response.topics:
                for p in t.partitions:
                    error = _error(p.error_code, None)
                    out[TopicPartition(t.name, p.partition_index)] = error if error is not None else DeletedRecords(p.low_watermark)
            return out

        return self._run(offsets, DELETE_RECORDS, routers.LEADERS, body, parse, request_s)


def _tp(tp: TopicPartition) -> TopicPartition:
    """A key without offset or error: results are keyed by topic and partition only."""
    return TopicPartition(tp.topic, tp.partition)


def _by_topic(keys: Iterable[TopicPartition]) -> dict[str, list[TopicPartition]]:
    out: dict[str, list[TopicPartition]] = {}
    for tp in keys:
        out.setdefault(tp.topic, []).append(tp)
    return out


def create_topic_if_missing(conf: Mapping[str, Any], topic: NewTopic, timeout: float) -> bool:
    """Create ``topic`` unless it exists; True when this call created it.

    For set-up code (the demo, the pipeline, the exactly-once control topic) where a topic left by
    an earlier run is as good as a new one. Any other error is raised.
    """
    admin = AdminClient(dict(conf))
    try:
        futures = admin.create_topics([topic], operation_timeout=timeout, request_timeout=timeout)
        futures[topic.topic].result(timeout + 5)
        return True
    except KafkaException as exc:
        error = exc.args[0]
        if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        raise
    finally:
        admin.close()


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


def _config_entry(c: Struct) -> ConfigEntry:
    source = ConfigSource.from_wire(c.get("config_source", -1))
    synonyms = {
        s.name: ConfigEntry(s.name, s.value, ConfigSource.from_wire(s.source), is_synonym=True)
        for s in c.get("synonyms") or ()
        if s.name != c.name or ConfigSource.from_wire(s.source) is not source
    }
    is_default = c.get("is_default", False) or source is ConfigSource.DEFAULT_CONFIG
    return ConfigEntry(
        c.name,
        None if c.is_sensitive else c.value,
        source,
        is_read_only=c.read_only,
        is_default=is_default,
        is_sensitive=c.is_sensitive,
        synonyms=synonyms,
    )


def _alter_parse(response: Struct, keys: list[ConfigResource], node: int | None) -> dict[ConfigResource, Any]:
    by_wire = {(CONFIG_WIRE_TYPE[r.restype], r.name): r for r in keys}
    out: dict[ConfigResource, Any] = {}
    for r in response.responses:
        key = by_wire.get((r.resource_type, r.resource_name))
        if key is not None:
            out[key] = _error(r.error_code, r.get("error_message"))
    return out


def _changing(operation_ms: int) -> ErrorPolicy:
    """The policy of a call that changes topics: without waiting (operation_timeout <= 0), a
    broker's REQUEST_TIMED_OUT means the change started (Kafka 2.3: see core/policy/admin.py)."""
    return ADMIN_STARTED if operation_ms <= 0 else ADMIN_WRITE


def _controller_unless(router: Router) -> Router:
    """Config changes go to the named broker for a BROKER resource, else to the controller."""
    return routers.CONTROLLER if router is routers.ANY_BROKER else router


def _then(source: Future[Any], fn: Callable[[Any], Any]) -> Future[Any]:
    """A future of ``fn(source's result)``; ``fn`` may raise to fail it."""
    out: Future[Any] = Future()
    out.set_running_or_notify_cancel()

    def done(f: Future[Any]) -> None:
        try:
            out.set_result(fn(f.result()))
        except BaseException as exc:  # handed to the caller through the future
            out.set_exception(exc)

    source.add_done_callback(done)
    return out


def _gather(futures: Mapping[K, Future[Any]], outer: Future[dict[K, Any]]) -> None:
    """Resolve ``outer`` with key -> result (or the KafkaError) once every future is done."""
    remaining = len(futures)

    def one_done(_f: Future[Any]) -> None:
        nonlocal remaining
        remaining -= 1
        if remaining:
            return
        out: dict[K, Any] = {}
        for key, fut in futures.items():
            exc = fut.exception()
            if exc is None:
                out[key] = fut.result()
            else:
                error = exc.args[0] if isinstance(exc, KafkaException) else None
                out[key] = error if isinstance(error, KafkaError) else KafkaError(KafkaError._FAIL, str(exc))
        outer.set_result(out)

    for fut in futures.values():
        fut.add_done_callback(one_done)


def decode_assignment(data: bytes | None) -> list[TopicPartition]:
    """A consumer-protocol member assignment (version, [topic, [partition]], user data) -> partitions.

    Anything that is not that format (another protocol type, an empty assignment) reads as none.
    """
    if not data:
        return []
    out: list[TopicPartition] = []
    try:
        pos = 2  # int16 version
        (topics,) = struct.unpack_from(">i", data, pos)
        pos += 4
        for _ in range(max(0, topics)):
            (length,) = struct.unpack_from(">h", data, pos)
            pos += 2
            topic = bytes(data[pos : pos + length]).decode()
            if len(topic.encode()) != length:
                return []
            pos += length
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            partitions = struct.unpack_from(f">{max(0, count)}i", data, pos)
            pos += 4 * max(0, count)
            out.extend(TopicPartition(topic, p) for p in partitions)
    except (struct.error, UnicodeDecodeError):
        return []
    return out


