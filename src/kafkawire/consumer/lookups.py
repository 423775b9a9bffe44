"""The consumer's blocking look-ups of log offsets (ListOffsets through the request driver):
watermarks and offsets by timestamp. The caller's thread only waits for the operation's futures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..base.model import TopicPartition
from ..client.driver import wait
from ..client.list_offsets import EARLIEST, LATEST, READ_COMMITTED, READ_UNCOMMITTED, list_offsets_operation
from ..client.network_client import Client
from ..core import TopicPartitionKey as TP
from ..core.kafka_error import KafkaError, KafkaException
from ..core.metadata import ClusterView


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
    """Each partition's first offset with a timestamp at or after the one asked (-1: none), in the
    order asked. As librdkafka: the topics' metadata first (asked for only when a topic is not known
    yet: a refresh queued behind a consumer's long-polling Fetch would cost the call a Fetch wait);
    a partition it does not show keeps the timestamp asked and carries its error (the topic's, or
    _UNKNOWN_PARTITION), and when no partition is left to ask the call raises _UNKNOWN_PARTITION."""
    if not queries:
        return []
    deadline = client.engine.now() + timeout
    topics = sorted({topic for topic, _ in queries})
    try:
        if any(client.metadata.topic_error(topic) for topic in topics):
            wait(client.refresh_metadata(topics, timeout=timeout), timeout)
    except KafkaException as exc:  # no metadata: librdkafka looks for the leaders until it times out
        cause = exc.args[0].str() if isinstance(exc.args[0], KafkaError) else str(exc)
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"Failed to get offsets: {cause}")) from None
    refused = unknown_partitions(client.metadata, queries)
    asked = {tp: ts for tp, ts in queries.items() if tp not in refused}
    if not asked:
        code = KafkaError._UNKNOWN_PARTITION
        raise KafkaException(KafkaError(code, f"Failed to get offsets: {KafkaError(code).str()}"))
    level = READ_COMMITTED if read_committed else READ_UNCOMMITTED
    op = list_offsets_operation(client, asked, isolation_level=level, deadline=deadline)
    op.start()
    out = []
    for (topic, part), ts in queries.items():
        fut = op.futures.get((topic, part))
        if fut is None:
            out.append(TopicPartition(topic, part, ts, error=KafkaError(refused[(topic, part)])))
            continue
        answer = wait(fut, max(0.0, deadline - client.engine.now()))
        epoch = answer.leader_epoch if answer.leader_epoch >= 0 else None
        out.append(TopicPartition(topic, part, answer.offset, None, epoch))
    return out


def unknown_partitions(md: ClusterView, keys: Iterable[TP]) -> dict[TP, int]:
    """The partitions the metadata does not show, with why: the topic's error (a topic it does not
    name: UNKNOWN_TOPIC_OR_PARTITION), or _UNKNOWN_PARTITION for a partition the topic lacks."""
    out = {}
    for topic, part in keys:
        code = md.topic_error(topic)
        if code:
            out[(topic, part)] = code
        elif part not in md.topics[topic].partitions:
            out[(topic, part)] = KafkaError._UNKNOWN_PARTITION
    return out
