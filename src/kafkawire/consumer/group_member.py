"""A classic group membership run on the client's IO thread: `core.group.Membership` decides,
this module only sends what it asks for and arms its timers.

It finds the coordinator (the shared cache), joins with one protocol per configured assignor
(preference order), runs the chosen assignor when it is the leader (after a metadata refresh for
every member's topics, over the coordinator's connection), syncs, heartbeats, and rejoins when told.
Every assignment change is handed to ``on_change`` on the IO thread; the consumer turns it into
rebalance callbacks in poll(). With ``hold_revokes`` a rejoin that follows a revocation or a loss
waits for `revoked` (the application's on_revoke or on_lost ran, and could commit or end its
transaction with the generation it consumed under: `Step.holds_rejoin`), as librdkafka waits for its
rebalance callback before it joins again; then also for the transactions of this process that carry
the group's offsets (`client/group_transactions.py`), so the next assignment's committed offsets are
read after them. Meanwhile it keeps heartbeating, so that the coordinator does not drop it while it
waits.

The leader keeps the partition counts it assigned with and looks at the metadata again (every
second while a subscribed topic is missing, else every ``metadata_interval``): a topic created or
grown since makes the group join again, as the Java client's leader does.

Every ``coordinator.query.interval.ms`` (every ``retry.backoff.ms`` while the coordinator's connection
is down, core/failover.py) it asks FindCoordinator again, as librdkafka does: a coordinator that moved
is followed at once rather than when an answer says NOT_COORDINATOR.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..client.coordinators import GROUP, Coordinators
from ..client.driver import Operation
from ..client.group_transactions import GROUP_TRANSACTIONS
from ..client.network_client import Client
from ..core.assignors import ASSIGNORS, COOPERATIVE_STICKY, JoinedMember, encode_sticky_user_data
from ..core.backoff import RetryBackoff
from ..core.failover import coordinator_query_delay
from ..core.group import REFUSED_JOIN_PAUSE, GroupConfig, GroupState, GroupStep, Membership
from ..core.kafka_error import KafkaError
from ..io.io_engine import Timer
from ..protocol.apis import HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP
from ..protocol.codec import Struct
from ..protocol.consumer_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from ..protocol.primitives import DecodeError
from . import diagnostics

REQUEST_SLACK = 5.0  # a JoinGroup may wait a whole rebalance timeout: its request gets this much more
MISSING_TOPIC_RECHECK = 1.0  # seconds between the leader's looks for a subscribed topic it could not assign


class GroupMember:
    def __init__(
        self,
        client: Client,
        coordinators: Coordinators,
        config: GroupConfig,
        assignors: list[str],
        topics: list[str],
        on_change: Callable[[GroupStep], None],
        *,
        hold_revokes: bool = False,
        metadata_interval: float = 300.0,
        coordinator_query_interval: float = 600.0,
    ) -> None:
        self.client = client
        self.coordinators = coordinators
        self.config = config
        self.assignors = assignors
        self.topics = sorted(topics)
        self.on_change = on_change
        self.membership = Membership(config)
        self.coordinator: int | None = None
        self._timer: Timer | None = None
        self._stopped = False
        self._hold_revokes = hold_revokes
        self._held = False  # a rejoin waits for revoked()
        self._member_id = ""  # the last member id we had
        self._metadata_interval = metadata_interval
        self._assigned: tuple[int, dict[str, int]] | None = None  # the leader's generation and counts
        self._recheck: Timer | None = None
        self._query_interval = coordinator_query_interval
        self._query: Timer | None = None  # the next periodic FindCoordinator
        self._lookup: Operation[str] | None = None  # the coordinator looked up for a join or heartbeat
        self._query_lookup: Operation[str] | None = None  # the periodic one
        # "Ask again" answers and lost coordinators: retry.backoff.ms, doubling while they repeat.
        self._backoff = RetryBackoff(client.config["retry.backoff.ms"], client.config["retry.backoff.max.ms"])
        self._rng = random.Random()
        self._debug = client.debug
        self._seen: GroupState | None = None  # the state last told to the cgrp debug context

    # --- thread-safe ----------------------------------------------------------------------------

    def start(self) -> None:
        self.client.engine.call_soon(self._join)
        self.client.engine.call_soon(self._arm_query)

    def revoked(self) -> None:
        """The revocation handed over last has been served: the held rejoin may go."""

        def release() -> None:
            if self._held:  # and after the transactions this process has open with our offsets
                self._held = False
                GROUP_TRANSACTIONS.after(self.config.group_id, self.client.engine, self._join)

        self.client.engine.call_soon(release)

    def resubscribe(self, topics: list[str]) -> None:
        """A new topic list (a pattern matched another topic): join again with it."""

        def change() -> None:
            if sorted(topics) == self.topics or self._stopped:
                return
            self.topics = sorted(topics)
            if self.membership.state is GroupState.STABLE:
                self._follow(self.membership.rejoin())

        self.client.engine.call_soon(change)

    def rejoin(self) -> None:
        """Join again now (the assignment we were given cannot be right)."""

        def again() -> None:
            if not self._stopped and self.membership.state is GroupState.STABLE:
                self._follow(self.membership.rejoin())

        self.client.engine.call_soon(again)

    def leave(self, timeout: float) -> Future[None]:
        """Leave the group (LeaveGroup unless static); resolves once answered or ``timeout`` passed."""
        done: Future[None] = Future()

        def leave() -> None:
            self._stopped = True
            for timer in (self._timer, self._recheck, self._query):
                if timer is not None:
                    timer.cancel()
            for lookup in (self._lookup, self._query_lookup):
                _abort(lookup)
            body = self.membership.leave_request() if self.membership.state is not GroupState.FATAL else None
            if self.membership.state is not GroupState.FATAL:
                self.on_change(self.membership.left())
            if body is None or self.coordinator is None:
                done.set_result(None)
                return
            self.client.request_io(
                LEAVE_GROUP,
                body,
                lambda _r, _e: done.set_result(None),
                node=self.coordinator,
                timeout=timeout,
                coordinator_lane=True,
            )

        self.client.engine.call_soon(leave)
        return done

    # --- IO thread ------------------------------------------------------------------------------

    def _later(self, delay: float, fn: Callable[[], None]) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.client.engine.call_later(delay, fn)

    def _locate(self, found: Callable[[int], None], *, most_ms: int, fresh: bool = False) -> Operation[str]:
        """The group's coordinator, asked for until found (`Coordinators.locate_io`: retry.backoff.ms
        doubling up to ``most_ms`` between asks; ``fresh``: of the cluster), each answer told to the
        cgrp context."""

        def heard(node: int | KafkaError) -> None:
            if self._debug.cgrp and not self._stopped:
                where = self.client.broker_name(node) if isinstance(node, int) else ""
                diagnostics.coordinator(self._debug, self.config.group_id, node, where)

        config = self.client.config
        return self.coordinators.locate_io(
            GROUP,
            self.config.group_id,
            lambda node: None if self._stopped else found(node),
            request_timeout=self.config.session_timeout,
            backoff_ms=(config["retry.backoff.ms"], most_ms),
            heard=heard,
            fresh=fresh,
        )

    def _with_coordinator(self, then: Callable[[int], None]) -> None:
        """``then(node)`` once the coordinator is known (this lookup replaces one under way)."""

        def found(node: int) -> None:
            self.coordinator = node
            then(node)

        _abort(self._lookup)
        self._lookup = self._locate(found, most_ms=self.client.config["retry.backoff.max.ms"])

    def _arm_query(self) -> None:
        """The next periodic coordinator query: sooner while the coordinator cannot be reached."""
        if self._stopped:
            return
        reachable = self.coordinator is not None and self.client.is_ready(self.coordinator, lane=True)
        backoff = self.client.config["retry.backoff.ms"] / 1000
        delay = coordinator_query_delay(interval=self._query_interval, backoff=backoff, reachable=reachable)
        self._query = self.client.engine.call_later(delay, self._query_coordinator)

    def _query_coordinator(self) -> None:
        if self._stopped:
            return

        def found(node: int) -> None:
            if node != self.coordinator and self.coordinator is not None:
                self.coordinator = node  # heartbeats and the next join go there
            self._arm_query()

        # Asked of the cluster while the cache keeps the coordinator we have: a rejoin or a commit meanwhile
        # goes there at once, as librdkafka's, rather than waiting for this answer (on a one-broker cluster,
        # behind the member's Fetch long-poll). A failed query is asked again every retry.backoff.ms
        # (core/failover.py), not at the interval.
        self._query_lookup = self._locate(found, most_ms=self.client.config["retry.backoff.ms"], fresh=True)

    def _retry_delay(self) -> float:
        return self._backoff.next(self._rng.random())

    def _lost_coordinator(self) -> None:
        self.coordinators.forget(GROUP, self.config.group_id)
        self.coordinator = None

    def _join(self) -> None:
        if self._stopped:
            return
        self._with_coordinator(self._send_join)

    def _send_join(self, node: int) -> None:
        body = self.membership.join_request(self._protocols())
        self._note_state()
        timeout = self.config.rebalance_timeout + REQUEST_SLACK
        if self._debug.cgrp:
            diagnostics.joining(
                self._debug, self.config.group_id, self.membership, self.topics, self.client.broker_name(node)
            )
        self.client.request_io(JOIN_GROUP, body, self._joined, node=node, timeout=timeout, coordinator_lane=True)

    def _protocols(self) -> list[tuple[str, bytes]]:
        m = self.membership
        owned = m.owned if self.config.cooperative else {}
        out = []
        for name in self.assignors:
            user_data = encode_sticky_user_data(owned, m.generation) if name == COOPERATIVE_STICKY else None
            sub = Subscription(self.topics, user_data, owned, m.generation)
            out.append((name, encode_subscription(sub)))
        return out

    def _joined(self, response: Struct | None, error: KafkaError | None) -> None:
        if self._stopped:
            return
        if self._debug.cgrp:
            diagnostics.join_answer(self._debug, response, error)
        if response is None:
            self._follow(self.membership.on_no_answer())
            return
        step = self.membership.on_join(response, self.client.engine.now())
        if step.members is not None:
            self._assign_as_leader(step.members)
        elif self.membership.state is GroupState.SYNCING:
            self._send_sync({})
        else:
            self._follow(step)

    def _assign_as_leader(self, raw_members: list[Any]) -> None:
        members: dict[str, JoinedMember] = {}
        for raw in raw_members:
            try:
                sub = decode_subscription(raw.metadata)
            except DecodeError:
                sub = Subscription([])  # a member we cannot read gets nothing rather than failing everyone
            members[raw.member_id] = JoinedMember(raw.member_id, sub, raw.get("group_instance_id"))
        topics = sorted({t for m in members.values() for t in m.subscription.topics})

        def refreshed(_response: Struct | None, _error: KafkaError | None) -> None:
            if self._stopped or self.membership.state is not GroupState.SYNCING:
                return
            counts = {}
            for topic in topics:
                count = self.client.metadata.partition_count(topic)
                if count:
                    counts[topic] = count
            assignor = ASSIGNORS[self.membership.protocol or self.assignors[0]]
            plan = assignor(members, counts)
            if self._debug.assignor:
                name = self.membership.protocol or self.assignors[0]
                diagnostics.assignment(self._debug, self.config.group_id, name, plan, counts)
            self._assigned = (self.membership.generation, {t: counts.get(t, 0) for t in topics})
            self._recheck_later()
            self._send_sync({m: encode_assignment(Assignment(tps)) for m, tps in plan.items()})

        # On the coordinator's lane, as librdkafka's assignor asks on the JoinGroup answer's connection:
        # on the shared one it would wait behind this member's Fetch long-poll, and the group with it.
        timeout = self.config.session_timeout
        self.client.refresh_metadata_io(topics, refreshed, timeout=timeout, lane=self.coordinator)

    def _recheck_later(self) -> None:
        if self._recheck is not None:
            self._recheck.cancel()
        assigned = self._assigned
        missing = assigned is not None and not all(assigned[1].values())
        delay = MISSING_TOPIC_RECHECK if missing else self._metadata_interval
        if assigned is not None and delay > 0:
            self._recheck = self.client.engine.call_later(delay, self._check_assigned_topics)

    def _check_assigned_topics(self) -> None:
        """The leader's metadata check: join again when a topic's partition count is not the one
        the assignment was made with (created, grown or deleted since)."""
        assigned = self._assigned
        if self._stopped or assigned is None:
            return
        generation, counts = assigned

        def refreshed(_response: Struct | None, _error: KafkaError | None) -> None:
            if self._stopped or self._assigned is not assigned:
                return  # a newer assignment keeps its own counts
            m = self.membership
            if m.generation != generation:  # another generation: its leader (maybe us again) checks
                self._assigned = None
                return
            now = {t: self.client.metadata.partition_count(t) or 0 for t in counts}
            if now != counts and m.state is GroupState.STABLE:
                self._assigned = None
                self._follow(m.rejoin())
            else:
                self._recheck_later()

        self.client.refresh_metadata_io(sorted(counts), refreshed, timeout=self.config.session_timeout)

    def _send_sync(self, assignments: dict[str, bytes]) -> None:
        body = self.membership.sync_request(assignments)
        self._note_state()
        timeout = self.config.rebalance_timeout + REQUEST_SLACK
        self.client.request_io(
            SYNC_GROUP, body, self._synced, node=self.coordinator, timeout=timeout, coordinator_lane=True
        )

    def _synced(self, response: Struct | None, error: KafkaError | None) -> None:
        if self._stopped:
            return
        if response is None:
            self._follow(self.membership.on_no_answer())
            return
        assignment = None
        if response.error_code == 0:
            try:
                assignment = decode_assignment(response.assignment).partitions
            except DecodeError:
                pass  # the membership joins again
        if self._debug.cgrp:
            diagnostics.sync_answer(self._debug, response, error, assignment)
        self._follow(self.membership.on_sync(response, assignment, self.client.engine.now(), self.topics))

    def _follow(self, step: GroupStep) -> None:
        """Act on a step: report it, then rejoin, retry or keep heartbeating."""
        self._note_state()
        if self.membership.member_id:
            self._member_id = self.membership.member_id  # (a loss may have cleared it: the one lost)
        if step.lost:  # our transactions in flight must not commit these partitions' offsets
            GROUP_TRANSACTIONS.lost(self.config.group_id, self._member_id)
        if step.assign or step.revoke or step.lost or step.synced or step.error is not None or step.refused is not None:
            self.on_change(step)
        if step.error is not None:
            self._stopped = True
            return
        if step.refused is not None:
            self._later(REFUSED_JOIN_PAUSE, self._join)
            return
        if step.find_coordinator:
            self._lost_coordinator()
        elif not step.retry:
            self._backoff.reset()
        if step.holds_rejoin and self._hold_revokes:
            self._held = True
            self._later(self.config.heartbeat_interval, self._held_heartbeat)
        elif step.rejoin:
            self._later(0.0 if not step.find_coordinator else self._retry_delay(), self._join)
        elif step.retry:
            state = self.membership.state
            self._later(self._retry_delay(), self._heartbeat if state is GroupState.STABLE else self._join)
        elif self.membership.state is GroupState.STABLE:
            self._arm_heartbeat()

    def _note_state(self) -> None:
        """The cgrp context hears each change of the membership's state."""
        if self.membership.state is not self._seen:
            if self._debug.cgrp:
                diagnostics.group_state(self._debug, self.config.group_id, self._seen, self.membership)
            self._seen = self.membership.state

    def _arm_heartbeat(self) -> None:
        when = self.membership.next_heartbeat()
        if when is not None:
            self._later(max(0.0, when - self.client.engine.now()), self._heartbeat)

    def _heartbeat(self) -> None:
        if self._stopped or self.membership.state is not GroupState.STABLE:
            return
        now = self.client.engine.now()
        expired = self.membership.session_expired(now)
        if expired is not None:
            self._follow(expired)
            return
        if self.coordinator is None:
            self._with_coordinator(lambda _node: self._heartbeat())
            return
        body = self.membership.heartbeat_request(now)
        if self._debug.cgrp:
            diagnostics.heartbeat(
                self._debug, self.config.group_id, self.membership, self.client.broker_name(self.coordinator)
            )
        self.client.request_io(
            HEARTBEAT,
            body,
            self._heartbeat_answered,
            node=self.coordinator,
            timeout=self.config.session_timeout,
            coordinator_lane=True,
        )

    def _held_heartbeat(self) -> None:
        """While the rejoin is held, keep the membership alive (its answers only say the group
        rebalances: the rejoin that follows hears the rest)."""
        if self._stopped or not self._held or self.coordinator is None:
            return
        body = self.membership.held_heartbeat_request(self.client.engine.now())
        if body is None:
            return
        self.client.request_io(
            HEARTBEAT,
            body,
            lambda _response, _error: None,
            node=self.coordinator,
            timeout=self.config.session_timeout,
            coordinator_lane=True,
        )
        self._later(self.config.heartbeat_interval, self._held_heartbeat)

    def _heartbeat_answered(self, response: Struct | None, error: KafkaError | None) -> None:
        if self._stopped or self.membership.state is not GroupState.STABLE:
            return
        if response is None:
            self._follow(self.membership.on_no_answer())
            return
        if self._debug.cgrp:
            diagnostics.heartbeat_answer(self._debug, self.config.group_id, response.error_code)
        self._follow(self.membership.on_heartbeat(response.error_code, self.client.engine.now()))


def _abort(lookup: Operation[str] | None) -> None:
    if lookup is not None:
        lookup.abort(KafkaError(KafkaError._DESTROY, "no longer wanted"))
