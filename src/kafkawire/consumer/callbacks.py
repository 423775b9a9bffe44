"""The rebalance callbacks (``on_assign``, ``on_revoke``, ``on_lost``), run in the application's
thread by poll() for each change the group membership hands over.

As confluent-kafka: lost partitions go to ``on_lost`` (``on_revoke`` when there is none), then
revoked ones to ``on_revoke``, then new ones to ``on_assign``; a callback may change the assignment
itself (assign/unassign or the incremental calls, with offsets), else it is changed for it
afterwards: eager groups replace the whole assignment, cooperative and KIP-848 groups
(``incremental``) add or remove just the partitions named. A callback's exception comes out of poll()
once the default has been applied. The default goes through the engine (`Assigner`), never through
the face's public methods, which an application's subclass may have overridden.

A callback may return an awaitable (an asyncio face's ``async def`` callback): the run yields it,
and whoever drives the run (`Awaited`) awaits it before resuming, so the default is decided only
once the coroutine ended: one that assigned itself gets no default on top. A driver that awaits
nothing (the blocking Consumer) resumes at once, as it always ignored a callback's return value.
"""

from __future__ import annotations

import inspect
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Protocol

from ..base.model import TopicPartition
from ..core.group import GroupStep
from .assignment import listed

Callback = Callable[[Any, list[TopicPartition]], Any]
# A run of callbacks: yields what an async callback returned; the driver resumes it once awaited
# (or throws the awaitable's exception in).
Awaited = Generator[Awaitable[Any], None, None]


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
        # What the callbacks receive (the face), held weakly: the IO side keeps no face alive, so
        # a consumer dropped without close() is collected (and its finalizer stops the client).
        self._consumer = weakref.ref(consumer)
        self._assigner = assigner
        self._incremental = incremental
        self.on_assign: Callback | None = None
        self.on_revoke: Callback | None = None
        self.on_lost: Callback | None = None
        self._running = False  # a callback is running
        self._assigned_itself = False  # ... and it changed the assignment
        # An asyncio face awaits what async callbacks return (handed to it by `hand_over`): the
        # run waiting on one (with what ends its step), and the group's changes that came
        # meanwhile, started after it.
        self.hand_over: Callable[[Awaitable[Any]], None] | None = None
        self._awaited: tuple[Awaited, Callable[[], None]] | None = None
        self._held: deque[Callable[[], None]] = deque()

    def set(self, on_assign: Any, on_revoke: Any, on_lost: Any) -> None:
        self.on_assign = checked(on_assign, "on_assign")
        self.on_revoke = checked(on_revoke, "on_revoke")
        self.on_lost = checked(on_lost, "on_lost")

    def assignment_changed(self) -> None:
        """The application changed the assignment (inside a callback: no default afterwards)."""
        self._assigned_itself = self._running

    def serve(self, step: GroupStep, revoked: Callable[[], None]) -> Awaited:
        """One change: lost, revoked (then ``revoked()``: the membership may rejoin), assigned."""
        try:
            if step.lost:
                yield from self.run(self.on_lost or self.on_revoke, listed(step.lost), self._assigner.drop)
            if step.revoke:
                yield from self.run(self.on_revoke, listed(step.revoke), self._give_back)
        finally:
            if step.revoke or step.lost:
                revoked()
        if step.assign or step.synced:  # librdkafka calls on_assign after every rebalance, maybe with []
            yield from self.run(self.on_assign, listed(step.assign), self._take)

    def after_awaited(self, start: Callable[[], None]) -> None:
        """``start()`` a group change now, or after the one an awaited callback holds up."""
        if self._awaited is not None or self._held:
            self._held.append(start)
        else:
            start()

    def drive(
        self, run: Awaited, end: Callable[[], None], error: BaseException | None = None, *, awaits: bool = True
    ) -> None:
        """Run on up to the next awaitable, handed over for the face to await (then `done`); where
        nothing awaits, awaitables are dropped unawaited, as a blocking consumer always did.
        ``end()`` once the run is over, raising or not."""
        try:
            while True:
                pending = run.throw(error) if error is not None else next(run)
                error = None
                hand_over = self.hand_over if awaits else None
                if hand_over is not None:
                    self._awaited = (run, end)
                    hand_over(pending)
                    return
        except StopIteration:
            end()
        except BaseException:
            end()
            raise

    def done(self, error: BaseException | None) -> None:
        """The awaited callback ended (``error``: its exception, raised once the default ran);
        then the changes held behind it start, up to the next one that hands something over.
        Once close() abandoned it, only its exception is raised."""
        if self._awaited is None:
            if error is not None:
                raise error
            return
        run, end = self._awaited
        self._awaited = None
        try:
            self.drive(run, end, error)
        finally:
            while self._awaited is None and self._held:
                self._held.popleft()()

    def abandon(self) -> None:
        """Closing: a run still awaited ends without its default; held changes are dropped."""
        if self._awaited is not None:
            self._awaited[0].close()
            self._awaited = None
        self._held.clear()

    def revoke_all(self, parts: list[TopicPartition], unassign: Callable[[], None]) -> Awaited:
        """Leaving the group: everything through on_revoke, then ``unassign()`` (the leaver's own,
        which does not wait for its commit)."""
        return self.run(self.on_revoke, parts, lambda _parts: unassign())

    def run(
        self, callback: Callback | None, parts: list[TopicPartition], default: Callable[[list[TopicPartition]], None]
    ) -> Awaited:
        self._running, self._assigned_itself = True, False
        abandoned = False
        try:
            consumer = self._consumer()
            if callback is not None and consumer is not None:
                result = callback(consumer, parts)
                if inspect.isawaitable(result):
                    yield result  # the callback runs on while it is awaited
        except GeneratorExit:  # dropped unfinished (the consumer closed meanwhile): no default
            abandoned = True
            raise
        finally:
            self._running = False
            if not self._assigned_itself and not abandoned:
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
