"""Records waiting for their topic's metadata (sans-IO): kept per topic until a Metadata answer
gives the topic's partitions (each record then gets its partition), says the topic does not exist
(``_UNKNOWN_TOPIC``) once ``topic.metadata.propagation.max.ms`` has passed since the topic's oldest
waiting record (a topic just created may not have reached every broker yet), or the record's
``message.timeout.ms`` passes. The producer's sender holds one and asks for metadata while it is
not empty."""

from __future__ import annotations

from collections.abc import Callable

from .accumulator import Accumulator, Pending
from .kafka_error import KafkaError
from .metadata import ClusterView

UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
# (record, partition count) -> the partition the partitioner picks for it
Assigner = Callable[[Pending, int], int]


class Unassigned:
    def __init__(self, propagation: float = 0.0) -> None:
        self._waiting: dict[str, list[Pending]] = {}
        self._propagation = propagation  # seconds a topic may be unknown before its records fail

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def topics(self) -> set[str]:
        return set(self._waiting)

    def oldest(self) -> float | None:
        """When the record waiting longest was queued (its timeout is the next to pass)."""
        oldest = None  # (a loop: a generator is a call of its own, and this runs every sender pass)
        for msgs in self._waiting.values():
            if oldest is None or msgs[0].enqueued < oldest:
                oldest = msgs[0].enqueued
        return oldest

    def add(self, msg: Pending) -> bool:
        """Keep ``msg``; True when it is its topic's first (the metadata request is due now)."""
        waiting = self._waiting.setdefault(msg.topic, [])
        waiting.append(msg)
        return len(waiting) == 1

    def take_all(self) -> list[Pending]:
        waiting = [m for msgs in self._waiting.values() for m in msgs]
        self._waiting.clear()
        return waiting

    def expire(self, now: float, timeout: float) -> list[Pending]:
        """Remove and return the records that waited ``timeout`` or longer."""
        expired: list[Pending] = []
        for topic in list(self._waiting):
            waiting = self._waiting[topic]
            keep = [m for m in waiting if now - m.enqueued < timeout]
            if len(keep) != len(waiting):
                expired += [m for m in waiting if now - m.enqueued >= timeout]
                if keep:
                    self._waiting[topic] = keep
                else:
                    del self._waiting[topic]
        return expired

    def assign(
        self, metadata: ClusterView, acc: Accumulator, assign: Assigner, now: float
    ) -> list[tuple[list[Pending], KafkaError]]:
        """Move the records of topics with partitions now into the accumulator; return those that
        must fail (the topic does not exist, the partition asked for is not there)."""
        failed: list[tuple[list[Pending], KafkaError]] = []
        for topic in list(self._waiting):
            info = metadata.topics.get(topic)
            if info is None or info.error_code == LEADER_NOT_AVAILABLE or not info.partitions:
                code = 0 if info is None else info.error_code
                propagating = now - self._waiting[topic][0].enqueued < self._propagation
                if code not in (0, LEADER_NOT_AVAILABLE) and not (code == UNKNOWN_TOPIC_OR_PARTITION and propagating):
                    failed.append((self._waiting.pop(topic), _topic_error(topic, code)))
                continue
            count = len(info.partitions)
            bad: list[Pending] = []
            for msg in self._waiting.pop(topic):
                # An explicit partition stays what the user asked for; only -1 is assigned.
                partition = msg.partition if msg.partition != -1 else assign(msg, count)
                if not 0 <= partition < count:
                    bad.append(msg)
                    continue
                msg.partition = partition
                acc.append(msg, now)
            if bad:
                failed.append((bad, KafkaError(KafkaError._UNKNOWN_PARTITION, f"{topic} has {count} partitions")))
        return failed


def _topic_error(topic: str, code: int) -> KafkaError:
    if code == UNKNOWN_TOPIC_OR_PARTITION:
        return KafkaError(KafkaError._UNKNOWN_TOPIC, f"Local: Unknown topic: {topic}")
    return KafkaError(code, f"topic {topic}")
