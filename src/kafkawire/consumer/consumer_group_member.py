"""A KIP-848 group membership (group.protocol=consumer) run on the client's IO thread:
`core.consumer_group.ConsumerGroupMember` decides, this module sends its heartbeats and arms timers.

The coordinator's assignments name topics by id; they are turned into names with metadata
(refreshed when an id is new) before the change is handed to ``on_change`` as a `core.group.Step`,
the same shape the classic membership produces, so the consumer serves both alike. Once handed
over, the member acknowledges the reconciliation in its next heartbeat, sent at once; with
``hold_acks`` only once `acknowledge` says the application's callbacks ran (so partitions it
commits in on_revoke are not handed on before), as librdkafka waits for its rebalance callback.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..client.coordinators import Coordinators
from ..client.network_client import Client
from ..core.backoff import RetryBackoff
from ..core.consumer_group import ConsumerGroupConfig, ConsumerGroupMember, ConsumerGroupState, ConsumerGroupStep
from ..core.group import GroupStep
from ..core.kafka_error import KafkaError
from ..core.member_states import TopicIdPartitions
from ..io.io_engine import Timer
from ..protocol.apis import CONSUMER_GROUP_HEARTBEAT
from ..protocol.codec import Struct
from ..protocol.consumer_protocol import TopicPartitions
from . import diagnostics
from .heartbeat_loop import HeartbeatLoop, topic_name


class ConsumerGroupMembership(HeartbeatLoop):
    def __init__(
        self,
        client: Client,
        coordinators: Coordinators,
        config: ConsumerGroupConfig,
        on_change: Callable[[GroupStep], None],
        *,
        hold_acks: bool = False,
    ) -> None:
        self.client = client
        self.coordinators = coordinators
        self.config = config
        self._group = config.group_id
        self.on_change = on_change
        self.member = ConsumerGroupMember(config)
        self.coordinator: int | None = None
        self._timer: Timer | None = None
        self._stopped = False
        self._in_flight = False  # one heartbeat at a time: the next waits for this one's answer
        self._hold_acks = hold_acks
        self._unacked = 0  # changes handed over and not yet served: the acknowledgement waits for 0
        # Lost coordinators and "ask again" answers: retry.backoff.ms, doubling while they repeat.
        self._backoff = RetryBackoff(client.config["retry.backoff.ms"], client.config["retry.backoff.max.ms"])
        self._rng = random.Random()

    def acknowledge(self) -> None:
        """The change handed over last has been served: acknowledge it in a heartbeat now."""

        def ack() -> None:
            self._unacked = max(0, self._unacked - 1)
            if not self._unacked and not self._stopped:
                before = self.member.state
                self.member.reconciled(self.client.engine.now())
                self._moved(before)
                self._later(0.0, self._heartbeat)

        self.client.engine.call_soon(ack)

    def resubscribe(self, topics: list[str]) -> None:
        """A new topic list (a pattern matched another topic): heartbeat with it now."""

        def change() -> None:
            if not self._stopped and self.member.resubscribe(topics) and not self._in_flight:
                self._later(0.0, self._heartbeat)

        self.client.engine.call_soon(change)

    def leave(self, timeout: float) -> Future[None]:
        done: Future[None] = Future()

        def leave() -> None:
            self._stop()
            before = self.member.state
            body = self.member.leave_request()
            if body is None:
                done.set_result(None)
                return
            self._moved(before)
            self._hand_over(self._named(self.member.on_left()))
            if self.coordinator is None:
                done.set_result(None)
                return
            self.client.request_io(
                CONSUMER_GROUP_HEARTBEAT,
                body,
                lambda _r, _e: done.set_result(None),
                node=self.coordinator,
                timeout=timeout,
                coordinator_lane=True,
            )

        self.client.engine.call_soon(leave)
        return done

    # --- IO thread ------------------------------------------------------------------------------

    def _heartbeat(self) -> None:
        if self._stopped or self.member.state is ConsumerGroupState.FATAL or self._in_flight:
            return
        if self.coordinator is None:
            self._find_coordinator(self.config.rebalance_timeout)
            return
        before = self.member.state
        body = self.member.heartbeat_request(self.client.engine.now())
        if self.client.debug.cgrp:
            self._moved(before)
            where = self.client.broker_name(self.coordinator)
            diagnostics.member_heartbeat(
                self.client.debug, self.config.group_id, self.member.epoch, len(self.member.owned), where
            )
        self._in_flight = True
        self.client.request_io(
            CONSUMER_GROUP_HEARTBEAT,
            lambda v: _for_version(body, v),
            self._answered,
            node=self.coordinator,
            timeout=self.config.rebalance_timeout,
            coordinator_lane=True,
        )

    def _answered(self, response: Struct | None, error: KafkaError | None) -> None:
        self._in_flight = False
        if self._stopped:
            return
        debug = self.client.debug
        if response is None:
            if debug.cgrp:
                diagnostics.member_heartbeat_failed(
                    debug, self.config.group_id, None, error, "finding the coordinator again"
                )
            self._lost_coordinator()
            return
        before = self.member.state
        step = self.member.on_heartbeat(response, self.client.engine.now())
        if debug.cgrp:
            if response.error_code:
                outcome = "rejoining" if step.lost and step.error is None else "stopping" if step.error else "retrying"
                diagnostics.member_heartbeat_failed(debug, self.config.group_id, response.error_code, None, outcome)
            self._moved(before)
        if step.find_coordinator:
            self._lost_coordinator()
            return
        if step.retry:
            self._later(self._retry_delay(), self._heartbeat)
            return
        self._backoff.reset()
        if step.lost or step.error is not None:  # (changes still waiting for names mean nothing now)
            named = self._named(step)
            self._when_named((), lambda: self._hand_over(named), self.config.rebalance_timeout, replace=True)
            if step.error is None:
                self._later(0.0, self._heartbeat)  # rejoin with epoch 0 at once
            return
        if step.assign or step.revoke:
            self._reconcile(step)
        self._later(self.member.heartbeat_interval, self._heartbeat)

    def _reconcile(self, step: ConsumerGroupStep) -> None:
        """Hand the change over by topic name (once the metadata names every assigned topic id:
        `HeartbeatLoop._when_named`), then acknowledge."""

        def go() -> None:
            self._hand_over(self._named(step))
            if self._hold_acks:
                self._unacked += 1
                return
            before = self.member.state
            self.member.reconciled(self.client.engine.now())
            self._moved(before)
            self._later(0.0, self._heartbeat)

        self._when_named(step.assign, go, self.config.rebalance_timeout, replace=False)

    def _hand_over(self, step: GroupStep) -> None:
        """A change to the consumer (``on_change``), said first under ``cgrp``."""
        if self.client.debug.cgrp:
            diagnostics.member_assignment(self.client.debug, self.config.group_id, self.member.epoch, step)
        self.on_change(step)

    def _moved(self, before: ConsumerGroupState) -> None:
        """Under ``cgrp``: the member's state change since ``before``, if any, with epoch and id."""
        member = self.member
        if member.state is not before and self.client.debug.cgrp:
            diagnostics.member_state(
                self.client.debug, self.config.group_id, before, member.state, member.epoch, member.member_id
            )

    def _retry_delay(self) -> float:
        return self._backoff.next(self._rng.random())

    def _name(self, topic_id: uuid.UUID) -> str | None:
        return topic_name(self.client.metadata, topic_id)

    def _by_name(self, tps: TopicIdPartitions) -> TopicPartitions:
        out: TopicPartitions = {}
        for topic_id, parts in tps.items():
            name = self._name(topic_id)
            if name is not None:
                out[name] = list(parts)
        return out

    def _named(self, step: ConsumerGroupStep) -> GroupStep:
        return GroupStep(
            assign=self._by_name(step.assign),
            revoke=self._by_name(step.revoke),
            lost=self._by_name(step.lost),
            error=step.error,
        )


def _for_version(body: dict[str, Any], version: int) -> dict[str, Any]:
    """v0 has no regex field."""
    return body if version >= 1 else {k: v for k, v in body.items() if k != "subscribed_topic_regex"}
