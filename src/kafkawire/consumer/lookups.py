"""The consumer's blocking look-ups of log offsets (ListOffsets through the request driver):
watermarks and offsets by timestamp. The caller's thread only waits for the operation's futures."""

from __future__ import annotations

from collections.abc import Mapping

from ..client.cluster import Client
from ..client.driver import wait
from ..client.list_offsets import EARLIEST, LATEST, READ_COMMITTED, READ_UNCOMMITTED, list_offsets_operation
from ..core import TopicPartitionKey as TP
from ..model import TopicPartition


def watermarks(client: Client, key: TP, *, read_committed: bool, timeout: float) -> tuple[int, int]:
    """(log start, log end); the end is the last stable offset under read_committed."""
    deadline = client.engine.now() + timeout
    level = READ_COMMITTED if read_committed else READ_UNCOMMITTED
    low = list_offsets_operation(client, {key: EARLIEST}, deadline=deadline).start()
    high = list_offsets_operation(client, {key: LATEST}, isolation_level=level, deadline=deadline).start()
    return (wait(low.futures[key], timeout).offset, wait(high.futures[key], timeout).offset)


def offsets_for_times(
    client: Client, queries: Mapping[TP, int], *, read_committed: bool, timeout: float
) -> list[TopicPartition]:
    """Each partition's first offset with a timestamp at or after the one asked (-1: none)."""
    if not queries:
        return []
    level = READ_COMMITTED if read_committed else READ_UNCOMMITTED
    op = list_offsets_operation(client, queries, isolation_level=level, deadline=client.engine.now() + timeout)
    op.start()
    out = []
    for (topic, part), fut in op.futures.items():
        answer = wait(fut, timeout)
        epoch = answer.leader_epoch if answer.leader_epoch >= 0 else None
        out.append(TopicPartition(topic, part, answer.offset, None, epoch))
    return out
