"""Where a driver `Operation`'s keys go: any broker, the controller, every broker, a given node,
fixed placements, partition leaders. (Coordinators: `kafkawire.client.coordinators.ToCoordinator`.)"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.kafka_error import KafkaError
from ..protocol import error_codes as ec
from .driver import Operation, Routed, Router


def with_metadata(op: Operation[Any], topics: list[str] | None, refresh: bool, then: Callable[[], None]) -> None:
    """Run ``then`` once the metadata cache can answer (refreshing first when asked or empty)."""
    md = op.client.metadata
    if not refresh and md.updated_at is not None and all(t in md.topics for t in topics or ()):
        then()
        return
    # An empty topic list asks for brokers and controller only (every Metadata version we speak is >= 1).
    op.client.refresh_metadata_io([] if topics is None else topics, lambda _r, _e: then(), timeout=op.timeout())


class AnyBroker(Router):
    """Whichever broker the client finds least busy (no metadata needed)."""

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        done(({None: keys}, {}))


class Controller(Router):
    """The controller from metadata; any broker when the metadata names none (KRaft forwards)."""

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        def routed() -> None:
            md = op.client.metadata
            node = md.controller_id if md.controller_id in md.brokers else None
            done(({node: keys}, {}))

        with_metadata(op, None, refresh, routed)


class ToNode(Router):
    """Every key to one broker, named by the caller."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        def routed() -> None:
            if self.node_id not in op.client.metadata.brokers:
                error = KafkaError(KafkaError._UNKNOWN_BROKER, f"broker {self.node_id} is not in the cluster metadata")
                done(({}, dict.fromkeys(keys, error)))
            else:
                done(({self.node_id: keys}, {}))

        with_metadata(op, None, refresh or self.node_id not in op.client.metadata.brokers, routed)


class Placed(Router):
    """Each key to a broker fixed in advance (groups to the broker that listed them)."""

    def __init__(self, placement: Mapping[Any, int | None]) -> None:
        self.placement = placement

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        groups: dict[int | None, list[Any]] = {}
        for key in keys:
            groups.setdefault(self.placement[key], []).append(key)
        done((groups, {}))


class EveryBroker(Router):
    """Keys are broker ids: one request to each."""

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        done(({key: [key] for key in keys}, {}))


def topic_partition(key: Any) -> tuple[str, int]:
    """(topic, partition) of a key: a tuple, or anything with ``topic`` and ``partition``."""
    if isinstance(key, tuple):
        return key[0], key[1]
    return key.topic, key.partition


class Leaders(Router):
    """Keys are partitions: each to its leader, from (fresh when asked) metadata. A partition the
    metadata does not know, or without a leader, fails the round with the code that says so (the
    call's policy decides whether to ask again)."""

    def route(self, op: Operation[Any], keys: list[Any], refresh: bool, done: Callable[[Routed], None]) -> None:
        topics = sorted({topic_partition(key)[0] for key in keys})

        def routed() -> None:
            md = op.client.metadata
            groups: dict[int | None, list[Any]] = {}
            errors: dict[Any, KafkaError] = {}
            if md.updated_at is None:  # no broker ever answered: nothing is known about the topics
                lost = KafkaError(KafkaError._TRANSPORT, "no metadata yet: no broker has answered")
                done(({}, dict.fromkeys(keys, lost)))
                return
            for key in keys:
                topic, partition = topic_partition(key)
                info = md.topics.get(topic)
                if info is None or info.error_code == ec.UNKNOWN_TOPIC_OR_PARTITION:
                    errors[key] = KafkaError(ec.UNKNOWN_TOPIC_OR_PARTITION)
                elif info.error_code:
                    errors[key] = KafkaError(info.error_code)
                elif partition not in info.partitions:
                    errors[key] = KafkaError(ec.UNKNOWN_TOPIC_OR_PARTITION, f"{topic} has no partition {partition}")
                else:
                    leader = md.leader_for(topic, partition)
                    if leader is None:
                        errors[key] = KafkaError(ec.LEADER_NOT_AVAILABLE, f"no leader known for {topic}[{partition}]")
                    else:
                        groups.setdefault(leader.node_id, []).append(key)
            done((groups, errors))

        with_metadata(op, topics, refresh, routed)


ANY_BROKER = AnyBroker()
CONTROLLER = Controller()
EVERY_BROKER = EveryBroker()
LEADERS = Leaders()
