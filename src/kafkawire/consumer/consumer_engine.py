"""`ConsumerEngine`: the consumer's machinery under its faces.

The engine owns the client (one IO thread), the fetch engine, the subscription and its group
membership, the assignment, the stored and committed offsets, the look-ups, the callback queue
(rebalance steps, ``on_commit``, ``error_cb``, ``throttle_cb``, ``stats_cb``) and the close
sequence. `Consumer` (consumer.py) is a face over it that checks arguments and delegates;
`AIOConsumer` takes the same engine (`consumer.engine_of`) for what it runs on its event loop; the
share consumer is meant to be a second face over these pieces, hence a surface of named methods.
Engine methods assume an open engine: faces check `closed` (or call `check_open`) first.

Nothing here calls a face's public method. An application may subclass `Consumer` and override
``unassign()``, ``commit()`` and the rest; closing, leaving the group and the default that follows
a rebalance callback go through the engine, so they do the same whatever a subclass does.

Threads: every method runs in the caller's thread and only waits for what the IO thread answers.
The membership, the fetch engine and the automatic commit run on the IO thread and hand their
results over on the callback queue, which ``poll()``/``consume()`` serve in the caller's thread.
"""

from __future__ import annotations

import atexit
import logging
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future
from typing import Any

from ..base.debug import Debug
from ..base.model import OFFSET_INVALID, ClusterMetadata, ConsumerGroupMetadata, Message, TopicPartition, error_event
from ..client.committed_offsets import Committed, Committer
from ..client.coordinators import GROUP
from ..client.driver import Operation
from ..client.executor import CallbackExecutor
from ..client.network_client import Client
from ..client.telemetry import MetricsPusher, resource_attributes
from ..core import TopicPartitionKey as TP
from ..core.group import GroupStep
from ..core.kafka_error import KafkaError, KafkaException
from ..core.telemetry import PollIdle
from . import diagnostics
from .assignment import Assignment
from .callbacks import RebalanceCallbacks
from .commits import Commits, committed_partition, wanted_offsets
from .consumer_config import ConsumerConfig
from .consumer_stats import ConsumerStatistics, Rebalances
from .departures import Departures
from .fetch_engine import FetchEngine
from .lookups import offsets_for_times, watermarks
from .poll_ready import new_poll_ready
from .rebalance import Subscription

# The partition of a consumer error event that concerns no partition (a refused join, the poll
# interval exceeded): 0, as confluent-kafka's Message from librdkafka's event says.
EVENT_PARTITION = 0


class ConsumerClosedError(RuntimeError):
    """A call on a closed consumer: the ``RuntimeError`` confluent-kafka raises, its text alone
    (``"Consumer closed"``) as its only argument, as programs written for it match on."""


def closed_error(text: str = "Consumer closed") -> ConsumerClosedError:
    return ConsumerClosedError(text)


