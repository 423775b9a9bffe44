"""Consumer group calls: list (every broker), describe (each group's coordinator), the legacy list_groups."""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from ..base.model import BrokerMetadata, TopicPartition
from ..client import routers
from ..client.driver import Operation, Router, wait
from ..core.kafka_error import KafkaError, KafkaException
from ..core.policy.admin import ADMIN_READ
from ..protocol import error_codes as ec
from ..protocol.apis import (
    CONSUMER_GROUP_DESCRIBE,
    DESCRIBE_GROUPS,
    LIST_GROUPS,
)
from ..protocol.codec import Struct
from ..protocol.schema import Api
from .acl_types import operations_from_bits
from .base import AdminBase, _all_at_once, _error, _gather, _no_duplicates, _then, _unless_failed_with
from .group_types import (
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ConsumerGroupState,
    ConsumerGroupType,
    GroupMember,
    GroupMetadata,
    ListConsumerGroupsResult,
    MemberAssignment,
    MemberDescription,
)
from .types import (
    Node,
)

_CONSUMER_PROTOCOL_TYPES = frozenset({"", "consumer"})  # "": a simple group (commits only, no members)
# ConsumerGroupDescribe's answers after which librdkafka asks DescribeGroups: the group is not a
# KIP-848 group (classic, or none), or the broker cannot answer it.
_NOT_A_CONSUMER_GROUP = frozenset({ec.GROUP_ID_NOT_FOUND, ec.UNSUPPORTED_VERSION, KafkaError._UNSUPPORTED_FEATURE})


