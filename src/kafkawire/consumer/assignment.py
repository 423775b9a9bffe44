"""The partitions assigned to the application, in the order it was given them, with the offset each
starts from (a position, or a logical offset: OFFSET_STORED means the group's committed one).

Only the application's thread changes it (``assign()``, the incremental calls, and the rebalance
callbacks poll() runs); the fetch engine is told of every change by the face.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..base.model import OFFSET_INVALID, OFFSET_STORED, TopicPartition
from ..core import TopicPartitionKey as TP
from ..core.kafka_error import KafkaError, KafkaException


def keyed(partitions: object, what: str = "partitions") -> list[TopicPartition]:
    """A list of TopicPartition, checked as confluent-kafka checks it (TypeError otherwise)."""
    if not isinstance(partitions, (list, tuple)):
        raise TypeError(f"{what} must be a list of TopicPartition")
    for tp in partitions:
        if not isinstance(tp, TopicPartition):
            raise TypeError(f"{what} must be a list of TopicPartition, not {type(tp).__name__}")
    return list(partitions)


def start_offset(tp: TopicPartition) -> int:
    """Where a newly assigned partition starts: its given offset, else the committed one."""
    return OFFSET_STORED if tp.offset == OFFSET_INVALID else tp.offset


def listed(tps: Mapping[str, list[int]]) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for topic in sorted(tps) for p in sorted(tps[topic])]


class Assignment:
    def __init__(self) -> None:
        self._start: dict[TP, int] = {}

    def __contains__(self, tp: object) -> bool:
        return tp in self._start

    def __len__(self) -> int:
        return len(self._start)

    def tps(self) -> list[TP]:
        return list(self._start)

    def partitions(self) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t, p in self._start]

    def as_given(self) -> list[TopicPartition]:
        """The partitions with the offsets they were assigned at, as confluent-kafka's
        ``assignment()`` shows them (OFFSET_STORED for none given; not moved by consuming), in
        librdkafka's order: by topic, then partition, whatever order they were assigned in."""
        return [TopicPartition(t, p, start) for (t, p), start in sorted(self._start.items())]

    def replace(self, partitions: Iterable[TopicPartition]) -> tuple[dict[TP, int], list[TP]]:
        """The whole assignment anew: (added with their start offsets, removed)."""
        new = {(tp.topic, tp.partition): start_offset(tp) for tp in partitions}
        removed = [tp for tp in self._start if tp not in new]
        self._start = new
        return dict(new), removed

    def add(self, partitions: Iterable[TopicPartition]) -> dict[TP, int]:
        """Partitions added to the assignment; librdkafka's errors (and texts) for a partition named
        twice (_INVALID_ARG) or already assigned (_CONFLICT), nothing added then."""
        added = {}
        for tp in partitions:
            key = (tp.topic, tp.partition)
            if key in added:
                raise KafkaException(
                    KafkaError(KafkaError._INVALID_ARG, f"Duplicate {tp.topic} [{tp.partition}] in input list")
                )
            added[key] = start_offset(tp)
        for topic, partition in added:
            if (topic, partition) in self._start:
                text = f"{topic} [{partition}] is already part of the current assignment"
                raise KafkaException(KafkaError(KafkaError._CONFLICT, text))
        self._start.update(added)
        return added

    def remove(self, partitions: Iterable[TopicPartition]) -> list[TP]:
        keys = list(dict.fromkeys((tp.topic, tp.partition) for tp in partitions))
        for key in keys:
            if key not in self._start:
                text = f"{key[0]} [{key[1]}] can't be unassigned since it is not in the current assignment"
                raise KafkaException(KafkaError(KafkaError._INVALID_ARG, text))
        for key in keys:
            del self._start[key]
        return keys