class ConsumerEngine:
    def __init__(self, config: ConsumerConfig, log: logging.Logger, executor: CallbackExecutor, face: Any) -> None:
        """``face`` is what the rebalance callbacks receive as their consumer argument."""
        assert config.group_id is not None  # the face refuses a configuration without one
        self.config = config
        self.group_id: str = config.group_id
        self.log = log
        opts = config.options
        self.request_timeout = opts["socket.timeout.ms"] / 1000
        self.client = Client(opts, logger=log, debug=Debug.of(opts, log, "consumer"))
        self._coordinators = self.client.coordinators
        self.executor = executor
        self.client.on_error = self.error
        incremental = config.cooperative or opts["group.protocol"] == "consumer"
        self._assignment = Assignment()
        self._callbacks = RebalanceCallbacks(face, self, incremental)
        self._departures = Departures(self._revoke_for, executor, self.request_timeout)
        self._commits = Commits(
            self.client,
            self._coordinators,
            self.group_id,
            self.member,
            executor,
            config.on_commit,
            request_timeout=self.request_timeout,
            backoff_ms=(opts["retry.backoff.ms"], opts["retry.backoff.max.ms"]),
            skipped_past=(lambda tp, at: self._fetch.skipped_past(tp, at))
            if opts["enable.auto.offset.store"]
            else None,
        )
        if opts["enable.auto.commit"] and opts["auto.commit.interval.ms"] > 0:
            self._commits.auto_commit_every(opts["auto.commit.interval.ms"] / 1000)
        self._auto_commit = bool(opts["enable.auto.commit"])
        self._auto_store = bool(opts["enable.auto.offset.store"])
        self._events: deque[Message] = deque()  # error events for poll() (max.poll.interval.ms)
        self._wake_queued = False
        self._fetch = FetchEngine(self.client, config, self._wake_poll)
        self._poll_take = self._fetch.poll_take(self._commits.store_target() if self._auto_store else None)
        # poll()'s gate, and the state it reads (closed, rejoin_due, polled_at, subscription):
        # consumer/poll_ready.py, or its C twin, which the face's poll() reads without a lookup
        self.ready = new_poll_ready(self.executor.waiting, self._events, self._poll_take)
        throttle_cb = opts["throttle_cb"]
        if throttle_cb is not None:  # served by poll(), as error_cb
            self._fetch.on_throttled = lambda event: executor.put(throttle_cb, (event,))
        self._stats: ConsumerStatistics | None = None
        self._rebalances = Rebalances()  # statistics' cgrp
        self.poll_idle = PollIdle()  # the share of time waiting in poll(), for metrics push (KIP-714)
        if opts["stats_cb"] is not None and opts["statistics.interval.ms"] > 0:
            self._stats = ConsumerStatistics(
                self.client,
                self._fetch,
                executor,
                opts["stats_cb"],
                opts["statistics.interval.ms"] / 1000,
                lambda: len(self._assignment),
                rows=self._fetch.partition_stats,
                received=self._fetch.received,
                offsets=self._commits.offsets,
                read_committed=config.read_committed,
                group=lambda: self._rebalances.cgrp(
                    self.client, self.ready.subscription, self.closed, bool(self._assignment)
                ),
            )
        self.telemetry = MetricsPusher(
            "consumer",
            self.client,
            bool(opts["enable.metrics.push"]),
            log,
            self._metrics,
            lambda: resource_attributes(
                {
                    "client_rack": opts["client.rack"],
                    "group_id": self.group_id,
                    "group_instance_id": opts["group.instance.id"],
                    "member_id": self.member().member_id,
                }
            ),
        )
        _OPEN.add(self)
        # The group's coordinator looked up now, as librdkafka's consumer does when it is made: a
        # committed() later asks it at once on the coordinator's own connection, instead of first
        # queueing a lookup behind a fetch on a connection a broker's quota mutes (KIP-219). Asked
        # again about every retry.backoff.max.ms until found (a new cluster answers
        # COORDINATOR_NOT_AVAILABLE at first), as librdkafka's consumer keeps asking too.
        self._lookup: Operation[str] | None = None
        self.client.engine.call_soon(self._find_coordinator)

    @property
    def closed(self) -> bool:
        return self.ready.closed

    def _find_coordinator(self) -> None:
        backoff = self.config.options["retry.backoff.max.ms"]
        self._lookup = self._coordinators.locate_io(
            GROUP,
            self.group_id,
            lambda _node: None,
            request_timeout=self.request_timeout,
            backoff_ms=(backoff, backoff),
        )

    def _stop_lookup(self) -> None:
        if self._lookup is not None:
            self._lookup.abort(KafkaError(KafkaError._DESTROY, "the consumer is closed"))

    def _metrics(self) -> dict[str, float]:
        """The consumer's own client metrics (KIP-714) over the push interval, on the IO thread."""
        latency = self._rebalances.latency
        avg, peak = latency.take()
        return {
            "coordinator.assigned.partitions": len(self._assignment),
            "coordinator.rebalance.latency.avg": avg,
            "coordinator.rebalance.latency.max": peak,
            "coordinator.rebalance.latency.total": latency.total,
            "poll.idle.ratio.avg": self.poll_idle.meter.take()[0],
        }

    def check_open(self) -> None:
        """For faces: `ConsumerClosedError` once closed, as confluent-kafka raises."""
        if self.closed:
            raise closed_error()

    # --- subscription and assignment ---------------------------------------------------------

    def subscribe(self, topics: list[str], on_assign: Any, on_revoke: Any, on_lost: Any) -> None:
        """Join the group for ``topics`` (names, ``^regex`` patterns), or give a running
        subscription new topics; the rebalance callbacks are replaced either way."""
        self._callbacks.set(on_assign, on_revoke, on_lost)
        if self.client.debug.consumer:
            diagnostics.subscribed(self.client.debug, self.group_id, topics)
        if self.ready.subscription is not None:
            self.ready.subscription.change(list(topics))
            return
        self._rebalances.started = time.monotonic()
        current: list[Subscription] = []
        sub = Subscription(
            self.client,
            self._coordinators,
            self.config,
            list(topics),
            self.executor,
            lambda step: self._serve_step(current[0], step),
            polled_at=lambda: self.ready.polled_at,
            max_poll_exceeded=self._max_poll_exceeded,
            unavailable=self._topic_unavailable,
        )
        current.append(sub)
        self.ready.subscription = sub
        sub.start()

    @property
    def subscribed(self) -> bool:
        return self.ready.subscription is not None

    def unsubscribe(self) -> None:
        """Leave the group, the revocation served by whoever serves the callback queue next: the
        next poll(), or an asyncio face's loop (`Departures`)."""
        if self.client.debug.consumer:
            diagnostics.unsubscribed(self.client.debug, self.group_id)
        if self.ready.subscription is not None:
            self._departures.later(self.ready.subscription)
            self.ready.subscription = None

    def assign(self, partitions: list[TopicPartition]) -> None:
        """The assignment, replaced: each partition starts at its offset, or the committed one."""
        self._callbacks.assignment_changed()
        keep = {(p.topic, p.partition) for p in partitions}
        removed = [tp for tp in self._assignment.tps() if tp not in keep]
        self._commit_before_removing(removed)
        added, _ = self._assignment.replace(partitions)
        self._removed(removed)
        self._added(added)

    def unassign(self) -> None:
        self._callbacks.assignment_changed()
        removed = self._assignment.tps()
        self._commit_before_removing(removed)
        self._assignment.replace([])
        self._removed(removed)

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        self._callbacks.assignment_changed()
        self._added(self._assignment.add(partitions))

    def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        self._callbacks.assignment_changed()
        keys = [(tp.topic, tp.partition) for tp in partitions]
        if all(k in self._assignment for k in keys):
            self._commit_before_removing(keys)
        self._assignment.remove(partitions)  # raises for a partition not assigned
        self._removed(keys)

    def drop(self, partitions: list[TopicPartition]) -> None:
        """Lost partitions are someone else's already: no commit, just forget them."""
        keys = [(tp.topic, tp.partition) for tp in partitions if (tp.topic, tp.partition) in self._assignment]
        self._assignment.remove([TopicPartition(t, p) for t, p in keys])
        self._removed(keys)

    def assigned(self) -> list[TopicPartition]:
        return self._assignment.as_given()

    def _added(self, starts: dict[TP, int]) -> None:
        if starts:
            if self.client.debug.consumer:
                diagnostics.added(self.client.debug, starts, len(self._assignment))
            self._fetch.assign((tp, offset, None) for tp, offset in starts.items())

    def _removed(self, keys: list[TP]) -> None:
        if keys:
            if self.client.debug.consumer:
                diagnostics.removed(self.client.debug, keys, len(self._assignment))
            self._fetch.unassign(keys)
            self._commits.forget(keys)

    def _commit_before_removing(self, keys: list[TP]) -> None:
        """With enable.auto.commit, what was consumed of partitions leaving us is committed first
        (as librdkafka does), so the next owner starts after it."""
        if keys and self._auto_commit:
            self._commits.commit_leaving(keys, self.log)

    # --- rebalance callbacks (served by poll()) ----------------------------------------------

    def _serve_step(self, sub: Subscription, step: GroupStep) -> None:
        """One change of the group's assignment, in the application's thread: lost, revoked, then
        assigned partitions, each through its callback (which may assign itself) or by default;
        after the one an async callback holds up, if any."""
        self._callbacks.after_awaited(lambda: self._start_step(sub, step))

    def _start_step(self, sub: Subscription, step: GroupStep) -> None:
        if sub is not self.ready.subscription or self.closed:
            return
        if step.error is not None:
            text = f"consumer group {self.group_id}: {KafkaError(step.error).str()}"
            self.error(KafkaError(step.error, text, fatal=True))
        if step.refused is not None:  # an error event from poll(), as librdkafka's
            text = f"JoinGroup failed: {KafkaError(step.refused).str()}"
            self._events.append(error_event(KafkaError(step.refused, text), partition=EVENT_PARTITION))
        self._rebalances.served(step)
        self._callbacks.drive(self._callbacks.serve(step, sub.revoked), lambda: sub.served(step))

    def await_callbacks(self, hand_over: Callable[[Awaitable[Any]], None]) -> None:
        """For an asyncio face: what an async rebalance callback returns is handed over to it, to
        await and then report with `callback_done`; the callback's default waits for that end,
        and the group's later changes wait behind it."""
        self._callbacks.hand_over = hand_over

    def callback_done(self, error: BaseException | None) -> None:
        """The awaited callback ended (``error``: what it raised, raised here once its default
        was applied); its step goes on."""
        self._callbacks.done(error)

    def _leave_group(self) -> None:
        sub, self.ready.subscription = self.ready.subscription, None
        self._departures.leave_now(sub)

    def _revoke_for(self, sub: Subscription, then: Callable[[list[Future[Any]]], None]) -> None:
        """``sub``'s partitions through on_revoke (an async one awaited by the asyncio face, after
        the group change it may be awaiting), then unassigned with the automatic commit started,
        not waited for (the face may be an event loop); ``then(the commit's futures)`` once done,
        raising or not. The callback commits as that member."""
        self._callbacks.after_awaited(lambda: self._start_revoke(sub, then))

    def _start_revoke(self, sub: Subscription, then: Callable[[list[Future[Any]]], None]) -> None:
        committing: list[Future[Any]] = []
        parts = self._assignment.partitions()
        if not parts:
            then(committing)
            return

        def unassign() -> None:
            removed = self._assignment.tps()
            if removed and self._auto_commit:
                committing.extend(self._commits.commit_leaving(removed, self.log, wait=False))
            self._assignment.replace([])
            self._removed(removed)

        def end() -> None:
            if self.ready.subscription is sub:
                self.ready.subscription = current
            then(committing)

        current, self.ready.subscription = self.ready.subscription, sub
        self._callbacks.drive(self._callbacks.revoke_all(parts, unassign), end)

    # --- consuming ---------------------------------------------------------------------------

    def consume(self, count: int, timeout: float | None) -> list[Message]:
        """Serve callbacks, then up to ``count`` messages or events; wait (serving) up to
        ``timeout`` s (None or negative: forever) for the first."""
        return self._serve_until(lambda: self._take(count), 0 if count == 0 else timeout) or []

    def consume_arrow(self, max_records: int, timeout: float | None) -> Any:
        """As `consume`, the records as one pyarrow RecordBatch (consumer/arrow.py), or None."""
        return self._serve_until(lambda: self._take_arrow(max_records), timeout)

    def _take_arrow(self, max_records: int) -> Any:
        """The first error event waiting (ours, then those take_arrow() kept) raised as
        KafkaException; else up to ``max_records`` records as one record batch, their offsets
        stored (enable.auto.offset.store), or None."""
        event = self._handed(self._events.popleft()) if self._events else self._fetch.held_event()
        if event is None:
            handed: dict[TP, tuple[int, int]] = {}
            batch = self._fetch.take_arrow(max_records, handed)
            if batch is not None:
                if self._auto_store:
                    self._commits.store_handed(handed)
                return batch
            event = self._fetch.held_event()  # the take met only events
        if event is not None:
            raise KafkaException(event.error())
        return None

    def _serve_until(self, take: Callable[[], Any], timeout: float | None) -> Any:
        """Serve callbacks, then ``take()``; wait (serving) until it gives something, or None
        once ``timeout`` passed."""
        entered = time.monotonic()
        try:
            deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
            self.ready.polled_at = time.monotonic()
            sub = self.ready.subscription
            if self.ready.rejoin_due:
                self.ready.rejoin_due = False
                if sub is not None:  # polled again after _MAX_POLL_EXCEEDED: lost, then join again
                    sub.rejoin()
            while True:
                self.executor.serve(0)
                found = take()
                if found:
                    return found
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self.executor.serve(remaining)  # returns once something was queued (records: _wake_poll)
        finally:
            self.poll_idle.polled(entered, time.monotonic())

    def _take(self, count: int) -> list[Message]:
        events = self._events
        found = [self._handed(events.popleft()) for _ in range(min(count, len(events)))]
        if not self._auto_store:
            records = self._fetch.take(count - len(found))
        else:
            last: dict[TP, Message] = {}
            records = self._fetch.take(count - len(found), last)
            for m in last.values():
                self._commits.store_returned(m)
        return found + records if found else records

    def _handed(self, event: Message) -> Message:
        """An error event on its way to the application; after _MAX_POLL_EXCEEDED the next poll
        hands over the lost partitions and joins again (librdkafka's order)."""
        error = event.error()
        if error is not None and error.code() == KafkaError._MAX_POLL_EXCEEDED:
            self.ready.rejoin_due = True
        return event

    def _wake_poll(self) -> None:
        """The fetch engine has records (IO thread): wake a waiting poll() with one queued no-op."""
        if not self._wake_queued:
            self._wake_queued = True
            self.executor.put(setattr, (self, "_wake_queued", False))  # served: the next one may be queued

    def _max_poll_exceeded(self) -> None:
        """The group was left because poll() was not called in time (IO thread): an error event
        for the next poll(), as librdkafka's."""
        text = "Application maximum poll interval exceeded: leaving the group"
        self._events.append(error_event(KafkaError(KafkaError._MAX_POLL_EXCEEDED, text), partition=EVENT_PARTITION))
        self._wake_poll()

    def _topic_unavailable(self, topic: str, code: int) -> None:
        """A subscribed topic the cluster does not have (IO thread): an error event naming it, as
        librdkafka's; the subscription stays (the topic may be created)."""
        error = KafkaError(code, f"Subscribed topic not available: {topic}: {KafkaError(code).str()}")
        self._events.append(error_event(error, topic, EVENT_PARTITION))
        self._wake_poll()

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """The offset of the next message handed over per partition (OFFSET_INVALID: unknown)."""
        out = []
        for tp in partitions:
            at = self._fetch.position((tp.topic, tp.partition))
            out.append(TopicPartition(tp.topic, tp.partition, OFFSET_INVALID if at is None else at))
        return out

    def seek(self, key: TP, offset: int) -> None:
        if key not in self._assignment or self._fetch.position(key) is None:
            raise KafkaException(KafkaError(KafkaError._STATE))  # as librdkafka: not being fetched yet
        self._fetch.seek(key, offset)

    def pause(self, keys: list[TP]) -> None:
        self._fetch.pause(keys)

    def resume(self, keys: list[TP]) -> None:
        self._fetch.resume(keys)

    # --- offsets -----------------------------------------------------------------------------

    def offsets_to_commit(self, message: Message | None, offsets: list[TopicPartition] | None) -> dict[TP, Committed]:
        """commit()'s arguments as offsets: a message's offset + 1, the given offsets, or (neither)
        what was consumed of the assignment and not committed yet."""
        wanted = wanted_offsets(message, offsets)
        return self._commits.pending(self._assignment.tps()) if wanted is None else wanted

    def commit(self, wanted: Mapping[TP, Committed], asynchronous: bool) -> list[TopicPartition] | None:
        """Asynchronous: None at once, the outcome to ``on_commit``; else wait and return the
        partitions, each with its error (raises when none could be committed)."""
        if self.client.debug.consumer:
            diagnostics.commit_called(self.client.debug, self.group_id, wanted, asynchronous)
        if asynchronous:
            self._commits.commit_async(wanted)
            return None
        return self._commits.commit_sync(wanted)

    def start_commit(self, wanted: Mapping[TP, Committed]) -> Operation[TP]:
        """A commit started, for a face that awaits its futures itself (the asyncio one), then
        calls `commit_outcome`."""
        return self._commits.start(wanted)

    def commit_outcome(self, wanted: Mapping[TP, Committed], futures: Mapping[TP, Future[Any]]) -> list[TopicPartition]:
        return self._commits.outcome(wanted, futures)

    def committed(self, keys: list[TP], timeout: float | None) -> list[TopicPartition]:
        """The group's committed offsets (OFFSET_INVALID where none is)."""
        found = self._commits.committed(keys, require_stable=self.config.read_committed, timeout=self._timeout(timeout))
        return [committed_partition(tp, found[tp]) for tp in keys]

    def store_offsets(self, wanted: Mapping[TP, Committed]) -> None:
        """Offsets stored for the next commit, for assigned partitions (enable.auto.offset.store=false)."""
        if self._auto_store:
            raise KafkaException(
                KafkaError(KafkaError._INVALID_ARG, "store_offsets() needs enable.auto.offset.store=false")
            )
        self._commits.store_assigned(wanted, self._assignment)

    def watermarks(self, key: TP, timeout: float | None, cached: bool) -> tuple[int, int]:
        """(low, high): asked of the leader, or (``cached``) as the last fetch saw them."""
        if cached:
            return self._fetch.watermarks(key) or (OFFSET_INVALID, OFFSET_INVALID)
        return watermarks(self.client, key, read_committed=self.config.read_committed, timeout=self._timeout(timeout))

    def offsets_for_times(self, queries: Mapping[TP, int], timeout: float | None) -> list[TopicPartition]:
        return offsets_for_times(
            self.client, queries, read_committed=self.config.read_committed, timeout=self._timeout(timeout)
        )

    def _timeout(self, timeout: float | None) -> float:
        return self.request_timeout if timeout is None or timeout < 0 else float(timeout)

    # --- the group and the cluster -----------------------------------------------------------

    def member(self) -> Committer:
        """Who commits: our generation (or epoch) and ids; empty outside a group."""
        sub = self.ready.subscription
        return Committer() if sub is None else sub.member()

    def group_metadata(self) -> ConsumerGroupMetadata:
        m = self.member()
        return ConsumerGroupMetadata(self.group_id, m.generation, m.member_id, m.group_instance_id)

    def list_topics(self, topic: str | None, timeout: float | None) -> ClusterMetadata:
        auto = self.config.options["allow.auto.create.topics"]
        return self.client.list_topics(topic, timeout, auto_create=auto)

    def error(self, error: KafkaError) -> None:
        """A client-level error, for error_cb (logged when there is none); any thread."""
        if self.config.error_cb is not None:
            self.executor.put(self.config.error_cb, (error,))
        else:
            self.log.error("%s", error.str())

    # --- closing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Revoke the assignment (``on_revoke``), commit what was consumed (enable.auto.commit),
        leave the group so its partitions move at once, and stop. A callback's exception is
        raised once everything is stopped."""
        failure: BaseException | None = None
        if self.client.debug.consumer:
            diagnostics.closing(self.client.debug, self.group_id, len(self._assignment))
        self._callbacks.abandon()
        for sub in self._departures.abandon():
            if self.ready.subscription is sub:  # set while its revocation ran: that member is leaving
                self.ready.subscription = None
        try:
            self._departures.serve_pending()  # unsubscribed, not polled since: served here
            if self.ready.subscription is not None:
                self._leave_group()
            else:
                self._commit_before_removing(self._assignment.tps())
        except BaseException as exc:  # a callback's exception is raised once closing is done
            failure = exc
        self._departures.wait()
        self.telemetry.close()
        self._commits.stop()
        if self._stats is not None:
            self._stats.stop()
        self._fetch.close()
        self.ready.closed = True
        self.client.engine.call_soon(self._stop_lookup)
        _OPEN.discard(self)
        while len(self.executor) and not self.executor.background:
            try:  # on_commit of the last commits; callbacks raising now are only logged
                self.executor.serve(0)
            except Exception:
                self.log.exception("a consumer callback raised while closing (ignored)")
        self.executor.close()
        self.client.close()
        if failure is not None:
            raise failure


# Engines not closed yet: at interpreter exit each one in a group says so (its partitions wait
# for session.timeout.ms before the group moves them, and what it consumed since its last commit
# will be read again). At INFO: confluent-kafka prints nothing then, and an application that
# configured no logging must not see it on stderr (Python's last-resort handler prints WARNING up).
_OPEN: weakref.WeakSet[ConsumerEngine] = weakref.WeakSet()


@atexit.register
def _warn_unclosed() -> None:
    for engine in list(_OPEN):
        if not engine.closed and engine.subscribed:
            engine.log.info(
                "a Consumer of group %s was never closed: it did not leave the group (call close() before exiting)",
                engine.group_id,
            )
