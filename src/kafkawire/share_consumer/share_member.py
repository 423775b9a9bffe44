"""A share group membership (KIP-932) run on the client's IO thread: `core.share_group` decides,
this module sends its ShareGroupHeartbeats and arms the timers.

The coordinator's assignment names topics by id; metadata is refreshed until every id has a name
and a leader, then the assignment goes to ``on_assignment`` (the share fetch engine). A fatal
error goes to ``on_error``. Heartbeats go over the coordinator's own connection (its lane), so
they never queue behind a ShareFetch's long poll.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from concurrent.futures import Future

from ..client.coordinators import Coordinators
from ..client.network_client import Client
from ..consumer.heartbeat_loop import HeartbeatLoop
from ..core.backoff import RetryBackoff
from ..core.kafka_error import KafkaError
from ..core.member_states import TopicIdPartitions
from ..core.share_group import ShareGroupMember, ShareGroupState, ShareGroupStep
from ..io.io_engine import Timer
from ..protocol.apis import SHARE_GROUP_HEARTBEAT
from ..protocol.codec import Struct


class ShareMembership(HeartbeatLoop):
    def __init__(
        self,
        client: Client,
        coordinators: Coordinators,
        group_id: str,
        topics: list[str],
        request_timeout: float,
        on_assignment: Callable[[TopicIdPartitions], None],
        on_error: Callable[[KafkaError], None],
    ) -> None:
        self.client = client
        self.coordinators = coordinators
        self.member = ShareGroupMember(group_id, str(uuid.uuid4()), topics)
        self._group = group_id
        self.request_timeout = request_timeout
        self.on_assignment = on_assignment
        self.on_error = on_error
        self.coordinator: int | None = None
        self._timer: Timer | None = None
        self._stopped = False
        self._in_flight = False
        # Retries in a row wait retry.backoff.ms, doubling up to retry.backoff.max.ms.
        self._backoff = RetryBackoff(client.config["retry.backoff.ms"], client.config["retry.backoff.max.ms"])

    @property
    def member_id(self) -> str:
        return self.member.member_id

    def resubscribe(self, topics: list[str]) -> None:
        def change() -> None:
            if not self._stopped and self.member.subscribe(topics) and not self._in_flight:
                self._later(0.0, self._heartbeat)

        self.client.engine.call_soon(change)

    def leave(self, timeout: float) -> Future[None]:
        """Stop heartbeating and leave the group (the future resolves once the coordinator answered,
        or at once when there is nothing to leave)."""
        done: Future[None] = Future()

        def leave() -> None:
            self._stop()
            body = self.member.leave_request()
            if body is None or self.coordinator is None:
                done.set_result(None)
                return

            def left(_response: Struct | None, _error: KafkaError | None) -> None:
                self.member.left()
                done.set_result(None)

            self.client.request_io(
                SHARE_GROUP_HEARTBEAT, body, left, node=self.coordinator, timeout=timeout, coordinator_lane=True
            )

        self.client.engine.call_soon(leave)
        return done

    # --- IO thread ------------------------------------------------------------------------------

    def _retry_delay(self) -> float:
        return self._backoff.next(random.random())

    def _heartbeat(self) -> None:
        if self._stopped or self.member.state is ShareGroupState.FATAL or self._in_flight:
            return
        if self.coordinator is None:
            self._find_coordinator(self.request_timeout)
            return
        self._in_flight = True
        self.client.request_io(
            SHARE_GROUP_HEARTBEAT,
            self.member.heartbeat_request(),
            self._answered,
            node=self.coordinator,
            timeout=self.request_timeout,
            coordinator_lane=True,
        )

    def _answered(self, response: Struct | None, error: KafkaError | None) -> None:
        self._in_flight = False
        if self._stopped:
            return
        if response is None:
            self._lost_coordinator()
            return
        step = self.member.on_heartbeat(response)
        if step.find_coordinator:
            self._lost_coordinator()
            return
        if step.retry:
            self._later(self._retry_delay(), self._heartbeat)
            return
        if step.assignment is not None:
            self._hand_over(step)
        if step.error is not None:
            text = response.error_message or "share group heartbeat failed"
            self.on_error(KafkaError(step.error, text, fatal=True))
            return
        self._backoff.reset()
        delay = 0.0 if self.member.state is ShareGroupState.UNJOINED else self.member.heartbeat_interval
        self._later(delay, self._heartbeat)

    def _hand_over(self, step: ShareGroupStep) -> None:
        """The assignment once every topic id in it is named in the metadata (refreshed until it is,
        unless a newer assignment takes its place)."""
        assignment = step.assignment or {}
        self._when_named(assignment, lambda: self.on_assignment(assignment), self.request_timeout, replace=True)