class GroupCalls(AdminBase):
    """Consumer groups."""

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
                futures = (
                    Operation(
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
                    )
                    .start_io()
                    .futures
                )
                _gather(futures, outer)

            client.refresh_metadata_io([], known, timeout=request_s)

        deadline = client.engine.now() + request_s
        client.engine.call_soon(start)
        return outer

    def list_consumer_groups(self, **kwargs: Any) -> Future[ListConsumerGroupsResult]:
        """Every group every broker coordinates (optionally only in ``states``, of ``types``);
        failed brokers go to ``errors``. Brokers before ListGroups v5 (KIP-848) know classic groups only."""
        states = _enum_set(kwargs.pop("states", None), ConsumerGroupState, "states")
        types = _enum_set(kwargs.pop("types", None), ConsumerGroupType, "types")
        request_s, _, _ = self._options(kwargs)
        wanted = None if not states else {s.wire_name() for s in states}
        wanted_types = None if not types else set(types)

        def body(version: int) -> dict[str, Any]:
            return {
                "states_filter": sorted(wanted) if wanted and version >= 4 else [],
                "types_filter": sorted(t.wire_name() for t in wanted_types) if wanted_types and version >= 5 else [],
            }

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
                    # Before ListGroups v5 the broker says no type (UNKNOWN, as confluent-kafka
                    # reports it) and cannot filter by type: those groups are kept, like states.
                    kind = ConsumerGroupType.from_wire(g.get("group_type"))
                    if wanted_types is not None and g.get("group_type") and kind not in wanted_types:
                        continue
                    valid[g.group_id] = ConsumerGroupListing(g.group_id, g.protocol_type == "", state, kind)
            # by group id, whatever order the brokers answered in, as librdkafka merges them
            result.set_result(ListConsumerGroupsResult([valid[g] for g in sorted(valid)], errors))

        self._per_broker(request_s, body, LIST_GROUPS).add_done_callback(combine)
        return result

    def _describe_groups(
        self, groups: list[str], router: Router, request_s: float, include_ops: bool = False
    ) -> dict[str, Future[tuple[Struct, int | None]]]:
        """DescribeGroups at each group's coordinator: the raw entry and the broker that answered."""

        def body(keys: list[str], version: int) -> dict[str, Any]:
            return {"groups": keys, "include_authorized_operations": include_ops and version >= 3}

        return self._run(groups, DESCRIBE_GROUPS, router, body, _per_group, request_s, policy=ADMIN_READ)

    def _consumer_group_describe(
        self, groups: list[str], request_s: float, include_ops: bool
    ) -> dict[str, Future[tuple[Struct, int | None]]]:
        """ConsumerGroupDescribe (KIP-848) at each group's coordinator: the raw entry and the broker that answered."""

        def body(keys: list[str], version: int) -> dict[str, Any]:
            return {"group_ids": keys, "include_authorized_operations": include_ops}

        return self._run(
            groups, CONSUMER_GROUP_DESCRIBE, self._to_group, body, _per_group, request_s, policy=ADMIN_READ
        )

    def describe_consumer_groups(
        self, group_ids: list[str], **kwargs: Any
    ) -> dict[str, Future[ConsumerGroupDescription]]:
        """State, assignor and members (with their assignments) of each group, from its coordinator.

        As librdkafka: ConsumerGroupDescribe first; a group it does not know as a KIP-848 group (or
        a broker without it) is asked again with DescribeGroups, alone."""
        if not isinstance(group_ids, list):
            raise TypeError(f"group_ids must be a list of the groups to describe, not {type(group_ids).__name__}")
        if not group_ids:
            raise ValueError("group_ids is empty: no group to describe")
        if not all(isinstance(g, str) for g in group_ids):
            raise TypeError("Expected group ids to be strings")
        include_ops = kwargs.pop("include_authorized_operations", False)
        if not isinstance(include_ops, bool):
            raise TypeError("include_authorized_operations must be a bool")
        request_s, _, _ = self._options(kwargs)
        _no_duplicates(group_ids, "groups")
        first = self._consumer_group_describe(group_ids, request_s, include_ops)
        coordinator = self._node

        def consumer(entry: tuple[Struct, int | None]) -> ConsumerGroupDescription:
            g, node = entry
            members = [
                MemberDescription(
                    m.member_id,
                    m.client_id,
                    m.client_host,
                    MemberAssignment(_assigned(m.assignment)),
                    m.instance_id,
                    MemberAssignment(_assigned(m.target_assignment)),
                )
                for m in g.members
            ]
            return ConsumerGroupDescription(
                g.group_id,
                False,
                members,
                g.assignor_name,
                ConsumerGroupState.from_wire(g.group_state),
                coordinator(node),
                operations_from_bits(g.authorized_operations),
                ConsumerGroupType.CONSUMER,
            )

        def classic(entry: tuple[Struct, int | None]) -> ConsumerGroupDescription:
            g, node = entry  # a group the broker does not know is described Dead (before Kafka 4), as librdkafka does
            if g.protocol_type not in _CONSUMER_PROTOCOL_TYPES:
                # librdkafka's answer for a group of another protocol (Connect's workers, a custom one)
                message = f"group {g.group_id} is not a consumer group (protocol type {g.protocol_type!r})"
                raise KafkaException(KafkaError(KafkaError._INVALID_ARG, message))
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
            return ConsumerGroupDescription(
                g.group_id,
                g.protocol_type == "",
                members,
                g.protocol_data,
                ConsumerGroupState.from_wire(g.group_state),
                coordinator(node),
                operations_from_bits(g.authorized_operations) if include_ops else None,
                ConsumerGroupType.CLASSIC,
            )

        def described_classically(group: str) -> Callable[[], Future[ConsumerGroupDescription]]:
            return lambda: _then(self._describe_groups([group], self._to_group, request_s, include_ops)[group], classic)

        return _all_at_once(
            {
                group: _unless_failed_with(_then(fut, consumer), _NOT_A_CONSUMER_GROUP, described_classically(group))
                for group, fut in first.items()
            }
        )

    def _node(self, node_id: int | None) -> Node | None:
        """The broker that answered, as a ``Node`` (None when unknown)."""
        broker = self._client.metadata.brokers.get(node_id) if node_id is not None else None
        return None if broker is None else Node(broker.node_id, broker.host, broker.port, broker.rack)

    def list_groups(self, group: str | None = None, timeout: float = -1) -> list[GroupMetadata]:
        """The legacy listing (librdkafka's): every group of every broker, described, or just ``group``."""
        self._check_handle()
        request_s = self._default_timeout if timeout is None or timeout < 0 else timeout
        if group is not None:
            if not isinstance(group, str):
                raise TypeError("group must be a string")
            placement: dict[str, int | None] | None = None
            raw = self._describe_groups([group], self._to_group, request_s)
        else:
            per_broker = wait(self._per_broker(request_s, {}, LIST_GROUPS), request_s)
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
                g, answered_by = wait(fut, request_s)
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


def _per_group(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
    """A describe answer (DescribeGroups' or ConsumerGroupDescribe's): group -> its error, or (entry, node)."""
    out: dict[str, Any] = {}
    for g in response.groups:
        error = _error(g.error_code, g.get("error_message"))
        out[g.group_id] = error if error is not None else (g, node)
    return out


def _enum_set(value: Any, cls: type, what: str) -> set[Any] | None:
    """confluent-kafka's checks of the ``states``/``types`` filters: a set of the enum, or None."""
    if value is None:
        return None
    if not isinstance(value, set):
        raise TypeError(f"'{what}' must be a set, not {type(value).__name__}")
    if not all(isinstance(v, cls) for v in value):
        raise TypeError(f"'{what}' may hold only {cls.__name__} members")
    return value


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


def _assigned(assignment: Struct) -> list[TopicPartition]:
    """A ConsumerGroupDescribe assignment (topics by id and name) as partitions, named."""
    return [TopicPartition(t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions]
