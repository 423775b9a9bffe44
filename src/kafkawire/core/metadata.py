"""The client's picture of the cluster: brokers, topics, partitions and their leaders.

Built from Metadata responses; `core.metadata_refresh` decides when to ask, this module shapes
the request (`request_body`) and takes answers in (`update`). Leader lookups are plain dictionary
reads so the produce path can afford them per batch.

Invariant: an answer larger than any real cluster (`MAX_BROKERS`, `MAX_TOPICS`, `MAX_PARTITIONS`)
is refused, its counts as the codec reads them (`COUNT_LIMITS`, before the arrays are built) and
the partitions of all its topics together by `check_response`, so a hostile peer cannot make the
client hold (or connect to) more than these.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from ..protocol.codec import Struct
from ..protocol.error_codes import UNKNOWN_TOPIC_OR_PARTITION
from ..protocol.value_class import ValueClass

NO_LEADER = -1

# Far above the largest clusters run today (thousands of brokers, hundreds of thousands of
# partitions), far below what fits in one 100 MB answer.
MAX_BROKERS = 10_000
MAX_TOPICS = 100_000
MAX_PARTITIONS = 1_000_000  # over all topics of one answer
# What the codec checks as it reads each array's count (dotted field path -> most elements).
COUNT_LIMITS = {"brokers": MAX_BROKERS, "topics": MAX_TOPICS, "topics.partitions": MAX_PARTITIONS}


class MetadataError(ValueError):
    """A Metadata answer that cannot be trusted (the connection that carried it is failed)."""


def check_response(body: Struct) -> None:
    """Refuse an answer whose topics hold more partitions together than `MAX_PARTITIONS` (counts
    only: cheap, before the cluster picture is built from it)."""
    partitions = sum(len(t.partitions) for t in body.topics)
    if partitions > MAX_PARTITIONS:
        raise MetadataError(f"{partitions} partitions (at most {MAX_PARTITIONS} accepted)")


def request_body(topics: Iterable[str] | None, version: int, *, auto_create: bool = False) -> dict[str, Any]:
    """The Metadata request for ``topics`` (None: every topic; v0 has no null, an empty list means all)."""
    wanted: list[dict[str, str]] | None = None if topics is None else [{"name": t} for t in topics]
    if wanted is None and version == 0:
        wanted = []
    return {"topics": wanted, "allow_auto_topic_creation": auto_create}


class Broker(ValueClass):
    """(This module's classes are plain classes, with value equality where they are values:
    protocol/value_class.py.)"""

    __slots__ = ("host", "node_id", "port", "rack")
    _fields = ("node_id", "host", "port", "rack")

    def __init__(self, node_id: int, host: str, port: int, rack: str | None = None) -> None:
        self.node_id = node_id
        self.host = host
        self.port = port
        self.rack = rack

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


class PartitionInfo(ValueClass):
    __slots__ = ("error_code", "isr", "leader", "leader_epoch", "partition", "replicas")
    _fields = ("partition", "leader", "leader_epoch", "replicas", "isr", "error_code")

    def __init__(
        self,
        partition: int,
        leader: int,
        leader_epoch: int,
        replicas: tuple[int, ...],
        isr: tuple[int, ...],
        error_code: int,
    ) -> None:
        self.partition = partition
        self.leader = leader
        self.leader_epoch = leader_epoch
        self.replicas = replicas
        self.isr = isr
        self.error_code = error_code


class TopicInfo(ValueClass):
    __slots__ = ("error_code", "is_internal", "name", "partitions", "topic_id")
    _fields = ("name", "error_code", "partitions", "topic_id", "is_internal")

    def __init__(
        self,
        name: str,
        error_code: int,
        partitions: dict[int, PartitionInfo],
        topic_id: uuid.UUID | None = None,
        is_internal: bool = False,
    ) -> None:
        self.name = name
        self.error_code = error_code
        self.partitions = partitions
        self.topic_id = topic_id
        self.is_internal = is_internal

    __hash__ = None  # type: ignore[assignment]  # its partitions are a dict

    def __repr__(self) -> str:
        return f"TopicInfo(name={self.name!r}, error_code={self.error_code}, partitions={self.partitions!r})"


class ClusterView:
    # The produce lane reads partition_counts by its slot (core/lane_state.py).
    __slots__ = (
        "blacklist",
        "brokers",
        "cluster_id",
        "controller_id",
        "ignored",
        "partition_counts",
        "topics",
        "updated_at",
    )

    def __init__(
        self,
        brokers: dict[int, Broker] | None = None,
        topics: dict[str, TopicInfo] | None = None,
        cluster_id: str | None = None,
        controller_id: int = NO_LEADER,
        *,
        blacklist: tuple[re.Pattern[str], ...] = (),
    ) -> None:
        self.brokers: dict[int, Broker] = {} if brokers is None else brokers
        self.topics: dict[str, TopicInfo] = {} if topics is None else topics
        # Per topic a record can be sent to (partitions known, no topic error, as the Java client
        # counts): how many partitions. Kept with `topics` for the producer's per-record look-up.
        self.partition_counts: dict[str, int] = {}
        self.cluster_id = cluster_id
        self.controller_id = controller_id
        self.updated_at: float | None = None
        # topic.blacklist: topics whose names match are kept apart in `ignored`, as if they did not
        # exist (librdkafka's cache skips them); only list_topics() shows them.
        self.blacklist = blacklist
        self.ignored: dict[str, TopicInfo] = {}

    def ignores(self, topic: str) -> bool:
        return any(p.search(topic) for p in self.blacklist)

    def update(self, body: Struct, now: float, *, full: bool = False) -> None:
        """Apply a Metadata response. ``full`` (all topics were asked for) drops topics it lacks."""
        self.brokers = {b.node_id: Broker(b.node_id, b.host, b.port, b.get("rack")) for b in body.brokers}
        self.cluster_id = body.get("cluster_id")
        self.controller_id = body.get("controller_id", NO_LEADER)
        topics = {} if full else dict(self.topics)
        ignored = {} if full else dict(self.ignored)
        # Items, not attributes: a Struct's attribute goes through __getattr__, and an answer for a
        # consumer of 500 topics is folded here on every refresh.
        for t in body["topics"]:
            name = t["name"]
            if name is None:
                continue
            partitions = {}
            for p in t["partitions"]:
                index = p["partition_index"]
                partitions[index] = PartitionInfo(
                    index,
                    p["leader_id"],
                    p.get("leader_epoch", -1),
                    tuple(p["replica_nodes"]),
                    tuple(p["isr_nodes"]),
                    p["error_code"],
                )
            topic_id = t.get("topic_id")
            (ignored if self.blacklist and self.ignores(name) else topics)[name] = TopicInfo(
                name,
                t["error_code"],
                partitions,
                topic_id if topic_id and topic_id.int else None,
                t.get("is_internal", False),
            )
        self.topics, self.ignored = topics, ignored
        self.partition_counts = {n: len(t.partitions) for n, t in topics.items() if t.partitions and not t.error_code}
        self.updated_at = now

    def leader_for(self, topic: str, partition: int) -> Broker | None:
        """The partition's leader, or None when unknown (refresh metadata and try again)."""
        info = self.topics.get(topic)
        if info is None:
            return None
        p = info.partitions.get(partition)
        if p is None or p.leader == NO_LEADER:
            return None
        return self.brokers.get(p.leader)

    def topic_error(self, topic: str) -> int:
        """The topic's error code in the last answer (0: none); a topic no answer named counts as
        UNKNOWN_TOPIC_OR_PARTITION."""
        info = self.topics.get(topic)
        return UNKNOWN_TOPIC_OR_PARTITION if info is None else info.error_code

    def partition_count(self, topic: str) -> int | None:
        info = self.topics.get(topic)
        return None if info is None or not info.partitions else len(info.partitions)

    def forget_leader(self, topic: str, partition: int, answered_by: int = -1) -> None:
        """After NOT_LEADER_OR_FOLLOWER from ``answered_by`` (-1: no broker's answer): stop routing
        there until fresh metadata says otherwise. An answer from a broker the picture no longer
        names as leader is older than the picture (sent before a refresh moved the partition) and
        changes nothing."""
        info = self.topics.get(topic)
        p = None if info is None else info.partitions.get(partition)
        if p is not None and answered_by >= 0 and p.leader != answered_by:
            return
        self.updated_at = None
        if info is None or p is None:
            return
        info.partitions[partition] = PartitionInfo(
            p.partition, NO_LEADER, p.leader_epoch, p.replicas, p.isr, p.error_code
        )
