"""The rebalance callbacks (``on_assign``, ``on_revoke``, ``on_lost``), run in the application's
thread by poll() for each change the group membership hands over.

As confluent-kafka: lost partitions go to ``on_lost`` (``on_revoke`` when there is none), then
revoked ones to ``on_revoke``, then new ones to ``on_assign``; a callback may change the assignment
itself (assign/unassign or the incremental calls, with offsets), else it is changed for it
afterwards: eager groups replace the whole assignment, cooperative and KIP-848 groups
(``incremental``) add or remove just the partitions named. A callback's exception comes out of poll()
once the default has been applied. The default goes through the engine (`Assigner`), never through
the face's public methods, which an application's subclass may have overridden.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..core.group import Step
from ..model import TopicPartition
from .assignment import listed

Callback = Callable[[Any, list[TopicPartition]], Any]


def checked(value: Any, name: str) -> Callback | None:
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be callable")
    return value  # type: ignore[no-any-return]


class Assigner(Protocol):
    """What a callback's default changes: the consumer engine's assignment."""

    def assigned(self) -> list[TopicPartition]: ...
    def assign(self, partitions: list[TopicPartition]) -> None: ...
    def unassign(self) -> None: ...
    def incremental_assign(self, partitions: list[TopicPartition]) -> None: ...
    def incremental_unassign(self, partitions: list[TopicPartition]) -> None: ...
    def drop(self, partitions: list[TopicPartition]) -> None: ...


class RebalanceCallbacks:
    def __init__(self, consumer: Any, assigner: Assigner, incremental: bool) -> None:
        self._consumer = consumer  # what the callbacks receive (the face)
        self._assigner = assigner
        self._incremental = incremental
        self.on_assign: Callback | None = None
        self.on_revoke: Callback | None = None
        self.on_lost: Callback | None = None
        self._running = False  # a callback is running
        self._assigned_itself = False  # ... and it changed the assignment

    def set(self, on_assign: Any, on_revoke: Any, on_lost: Any) -> None:
        self.on_assign = checked(on_assign, "on_assign")
        self.on_revoke = checked(on_revoke, "on_revoke")
        self.on_lost = checked(on_lost, "on_lost")

    def assignment_changed(self) -> None:
        """The application changed the assignment (inside a callback: no default afterwards)."""
        self._assigned_itself = self._running

    def serve(self, step: Step, revoked: Callable[[], None]) -> None:
        """One change: lost, revoked (then ``revoked()``: the membership may rejoin), assigned."""
        try:
            if step.lost:
                self.run(self.on_lost or self.on_revoke, listed(step.lost), self._assigner.drop)
            if step.revoke:
                self.run(self.on_revoke, listed(step.revoke), self._give_back)
        finally:
            if step.revoke:
                revoked()
        if step.assign or step.synced:  # librdkafka calls on_assign after every rebalance, maybe with []
            self.run(self.on_assign, listed(step.assign), self._take)

    def revoke_all(self, parts: list[TopicPartition]) -> None:
        """Leaving the group: everything through on_revoke, then unassigned."""
        self.run(self.on_revoke, parts, lambda _parts: self._assigner.unassign())

    def run(
        self, callback: Callback | None, parts: list[TopicPartition], default: Callable[[list[TopicPartition]], None]
    ) -> None:
        self._running, self._assigned_itself = True, False
        try:
            if callback is not None:
                callback(self._consumer, parts)
        finally:
            self._running = False
            if not self._assigned_itself:
                default(parts)

    def _take(self, parts: list[TopicPartition]) -> None:
        c = self._assigner
        if self._incremental:
            owned = set(c.assigned())
            c.incremental_assign([tp for tp in parts if tp not in owned])
        else:
            c.assign(parts)

    def _give_back(self, parts: list[TopicPartition]) -> None:
        c = self._assigner
        if self._incremental:
            owned = set(c.assigned())
            c.incremental_unassign([tp for tp in parts if tp in owned])
        else:
            c.unassign()
