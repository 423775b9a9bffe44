"""The subscription and its group membership, bridged to the application's thread.

`Subscription` owns the membership (`group_member.GroupMember` for classic groups,
`consumer_group_member.ConsumerGroupMembership` for KIP-848) and the topic list: names as given,
``^patterns`` matched against the cluster's topics, again at every new metadata picture (the
client's metadata owner refreshes every topic each ``topic.metadata.refresh.interval.ms`` for a
pattern subscription), joining again when the match changes. The membership's
changes arrive on the IO thread as `core.group.Step`s; each is queued on the consumer's callback
queue, so ``poll()``/``consume()`` serve it in the caller's thread through ``apply`` (the face's
rebalance callbacks). A revocation's or loss's rejoin waits until its callback ran (`GroupMember.revoked`).

``max.poll.interval.ms``: when the application has not polled for that long, the member leaves
the group (its partitions are lost: another member may have them by the time it polls), the face
returns a ``_MAX_POLL_EXCEEDED`` event, and the poll after it serves the loss and joins again, as
librdkafka orders them (the loss is held here until `rejoin`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from concurrent.futures import Future

from ..client.committed_offsets import Committer
from ..client.coordinators import Coordinators
from ..client.executor import CallbackExecutor
from ..client.network_client import Client
from ..core.consumer_group import ConsumerGroupConfig
from ..core.group import GroupConfig, GroupStep
from ..core.kafka_error import KafkaError
from ..core.metadata_refresh import Pace
from ..protocol.codec import Struct
from .consumer_config import ConsumerConfig
from .consumer_group_member import ConsumerGroupMembership
from .group_member import GroupMember

log = logging.getLogger("kafkawire.consumer")

POLL_CHECK = 1.0  # seconds between looks at the application's last poll (at most)


def topics_of(names: list[str], patterns: list[re.Pattern[str]], client: Client) -> list[str]:
    """The subscribed names plus every known, non-internal topic a pattern matches (neither one
    topic.blacklist names: the metadata keeps those apart)."""
    found = {name for name in names if not client.metadata.ignores(name)}
    if patterns:
        for name, info in client.metadata.topics.items():
            if not info.is_internal and info.error_code == 0 and any(p.search(name) for p in patterns):
                found.add(name)
    return sorted(found)


class Subscription:
    # Slots: poll()'s C gate (native_c/poll_ready.c) reads ``left_for_poll`` at its offset.
    __slots__ = (
        "_apply",
        "_away_as",
        "_client",
        "_config",
        "_coordinators",
        "_executor",
        "_lost_while_away",
        "_max_poll",
        "_max_poll_exceeded",
        "_missing",
        "_polled_at",
        "_stopped",
        "_unavailable",
        "left_for_poll",
        "membership",
        "names",
        "patterns",
    )

    def __init__(
        self,
        client: Client,
        coordinators: Coordinators,
        config: ConsumerConfig,
        topics: list[str],
        executor: CallbackExecutor,
        apply: Callable[[GroupStep], None],
        *,
        polled_at: Callable[[], float],
        max_poll_exceeded: Callable[[], None],
        unavailable: Callable[[str, int], None] = lambda _topic, _code: None,
    ) -> None:
        self._client = client
        self._coordinators = coordinators
        self._config = config
        self._executor = executor
        self._apply = apply
        self.names = [t for t in topics if not t.startswith("^")]
        self.patterns = [re.compile(t) for t in topics if t.startswith("^")]
        self.membership: GroupMember | ConsumerGroupMembership | None = None
        self._stopped = False
        self._polled_at = polled_at
        self._max_poll_exceeded = max_poll_exceeded
        self._max_poll = config.options["max.poll.interval.ms"] / 1000
        self.left_for_poll = False
        self._lost_while_away: list[GroupStep] = []  # held for the poll that joins again
        self._away_as: Committer | None = None  # who we were before leaving for the poll interval
        self._unavailable = unavailable
        self._missing: set[str] = set()  # named topics reported unavailable, until they appear

    # --- thread-safe -----------------------------------------------------------------------

    def start(self) -> None:
        self._client.engine.call_soon(self._refresh)
        self._client.engine.call_soon(self._watch_polls)

    def rejoin(self) -> None:
        """Join again (a new membership) after leaving for max.poll.interval.ms; the partitions
        lost by leaving are handed over first."""
        self.left_for_poll = False
        held, self._lost_while_away = self._lost_while_away, []
        if not held:
            self._away_as = None
        for step in held:
            self._executor.put(self._apply, (step,))

        def join() -> None:
            if not self._stopped:
                self.membership = None
                self._follow_topics()

        self._client.engine.call_soon(join)

    def change(self, topics: list[str]) -> None:
        """A new topic list for this subscription (subscribe() again): join again with it."""
        names = [t for t in topics if not t.startswith("^")]
        patterns = [re.compile(t) for t in topics if t.startswith("^")]

        def swap() -> None:
            self.names, self.patterns = names, patterns
            self._refresh()

        self._client.engine.call_soon(swap)

    def member(self) -> Committer:
        """Who commits: our generation (or epoch) and ids as the group knows them now; after
        leaving for max.poll.interval.ms, until its loss was served, who we were then (a commit
        from on_lost is refused by the group, as librdkafka's is, not taken as a standalone one)."""
        if self._away_as is not None:
            return self._away_as
        m = self.membership
        if isinstance(m, GroupMember):
            ms = m.membership
            return Committer(ms.generation, ms.member_id, self._config.options["group.instance.id"])
        if isinstance(m, ConsumerGroupMembership):
            return Committer(m.member.epoch, m.member.member_id, self._config.options["group.instance.id"])
        return Committer()

    def revoked(self) -> None:
        """A classic revocation was served: its held rejoin may go."""
        if isinstance(self.membership, GroupMember):
            self.membership.revoked()

    def served(self, step: GroupStep) -> None:
        """A KIP-848 reconciliation was served (callbacks ran): acknowledge it to the coordinator.
        The loss held while away was served: commits are ours again."""
        if step.lost and not self.left_for_poll:
            self._away_as = None
        if isinstance(self.membership, ConsumerGroupMembership) and (step.assign or step.revoke):
            self.membership.acknowledge()

    def leave(self, timeout: float) -> Future[None]:
        self._stopped = True
        done: Future[None] = Future()

        def stop() -> None:
            self._client.metadata_refresh.unsubscribe(self._new_picture)
            if self.membership is None:
                done.set_result(None)
            else:
                self.membership.leave(timeout).add_done_callback(lambda _f: done.set_result(None))

        self._client.engine.call_soon(stop)
        return done

    # --- IO thread -------------------------------------------------------------------------

    def _changed(self, step: GroupStep) -> None:
        if self._stopped:
            return
        if self.left_for_poll:
            if step.revoke:  # we left without the application: it cannot commit them
                self._lost_while_away.append(GroupStep(lost=step.revoke))
            return
        self._executor.put(self._apply, (step,))
        if isinstance(self.membership, GroupMember) and self._impossible(step):
            self.membership.rejoin()

    def _impossible(self, step: GroupStep) -> bool:
        """An assignment naming partitions the topic does not have (a damaged SyncGroup answer, or
        a leader with other metadata): join again rather than hold it until the next rebalance."""
        md = self._client.metadata
        for topic, parts in step.assign.items():
            count = md.partition_count(topic)
            if count is not None and any(p >= count for p in parts):
                log.warning(
                    "the assignment names partitions %s of %s, which has %d: joining the group again",
                    parts,
                    topic,
                    count,
                )
                return True
        return False

    def _watch_polls(self) -> None:
        if self._stopped:
            return
        idle = time.monotonic() - self._polled_at()
        if self.membership is not None and not self.left_for_poll and idle > self._max_poll:
            self.left_for_poll = True
            self._away_as = self.member()
            self.membership.leave(self._config.options["socket.timeout.ms"] / 1000)
            self._client.engine.call_soon(self._max_poll_exceeded)  # after the leave (its loss held)
        self._client.engine.call_later(min(POLL_CHECK, self._max_poll / 2), self._watch_polls)

    def _refresh(self, pace: Pace = Pace.NOW) -> None:
        """Metadata for our topics (every topic when subscribed by pattern), then (re)start. A
        pattern subscription follows every later picture, refreshed periodically by the owner."""
        if self._stopped:
            return
        owner = self._client.metadata_refresh
        owner.unsubscribe(self._new_picture)
        if self.patterns:
            owner.keep_fresh(all_topics=True)
            owner.subscribe(self._new_picture)
        wanted = None if self.patterns else self.names

        def done(_response: Struct | None, error: KafkaError | None) -> None:
            if self._stopped:
                return
            if error is not None and self.patterns and self.membership is None:
                self._refresh(Pace.FAST)  # patterns need the topic list first (the owner backs off)
                return
            if error is None:
                self._report_missing()
            self._follow_topics()

        owner.ask(wanted, done, pace=pace, timeout=self._config.options["socket.timeout.ms"] / 1000)

    def _new_picture(self) -> None:
        """A pattern subscription: match the topics again (a new match joins again)."""
        if not self._stopped and self.membership is not None:
            self._report_missing()
            self._follow_topics()

    def _report_missing(self) -> None:
        """A named topic the cluster does not have (or refuses) is reported once, as librdkafka's
        "Subscribed topic not available" event, and again only after it was seen in between."""
        for name in self.names:
            code = self._client.metadata.topic_error(name)
            if not code:
                self._missing.discard(name)
            elif name not in self._missing:
                self._missing.add(name)
                self._unavailable(name, code)

    def _follow_topics(self) -> None:
        topics = topics_of(self.names, self.patterns, self._client)
        if self.membership is None:
            self.membership = self._new_membership(topics)
            self.membership.start()
        else:
            self.membership.resubscribe(topics)

    def _new_membership(self, topics: list[str]) -> GroupMember | ConsumerGroupMembership:
        c, opts = self._config, self._config.options
        assert c.group_id is not None
        rebalance_timeout = opts["max.poll.interval.ms"] / 1000
        if opts["group.protocol"] == "consumer":
            config = ConsumerGroupConfig(
                c.group_id,
                rebalance_timeout,
                topics,
                opts["group.instance.id"],
                opts["client.rack"],
                opts["group.remote.assignor"],
            )
            return ConsumerGroupMembership(self._client, self._coordinators, config, self._changed, hold_acks=True)
        group = GroupConfig(
            c.group_id,
            opts["session.timeout.ms"] / 1000,
            rebalance_timeout,
            opts["heartbeat.interval.ms"] / 1000,
            group_instance_id=opts["group.instance.id"],
            cooperative=c.cooperative,
        )
        return GroupMember(
            self._client,
            self._coordinators,
            group,
            c.assignors,
            topics,
            self._changed,
            hold_revokes=True,
            metadata_interval=opts["topic.metadata.refresh.interval.ms"] / 1000,
            coordinator_query_interval=opts["coordinator.query.interval.ms"] / 1000,
        )
