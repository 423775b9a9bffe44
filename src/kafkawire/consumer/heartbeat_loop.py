"""What a heartbeat-driven group member (KIP-848's and the share group's) does between heartbeats:
one timer, the coordinator found (then a heartbeat at once) or lost, a retry after the member's
backoff, an assignment's topic ids waited for in the metadata, the start and the stop."""

from __future__ import annotations

import math
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..client.coordinators import GROUP, Coordinators
from ..client.driver import Body, Callback, Operation, after_all
from ..client.network_client import Client
from ..client.routers import ANY_BROKER
from ..core.kafka_error import KafkaError
from ..core.metadata import ClusterView
from ..core.policy.metadata import TOPIC_NAMES
from ..io.io_engine import Timer
from ..protocol import error_codes as ec
from ..protocol.apis import METADATA
from ..protocol.codec import Struct


def topic_name(metadata: ClusterView, topic_id: uuid.UUID) -> str | None:
    """The name the metadata gives a topic id (None: not known yet)."""
    for info in metadata.topics.values():
        if info.topic_id == topic_id:
            return info.name
    return None


class HeartbeatLoop:
    client: Client
    coordinators: Coordinators
    coordinator: int | None
    _group: str  # the group id the coordinator is found for
    _timer: Timer | None
    _stopped: bool
    _lookup: Operation[str] | None = None  # the coordinator's lookup under way
    _naming: Operation[uuid.UUID] | None = None  # the first waiting change's topic ids asked for
    _waiting: deque[tuple[list[uuid.UUID], Callable[[], None], float]] | None = None  # changes to hand over

    def _heartbeat(self) -> None:
        raise NotImplementedError

    def _retry_delay(self) -> float:
        raise NotImplementedError

    def start(self) -> None:
        self.client.engine.call_soon(self._heartbeat)

    def _stop(self) -> None:
        """No heartbeat from now on (the member leaves)."""
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
        for op in (self._lookup, self._naming):
            if op is not None:
                op.abort(KafkaError(KafkaError._DESTROY, "the member left"))

    def _later(self, delay: float, fn: Callable[[], None]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.client.engine.call_later(delay, fn)

    def _find_coordinator(self, request_timeout: float) -> None:
        """Look the coordinator up (asked until found, retry.backoff.ms doubling up to
        retry.backoff.max.ms between asks: `Coordinators.locate_io`), then heartbeat at once; a
        lookup under way is not asked twice."""
        if self._lookup is not None and not self._lookup.future(self._group).done():
            return
        config = self.client.config
        self._lookup = self.coordinators.locate_io(
            GROUP,
            self._group,
            self._found,
            request_timeout=request_timeout,
            backoff_ms=(config["retry.backoff.ms"], config["retry.backoff.max.ms"]),
        )

    def _found(self, node: int) -> None:
        if self._stopped:
            return
        self.coordinator = node
        self._heartbeat()

    def _lost_coordinator(self) -> None:
        self.coordinators.forget(GROUP, self._group)
        self.coordinator = None
        self._later(self._retry_delay(), self._heartbeat)

    def _when_named(
        self, topic_ids: Iterable[uuid.UUID], then: Callable[[], None], request_timeout: float, *, replace: bool
    ) -> None:
        """``then()`` once the metadata names every topic id, refreshed until it does (a driver
        `Operation` without a deadline, retry.backoff.ms doubling up to retry.backoff.max.ms apart).
        Changes go in order, a later one after an earlier one; ``replace`` (a whole new assignment)
        drops those still waiting."""
        if self._waiting is None:
            self._waiting = deque()
        if replace:
            self._waiting.clear()
            if self._naming is not None:
                naming, self._naming = self._naming, None
                naming.abort(KafkaError(KafkaError._DESTROY, "a newer assignment"))
        self._waiting.append((list(topic_ids), then, request_timeout))
        if self._naming is None:
            self._next_named()

    def _next_named(self) -> None:
        waiting = self._waiting
        while waiting and not self._stopped:
            topic_ids, then, request_timeout = waiting[0]
            unknown = [t for t in dict.fromkeys(topic_ids) if topic_name(self.client.metadata, t) is None]
            if unknown:
                self._naming = self._refresh_until_named(unknown, request_timeout)
                return
            waiting.popleft()
            then()

    def _refresh_until_named(self, unknown: list[uuid.UUID], request_timeout: float) -> Operation[uuid.UUID]:
        def send(_node: int | None, _body: Body, done: Callback, timeout: float) -> None:
            self.client.refresh_metadata_io(None, done, timeout=timeout, lane=self.coordinator)

        def parse(_response: Struct, keys: list[uuid.UUID], _node: int | None) -> dict[uuid.UUID, Any]:
            missing = KafkaError(ec.UNKNOWN_TOPIC_ID, "not in the metadata yet")
            return {t: missing if topic_name(self.client.metadata, t) is None else True for t in keys}

        config = self.client.config
        op: Operation[uuid.UUID] = Operation(
            self.client,
            unknown,
            api=METADATA,
            router=ANY_BROKER,
            body=lambda _keys, _version: {},
            parse=parse,
            policy=TOPIC_NAMES,
            deadline=math.inf,
            backoff_ms=(config["retry.backoff.ms"], config["retry.backoff.max.ms"]),
            send=send,
            request_timeout=request_timeout,
        )

        def named() -> None:
            if self._naming is op:  # (else replaced, or the member left)
                self._naming = None
                self._next_named()

        after_all(list(op.futures.values()), named)
        return op.start_io()
