"""Group calls at each group's coordinator: list and alter committed offsets (OffsetFetch,
OffsetCommit through client/committed_offsets.py's limits), delete groups (DeleteGroups).

One group per offsets call, as confluent-kafka allows; each partition's own error is on its
`TopicPartition` in the answer, a group's error fails the group's future.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from ..base.model import OFFSET_INVALID, TopicPartition
from ..client.committed_offsets import MAX_VERSION, Committed, commit_operation
from ..client.driver import error_of
from ..core.kafka_error import KafkaError
from ..core.policy.admin import ADMIN_READ, ADMIN_WRITE
from ..protocol.apis import DELETE_GROUPS, OFFSET_FETCH
from ..protocol.codec import Struct
from .base import AdminBase, _by_topic, _error, _invalid
from .group_types import ConsumerGroupTopicPartitions


def _one_request(request: Any, alter: bool) -> ConsumerGroupTopicPartitions:
    """confluent-kafka's checks of a group-offsets request (TypeError / ValueError)."""
    if not isinstance(request, list):
        raise TypeError("Expected input to be list of ConsumerGroupTopicPartitions")
    if not request:
        raise ValueError("Expected atleast one ConsumerGroupTopicPartitions request")
    if len(request) > 1:
        raise ValueError("Currently we support only 1 ConsumerGroupTopicPartitions request")
    req = request[0]
    if not isinstance(req, ConsumerGroupTopicPartitions):
        raise TypeError(f"the request must hold a ConsumerGroupTopicPartitions, not {type(req).__name__}")
    if not isinstance(req.group_id, str):
        raise TypeError(f"'group_id' must be a str, not {type(req.group_id).__name__}")
    if not req.group_id:
        raise ValueError("'group_id' is empty: name the group")
    tps = req.topic_partitions
    if tps is None:
        if alter:
            raise ValueError("'topic_partitions' is None: altering offsets needs the partitions and their offsets")
        return req
    if not isinstance(tps, list):
        raise TypeError(f"'topic_partitions' must be a list (or None), not {type(tps).__name__}")
    if not tps:
        raise ValueError("'topic_partitions' is an empty list")
    for tp in tps:
        if tp is None:
            raise ValueError("'topic_partitions' holds a None where a TopicPartition belongs")
        if not isinstance(tp, TopicPartition):
            raise TypeError(f"'topic_partitions' holds a {type(tp).__name__} where a TopicPartition belongs")
        if not tp.topic:
            raise ValueError("a TopicPartition in 'topic_partitions' has an empty 'topic'")
        if tp.partition < 0:
            raise ValueError(f"{tp.topic} [{tp.partition}] in 'topic_partitions': 'partition' is negative")
        if alter and tp.offset < 0:
            raise ValueError(f"{tp.topic} [{tp.partition}] in 'topic_partitions': 'offset' to commit is negative")
        if not alter and tp.offset != OFFSET_INVALID:
            raise ValueError(f"{tp.topic} [{tp.partition}] in 'topic_partitions': listing offsets takes no 'offset'")
    return req


