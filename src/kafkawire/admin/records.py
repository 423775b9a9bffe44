"""Offset and record calls at each partition's leader: list_offsets (client/list_offsets.py), delete_records."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from ..base.model import TopicPartition
from ..client import routers
from ..client.list_offsets import OffsetAnswer, list_offsets_operation
from ..core.policy.admin import ADMIN_READ
from ..protocol.apis import (
    DELETE_RECORDS,
)
from ..protocol.codec import Struct
from .base import AdminBase, _by_topic, _error, _no_duplicates, _then, _tp
from .types import (
    DeletedRecords,
    IsolationLevel,
    ListOffsetsResultInfo,
    OffsetSpec,
)


class RecordCalls(AdminBase):
    """Offsets and records of partitions."""

    def list_offsets(
        self, topic_partition_offsets: dict[TopicPartition, OffsetSpec], **kwargs: Any
    ) -> dict[TopicPartition, Future[ListOffsetsResultInfo]]:
        """Each partition's earliest, latest, max-timestamp or by-timestamp offset, from its leader."""
        if not isinstance(topic_partition_offsets, dict):
            raise TypeError(
                "Expected topic_partition_offsets to be dict of [TopicPartitions,OffsetSpec] for list offsets request"
            )
        for tp, spec in topic_partition_offsets.items():
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"topic_partition_offsets keys must be TopicPartition, not {type(tp).__name__}")
            if not tp.topic:
                raise ValueError("a TopicPartition in topic_partition_offsets has an empty topic")
            if tp.partition < 0:
                raise ValueError(f"{tp.topic} [{tp.partition}]: a partition is never negative")
            if not isinstance(spec, OffsetSpec):
                raise TypeError(f"topic_partition_offsets values must be OffsetSpec, not {type(spec).__name__}")
        isolation = kwargs.pop("isolation_level", IsolationLevel.READ_UNCOMMITTED)
        if not isinstance(isolation, IsolationLevel):
            raise TypeError(f"isolation_level must be an IsolationLevel, not {type(isolation).__name__}")
        request_s, _, _ = self._options(kwargs)
        op = list_offsets_operation(
            self._client,
            {_tp(tp): int(spec._value) for tp, spec in topic_partition_offsets.items()},
            isolation_level=isolation.value,
            deadline=self._client.engine.now() + request_s,
            backoff_ms=self._backoff,
            policy=self._policy(ADMIN_READ),
            live=self._live,
        ).start()

        def info(answer: OffsetAnswer) -> ListOffsetsResultInfo:
            return ListOffsetsResultInfo(answer.offset, answer.timestamp, answer.leader_epoch)

        return {tp: _then(fut, info) for tp, fut in op.futures.items()}

    def delete_records(
        self, topic_partition_offsets: list[TopicPartition], **kwargs: Any
    ) -> dict[TopicPartition, Future[DeletedRecords]]:
        """Delete each partition's records before its offset (OFFSET_END, -1: all of them), at its leader;
        the futures are keyed by the partitions with the offsets asked for."""
        if not isinstance(topic_partition_offsets, list):
            # same text as confluent-kafka: its tests match on it
            raise TypeError(f"Expected Request to be a list, got '{type(topic_partition_offsets).__name__}' ")
        for tp in topic_partition_offsets:
            if not isinstance(tp, TopicPartition):
                # same text as confluent-kafka: its tests match on it
                raise TypeError(
                    f"Element of the request list must be of type 'TopicPartition' got '{type(tp).__name__}' "
                )
            if tp.partition < 0:
                raise ValueError(f"{tp.topic} [{tp.partition}]: 'partition' is negative")
        if not topic_partition_offsets:
            raise ValueError("Expected non-empty list of TopicPartition objects")
        _no_duplicates(topic_partition_offsets, "partitions")
        request_s, operation_ms, _ = self._options(kwargs, operation=True)
        offsets = {_tp(tp): tp.offset for tp in topic_partition_offsets}

        def body(keys: list[TopicPartition], version: int) -> dict[str, Any]:
            return {
                "topics": [
                    {
                        "name": topic,
                        "partitions": [{"partition_index": tp.partition, "offset": offsets[tp]} for tp in tps],
                    }
                    for topic, tps in _by_topic(keys).items()
                ],
                "timeout_ms": operation_ms,
            }

        def parse(response: Struct, keys: list[TopicPartition], node: int | None) -> dict[TopicPartition, Any]:
            out: dict[TopicPartition, Any] = {}
            for t in response.topics:
                for p in t.partitions:
                    error = _error(p.error_code, None)
                    out[TopicPartition(t.name, p.partition_index)] = (
                        error if error is not None else DeletedRecords(p.low_watermark)
                    )
            return out

        futures = self._run(offsets, DELETE_RECORDS, routers.LEADERS, body, parse, request_s)
        # Keyed as confluent-kafka keys them: each partition with the offset asked for.
        return {TopicPartition(tp.topic, tp.partition, tp.offset): futures[_tp(tp)] for tp in topic_partition_offsets}
