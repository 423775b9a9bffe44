"""A group's committed offsets at its coordinator (OffsetCommit, OffsetFetch) through the request
driver, for the consumer (and any client that reads or writes group offsets).

Keys are (topic, partition) tuples. Requests stop at version 9: v10 names topics by id, which
needs topic ids from metadata first; every broker we meet speaks v9 or lower.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..core.kafka_error import KafkaError
from ..core.policy import ErrorPolicy
from ..core.policy.group_offsets import COMMIT_OFFSETS, GROUP_OFFSETS
from ..protocol import error_codes as ec
from ..protocol.apis import OFFSET_COMMIT, OFFSET_FETCH
from ..protocol.codec import Struct
from .coordinators import GROUP, Coordinators, ToCoordinator
from .driver import Cluster, Operation

TP = tuple[str, int]
MAX_VERSION = 9  # the last version that names topics


class Committed(NamedTuple):
    """A partition's committed position; ``offset`` -1 means none committed. A named tuple: the
    consumer stores one per record poll() hands over, and a frozen dataclass costs 4x to make."""

    offset: int
    metadata: str | None = None
    leader_epoch: int = -1


@dataclass(frozen=True)
class Committer:
    """Who commits: a group member's generation (or KIP-848 epoch) and ids; the defaults commit
    as no member, which a coordinator accepts only for a group without members."""

    generation: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


def commit_operation(
    client: Cluster,
    coordinators: Coordinators,
    group_id: str,
    offsets: Mapping[TP, Committed],
    *,
    member: Committer = Committer(),
    deadline: float,
    backoff_ms: tuple[int, int] = (100, 1000),
    policy: ErrorPolicy = COMMIT_OFFSETS,
    live: set[Operation[Any]] | None = None,
) -> Operation[TP]:
    """An Operation (not started) committing each partition's offset; each key resolves to None."""

    def body(keys: list[TP], version: int) -> dict[str, Any]:
        topics: dict[str, list[dict[str, Any]]] = {}
        for topic, partition in keys:
            c = offsets[(topic, partition)]
            topics.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "committed_offset": c.offset,
                    "committed_leader_epoch": c.leader_epoch,
                    "committed_metadata": c.metadata,
                }
            )
        return {
            "group_id": group_id,
            "generation_id_or_member_epoch": member.generation,
            "member_id": member.member_id,
            "group_instance_id": member.group_instance_id,
            "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
        }

    def parse(response: Struct, keys: list[TP], node: int | None) -> dict[TP, Any]:
        out: dict[TP, Any] = {}
        for t in response.topics:
            for p in t.partitions:
                tp = (t.name, p.partition_index)
                out[tp] = _error("OffsetCommit", tp, p.error_code) if p.error_code else None
        for tp in keys:
            out.setdefault(tp, KafkaError(ec.UNKNOWN_TOPIC_OR_PARTITION, f"OffsetCommit: no answer for {tp}"))
        return out

    return Operation(
        client,
        offsets,
        api=OFFSET_COMMIT,
        router=ToCoordinator(coordinators, GROUP, lambda _key: group_id),
        body=body,
        parse=parse,
        policy=policy,
        deadline=deadline,
        backoff_ms=backoff_ms,
        max_version=MAX_VERSION,
        live=live,
    )


def fetch_operation(
    client: Cluster,
    coordinators: Coordinators,
    group_id: str,
    partitions: list[TP],
    *,
    require_stable: bool = True,
    deadline: float,
    backoff_ms: tuple[int, int] = (100, 1000),
    policy: ErrorPolicy = GROUP_OFFSETS,
    live: set[Operation[Any]] | None = None,
) -> Operation[TP]:
    """An Operation (not started) reading each partition's `Committed` position. ``require_stable``
    (KIP-447) waits out transactions holding uncommitted offsets, as read_committed consumers must."""

    def body(keys: list[TP], version: int) -> dict[str, Any]:
        topics: dict[str, list[int]] = {}
        for topic, partition in keys:
            topics.setdefault(topic, []).append(partition)
        wanted = [{"name": n, "partition_indexes": ps} for n, ps in topics.items()]
        stable = {"require_stable": require_stable} if version >= 7 else {}  # older brokers cannot wait
        if version >= 8:
            return {"groups": [{"group_id": group_id, "topics": wanted}], **stable}
        return {"group_id": group_id, "topics": wanted, **stable}

    def parse(response: Struct, keys: list[TP], node: int | None) -> dict[TP, Any]:
        if response.groups:  # v8+
            group = response.groups[0]
            code, topics = group.error_code, group.topics
        else:
            code, topics = response.error_code, response.topics
        if code:
            return dict.fromkeys(keys, _error("OffsetFetch", group_id, code))
        out: dict[TP, Any] = {}
        for t in topics:
            for p in t.partitions:
                tp = (t.name, p.partition_index)
                if p.error_code:
                    out[tp] = _error("OffsetFetch", tp, p.error_code)
                else:
                    out[tp] = Committed(p.committed_offset, p.metadata or None, p.committed_leader_epoch)
        for tp in keys:
            out.setdefault(tp, Committed(-1))
        return out

    return Operation(
        client,
        partitions,
        api=OFFSET_FETCH,
        router=ToCoordinator(coordinators, GROUP, lambda _key: group_id),
        body=body,
        parse=parse,
        policy=policy,
        deadline=deadline,
        backoff_ms=backoff_ms,
        max_version=MAX_VERSION,
        live=live,
    )


def _error(api: str, what: object, code: int) -> KafkaError:
    return KafkaError(code, f"{api} {what}: {KafkaError(code).str()}")