class GroupOffsetCalls(AdminBase):
    """Consumer groups' committed offsets, and deleting groups."""

    def list_consumer_group_offsets(
        self, list_consumer_group_offsets_request: list[ConsumerGroupTopicPartitions], **kwargs: Any
    ) -> dict[str, Future[ConsumerGroupTopicPartitions]]:
        """A group's committed offsets: of the partitions named, or (None) of every partition it has."""
        req = _one_request(list_consumer_group_offsets_request, alter=False)
        require_stable = kwargs.pop("require_stable", False)
        if not isinstance(require_stable, bool):
            raise TypeError("require_stable must be a bool")
        request_s, _, _ = self._options(kwargs)
        group = req.group_id
        wanted = (
            None
            if req.topic_partitions is None
            else [
                {"name": topic, "partition_indexes": [tp.partition for tp in tps]}
                for topic, tps in _by_topic(req.topic_partitions).items()
            ]
        )

        def body(keys: list[str], version: int) -> dict[str, Any]:
            stable = {"require_stable": require_stable} if version >= 7 else {}
            if version >= 8:
                return {"groups": [{"group_id": group, "topics": wanted}], **stable}
            return {"group_id": group, "topics": wanted, **stable}

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            if response.groups:  # v8+
                code, topics = response.groups[0].error_code, response.groups[0].topics
            else:
                code, topics = response.error_code, response.topics
            if code:
                return {group: KafkaError(code)}
            answered = [
                TopicPartition(
                    t.name,
                    p.partition_index,
                    OFFSET_INVALID if p.committed_offset < 0 else p.committed_offset,  # -1: none committed
                    None if p.metadata is None else p.metadata.split("\x00", 1)[0],  # librdkafka's C string
                    p.committed_leader_epoch,
                    error=_error(p.error_code, None),
                )
                for t in topics
                for p in t.partitions
            ]
            return {group: ConsumerGroupTopicPartitions(group, answered)}

        return self._run(
            [group], OFFSET_FETCH, self._to_group, body, parse, request_s, policy=ADMIN_READ, max_version=MAX_VERSION
        )

    def alter_consumer_group_offsets(
        self, alter_consumer_group_offsets_request: list[ConsumerGroupTopicPartitions], **kwargs: Any
    ) -> dict[str, Future[ConsumerGroupTopicPartitions]]:
        """Commit the given offsets for a group that has no active members (as no member)."""
        req = _one_request(alter_consumer_group_offsets_request, alter=True)
        request_s, _, _ = self._options(kwargs)
        tps = req.topic_partitions or []
        offsets = {(tp.topic, tp.partition): Committed(tp.offset, tp.metadata, tp.leader_epoch or -1) for tp in tps}
        op = commit_operation(
            self._client,
            self._client.coordinators,
            req.group_id,
            offsets,
            deadline=self._client.engine.now() + request_s,
            backoff_ms=self._backoff,
            policy=self._policy(ADMIN_WRITE),
            live=self._live,
        ).start()
        result: Future[ConsumerGroupTopicPartitions] = Future()
        result.set_running_or_notify_cancel()
        remaining = len(op.futures)

        def one_done(_f: Future[Any]) -> None:
            nonlocal remaining
            remaining -= 1
            if remaining:
                return
            answered = [
                TopicPartition(topic, partition, offsets[(topic, partition)].offset, error=error_of(fut))
                for (topic, partition), fut in op.futures.items()
            ]
            result.set_result(ConsumerGroupTopicPartitions(req.group_id, answered))

        for fut in op.futures.values():
            fut.add_done_callback(one_done)
        return {req.group_id: result}

    def delete_consumer_groups(self, group_ids: list[str], **kwargs: Any) -> dict[str, Future[None]]:
        """Delete groups without active members, and their committed offsets."""
        if not isinstance(group_ids, list):
            raise TypeError(f"group_ids must be a list of the groups to delete, not {type(group_ids).__name__}")
        if not group_ids:
            raise ValueError("group_ids is empty: no group to delete")
        if not all(isinstance(g, str) for g in group_ids):
            raise TypeError("Expected group ids to be strings")
        request_s, _, _ = self._options(kwargs)
        if len(set(group_ids)) != len(group_ids):  # refused in the futures, as librdkafka refuses them
            return {group: _invalid("Duplicate groups not allowed") for group in group_ids}
        groups = group_ids

        def body(keys: list[str], version: int) -> dict[str, Any]:
            return {"groups_names": keys}

        def parse(response: Struct, keys: list[str], node: int | None) -> dict[str, Any]:
            return {r.group_id: _error(r.error_code, None) for r in response.results}

        return self._run(groups, DELETE_GROUPS, self._to_group, body, parse, request_s)
