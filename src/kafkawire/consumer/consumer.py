"""`Consumer`: confluent-kafka's Consumer API, the face over one client, its group and its offsets.

Threads: every method runs in the caller's thread and only waits for what the IO thread (one per
consumer) answers. The group membership runs on the IO thread and hands its changes over as events
on the consumer's callback queue (`client/executor.py`), together with ``on_commit``, ``error_cb``
and ``stats_cb``; ``poll()``/``consume()`` serve that queue in the caller's thread, so the rebalance
callbacks (``on_assign``/``on_revoke``/``on_lost``) run there, as with confluent-kafka, and an
exception a callback raises comes out of that ``poll()``.
"""

from __future__ import annotations

import atexit
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from ..client.cluster import Client
from ..client.coordinators import Coordinators
from ..client.executor import CallbackExecutor
from ..client.group_offsets import Committed, Member
from ..client.logs import client_logger, log_init
from ..core import TopicPartitionKey as TP
from ..core.group import Step
from ..errors import KafkaError, KafkaException
from ..model import OFFSET_INVALID, ClusterMetadata, ConsumerGroupMetadata, Message, TopicPartition
from .assignment import Assignment, keyed
from .callbacks import Callback, RebalanceCallbacks
from .commits import Commits, committed_partition, wanted_offsets
from .config import ConsumerConfig, parse_consumer_config
from .fetch_engine import FetchEngine
from .lookups import offsets_for_times, watermarks
from .rebalance import Subscription
from .stats import ConsumerStatistics

log = logging.getLogger("kafkawire.consumer")

MAX_MESSAGES = 1_000_000  # consume()'s bound, as confluent-kafka's


class ConsumerClosedError(KafkaException, RuntimeError):
    """A call on a closed consumer: the ``RuntimeError`` confluent-kafka raises, and a
    `KafkaException` (``_DESTROY``). Its text is confluent-kafka's: tests match on it."""


def _closed_error(text: str = "Consumer closed") -> ConsumerClosedError:
    return ConsumerClosedError(KafkaError(KafkaError._DESTROY, text))


class Consumer:
    def __init__(self, conf: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        executor: CallbackExecutor | None = kwargs.pop("_executor", None)  # AIOConsumer serves on its loop
        if not isinstance(conf, Mapping):
            raise TypeError(f"expected configuration dict, not {type(conf).__name__}")
        merged = {**conf, **kwargs}
        config = parse_consumer_config(merged, log)
        self._log = client_logger(merged.get("logger"), log)
        if config.group_id is None:
            raise ValueError("group.id must be set")
        self._config: ConsumerConfig = config
        opts = config.options
        self._request_timeout = opts["socket.timeout.ms"] / 1000
        self._client = Client(opts, logger=self._log)
        self._coordinators = Coordinators(self._client)
        if executor is None:
            executor = CallbackExecutor(background=False, name="kafkawire-consumer", owner="consumer")
        self._executor = executor
        self._client.on_error = self._error
        incremental = config.cooperative or opts["group.protocol"] == "consumer"
        self._assignment = Assignment()
        self._subscription: Subscription | None = None
        self._callbacks = RebalanceCallbacks(self, incremental, self._drop)
        self._commits = Commits(
            self._client,
            self._coordinators,
            config.group_id,
            self._member,
            self._executor,
            config.on_commit,
            request_timeout=self._request_timeout,
            backoff_ms=(opts["retry.backoff.ms"], opts["retry.backoff.max.ms"]),
        )
        if opts["enable.auto.commit"] and opts["auto.commit.interval.ms"] > 0:
            self._commits.auto_commit_every(opts["auto.commit.interval.ms"] / 1000)
        self._auto_store = bool(opts["enable.auto.offset.store"])
        self._events: deque[Message] = deque()  # error events for poll() (max.poll.interval.ms)
        self._wake_queued = False
        self.polled_at = time.monotonic()  # the last poll()/consume(), for max.poll.interval.ms
        self._fetch = FetchEngine(self._client, config, self._ready)
        throttle_cb = opts["throttle_cb"]
        if throttle_cb is not None:  # served by poll(), as error_cb
            self._fetch.on_throttled = lambda event: self._executor.put(throttle_cb, (event,))
        self._stats: ConsumerStatistics | None = None
        if opts["stats_cb"] is not None and opts["statistics.interval.ms"] > 0:
            self._stats = ConsumerStatistics(
                self._client, self._fetch, self._executor, opts["stats_cb"], opts["statistics.interval.ms"] / 1000,
                lambda: len(self._assignment),
            )  # fmt: skip
        self._closed = False
        _OPEN.add(self)
        log_init(self._log, "consumer", opts["client.id"])

    # --- subscription and assignment ---------------------------------------------------------

    def subscribe(
        self,
        topics: list[str],
        on_assign: Callback | None = None,
        on_revoke: Callback | None = None,
        on_lost: Callback | None = None,
    ) -> None:
        """Join the group for ``topics`` (names, and ``^regex`` patterns); replaces a subscription."""
        self._check_open()
        if not isinstance(topics, (list, tuple)) or not all(isinstance(t, str) for t in topics):
            raise TypeError("topics must be a list of str")
        if not topics:
            raise KafkaException(KafkaError(KafkaError._INVALID_ARG, "subscribe() needs at least one topic"))
        self._callbacks.set(on_assign, on_revoke, on_lost)
        if self._subscription is not None:
            self._subscription.change(list(topics))
            return
        current: list[Subscription] = []
        sub = Subscription(
            self._client, self._coordinators, self._config, list(topics), self._executor,
            lambda step: self._serve_step(current[0], step),
            polled_at=lambda: self.polled_at, max_poll_exceeded=self._max_poll_exceeded,
        )  # fmt: skip
        current.append(sub)
        self._subscription = sub
        sub.start()

    def unsubscribe(self) -> None:
        """Revoke the assignment (``on_revoke``, then an automatic commit) and leave the group."""
        self._check_open()
        self._leave_group()

    def assign(self, partitions: list[TopicPartition]) -> None:
        """The assignment, replaced: start at each partition's offset, or the committed one."""
        self._check_open()
        parts = keyed(partitions)
        self._callbacks.assignment_changed()
        removed = [tp for tp in self._assignment.tps() if tp not in {(p.topic, p.partition) for p in parts}]
        self._commit_before_removing(removed)
        added, _ = self._assignment.replace(parts)
        self._removed(removed)
        self._added(added)

    def unassign(self) -> None:
        self._check_open()
        self._callbacks.assignment_changed()
        removed = self._assignment.tps()
        self._commit_before_removing(removed)
        self._assignment.replace([])
        self._removed(removed)

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        self._check_open()
        parts = keyed(partitions)
        self._callbacks.assignment_changed()
        self._added(self._assignment.add(parts))

    def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        self._check_open()
        parts = keyed(partitions)
        self._callbacks.assignment_changed()
        keys = [(tp.topic, tp.partition) for tp in parts]
        missing = [k for k in keys if k not in self._assignment]
        if not missing:
            self._commit_before_removing(keys)
        self._assignment.remove(parts)  # raises for a partition not assigned
        self._removed(keys)

    def _added(self, starts: dict[TP, int]) -> None:
        if starts:
            self._fetch.assign((tp, offset, None) for tp, offset in starts.items())

    def _removed(self, keys: list[TP]) -> None:
        if keys:
            self._fetch.unassign(keys)
            self._commits.forget(keys)

    def assignment(self) -> list[TopicPartition]:
        self._check_open()
        return self._assignment.partitions()

    def _commit_before_removing(self, keys: list[TP]) -> None:
        """With enable.auto.commit, what was consumed of partitions leaving us is committed first
        (as librdkafka does), so the next owner starts after it."""
        if keys and self._config.options["enable.auto.commit"]:
            self._commits.commit_leaving(keys, self._log)

    # --- rebalance callbacks (served by poll()) ----------------------------------------------

    def _serve_step(self, sub: Subscription, step: Step) -> None:
        """One change of the group's assignment, in the application's thread: lost, revoked, then
        assigned partitions, each through its callback (which may assign itself) or by default."""
        if sub is not self._subscription or self._closed:
            return
        if step.error is not None:
            self._error(
                KafkaError(
                    step.error, f"consumer group {self._config.group_id}: {KafkaError(step.error).str()}", fatal=True
                )
            )
        try:
            self._callbacks.serve(step, sub.revoked)
        finally:
            sub.served(step)

    def _drop(self, parts: list[TopicPartition]) -> None:
        """Lost partitions are someone else's already: no commit, just forget them."""
        keys = [(tp.topic, tp.partition) for tp in parts if (tp.topic, tp.partition) in self._assignment]
        self._assignment.remove([TopicPartition(t, p) for t, p in keys])
        self._removed(keys)

    def _leave_group(self) -> None:
        sub, self._subscription = self._subscription, None
        if sub is None:
            return
        try:
            parts = self._assignment.partitions()
            if parts:
                self._subscription = sub  # the callback may still commit as this member
                try:
                    self._callbacks.revoke_all(parts)
                finally:
                    self._subscription = None
        finally:
            sub.leave(self._request_timeout).result(self._request_timeout + 5)

    # --- consuming ---------------------------------------------------------------------------

    def poll(self, timeout: float | None = None) -> Message | None:
        """Serve callbacks (rebalances, commits, errors) and return one message or event, or None
        when ``timeout`` seconds passed (None or negative: wait forever). With nothing to serve, a
        buffered message is handed over at once (one hold of the engine's lock)."""
        self._check_open()
        sub = self._subscription
        if not len(self._executor) and not self._events and (sub is None or not sub.left_for_poll):  # nothing to serve
            self.polled_at = time.monotonic()
            m = self._fetch.take_one()
            if m is not None:
                if self._auto_store and m._error is None:
                    self._commits.store_returned(m)
                return m
        found = self._consume(1, timeout)
        return found[0] if found else None

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        """Up to ``num_messages`` messages or events; fewer (maybe none) once ``timeout`` passed."""
        self._check_open()
        if isinstance(num_messages, bool) or not isinstance(num_messages, int) or not 0 <= num_messages <= MAX_MESSAGES:
            raise ValueError("num_messages must be between 0 and 1000000 (1M)")
        return self._consume(num_messages, timeout)

    def consume_arrow(self, max_records: int = 1000, timeout: float = -1) -> Any:
        """Up to ``max_records`` records as one pyarrow RecordBatch (consumer/arrow.py's columns,
        headers included; no Python object per record), or None once ``timeout`` passed; serves callbacks as
        poll(). Error events are raised as KafkaException, one per call (arrow.hand_over)."""
        self._check_open()
        if isinstance(max_records, bool) or not isinstance(max_records, int) or not 1 <= max_records <= MAX_MESSAGES:
            raise ValueError("max_records must be between 1 and 1000000 (1M)")
        from .arrow import hand_over  # pyarrow, needed from here on
        commits = self._commits if self._auto_store else None
        return self._serve_until(lambda: hand_over(self._events, self._fetch, commits, max_records), timeout)

    def _consume(self, count: int, timeout: float | None) -> list[Message]:
        return self._serve_until(lambda: self._take(count), 0 if count == 0 else timeout) or []

    def _serve_until(self, take: Callable[[], Any], timeout: float | None) -> Any:
        """Serve callbacks, then ``take()``; wait (serving) until it gives something, or None
        once ``timeout`` passed."""
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        self.polled_at = time.monotonic()
        sub = self._subscription
        if sub is not None and sub.left_for_poll:
            sub.rejoin()  # polled again after max.poll.interval.ms: join again, as librdkafka
        while True:
            self._executor.serve(0)
            found = take()
            if found:
                return found
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            self._executor.serve(remaining)  # returns once something was queued (records: _ready)

    def _take(self, count: int) -> list[Message]:
        events = self._events
        found = [events.popleft() for _ in range(min(count, len(events)))]
        if not self._auto_store:
            records = self._fetch.take(count - len(found))
        else:
            last: dict[TP, Message] = {}
            records = self._fetch.take(count - len(found), last)
            for m in last.values():
                self._commits.store_returned(m)
        return found + records if found else records

    def _ready(self) -> None:
        """The engine has records (IO thread): wake a waiting poll() with one queued no-op."""
        if not self._wake_queued:
            self._wake_queued = True
            self._executor.put(setattr, (self, "_wake_queued", False))  # served: the next one may be queued

    def _max_poll_exceeded(self) -> None:
        """The group was left because poll() was not called in time (IO thread): an error event
        for the next poll(), as librdkafka's."""
        text = "Application maximum poll interval exceeded: leaving the group"
        self._events.append(Message(error=KafkaError(KafkaError._MAX_POLL_EXCEEDED, text)))
        self._ready()

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """The offset of the next message poll() returns per partition (OFFSET_INVALID: unknown)."""
        self._check_open()
        out = []
        for tp in keyed(partitions):
            at = self._fetch.position((tp.topic, tp.partition))
            out.append(TopicPartition(tp.topic, tp.partition, OFFSET_INVALID if at is None else at))
        return out

    def seek(self, partition: TopicPartition) -> None:
        """Move an actively consumed partition to an offset (absolute or logical)."""
        self._check_open()
        if not isinstance(partition, TopicPartition):
            raise TypeError(f"expected a TopicPartition, not {type(partition).__name__}")
        key = (partition.topic, partition.partition)
        if key not in self._assignment or self._fetch.position(key) is None:
            raise KafkaException(KafkaError(KafkaError._STATE))  # as librdkafka: not being fetched yet
        self._fetch.seek(key, partition.offset)

    def pause(self, partitions: list[TopicPartition]) -> None:
        self._check_open()
        self._fetch.pause([(tp.topic, tp.partition) for tp in keyed(partitions)])

    def resume(self, partitions: list[TopicPartition]) -> None:
        self._check_open()
        self._fetch.resume([(tp.topic, tp.partition) for tp in keyed(partitions)])

    # --- offsets -----------------------------------------------------------------------------

    def commit(
        self,
        message: Message | None = None,
        offsets: list[TopicPartition] | None = None,
        asynchronous: bool = True,
    ) -> list[TopicPartition] | None:
        """Commit a message's offset + 1, the given offsets, or (neither) what was consumed of the
        assignment. Asynchronous: None at once, the outcome to ``on_commit``; else the committed
        partitions (each with its error, if any)."""
        self._check_open()
        wanted = self._to_commit(message, offsets)
        if asynchronous:
            self._commits.commit_async(wanted)
            return None
        return self._commits.commit_sync(wanted)

    def _to_commit(self, message: Message | None, offsets: list[TopicPartition] | None) -> dict[TP, Committed]:
        wanted = wanted_offsets(message, offsets)
        return self._commits.pending(self._assignment.tps()) if wanted is None else wanted  # neither: what was consumed

    def committed(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        """The group's committed offsets (OFFSET_INVALID where none is)."""
        self._check_open()
        keys = [(tp.topic, tp.partition) for tp in keyed(partitions)]
        found = self._commits.committed(
            keys, require_stable=self._config.read_committed, timeout=self._timeout(timeout)
        )
        return [committed_partition(tp, found[tp]) for tp in keys]

    def store_offsets(self, message: Message | None = None, offsets: list[TopicPartition] | None = None) -> None:
        """Store offsets for the next commit (needs enable.auto.offset.store=false)."""
        self._check_open()
        wanted = wanted_offsets(message, offsets, keep_logical=True)
        if wanted is None:
            raise ValueError("expected either message or offsets")
        if self._config.options["enable.auto.offset.store"]:
            raise KafkaException(KafkaError(KafkaError._INVALID_ARG, "store_offsets() needs enable.auto.offset.store=false"))
        self._commits.store_assigned(wanted, self._assignment)

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float | None = None, cached: bool = False
    ) -> tuple[int, int] | None:
        """(low, high): the log start and end offsets (high: the last stable offset under read_committed)."""
        self._check_open()
        if not isinstance(partition, TopicPartition):
            raise TypeError(f"expected a TopicPartition, not {type(partition).__name__}")
        key = (partition.topic, partition.partition)
        if cached:
            return self._fetch.watermarks(key) or (OFFSET_INVALID, OFFSET_INVALID)
        return watermarks(self._client, key, read_committed=self._config.read_committed, timeout=self._timeout(timeout))

    def offsets_for_times(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        """Each partition's earliest offset whose timestamp is at or after the one given as offset
        (-1 when there is none)."""
        self._check_open()
        queries = {(tp.topic, tp.partition): tp.offset for tp in keyed(partitions)}
        return offsets_for_times(
            self._client, queries, read_committed=self._config.read_committed, timeout=self._timeout(timeout)
        )

    def _timeout(self, timeout: float | None) -> float:
        return self._request_timeout if timeout is None or timeout < 0 else float(timeout)

    # --- the group and the cluster -----------------------------------------------------------

    def _member(self) -> Member:
        sub = self._subscription
        if sub is None:
            return Member()
        return sub.member()

    def memberid(self) -> str | None:
        """Our member id in the group (None before the first join)."""
        self._check_open()
        return self._member().member_id or None

    def consumer_group_metadata(self) -> ConsumerGroupMetadata:
        """For ``Producer.send_offsets_to_transaction``: the group, our generation and member id."""
        self._check_open()
        m = self._member()
        assert self._config.group_id is not None
        return ConsumerGroupMetadata(self._config.group_id, m.generation, m.member_id, m.group_instance_id)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        if getattr(self, "_closed", True):
            raise _closed_error("Handle has been closed")
        auto = self._config.options["allow.auto.create.topics"]
        return self._client.list_topics(topic, None if timeout is None or timeout < 0 else timeout, auto_create=auto)

    def set_sasl_credentials(self, username: str, password: str) -> None:
        self._check_open()
        self._client.set_sasl_credentials(username, password)

    def _error(self, error: KafkaError) -> None:
        """A client-level error, for error_cb (logged when there is none); any thread."""
        if self._config.error_cb is not None:
            self._executor.put(self._config.error_cb, (error,))
        else:
            self._log.error("%s", error.str())

    # --- closing -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if getattr(self, "_closed", True):  # closed, or a subclass that never ran __init__
            raise _closed_error()

    def close(self) -> None:
        """Revoke the assignment (``on_revoke``), commit what was consumed (enable.auto.commit),
        leave the group so its partitions move at once, and stop. Closing again does nothing."""
        if getattr(self, "_closed", True):
            return
        failure: BaseException | None = None
        try:
            if self._subscription is not None:
                self._leave_group()
            elif self._config.options["enable.auto.commit"]:
                self._commit_before_removing(self._assignment.tps())
        except BaseException as exc:  # a callback's exception is raised once closing is done
            failure = exc
        self._commits.stop()
        if self._stats is not None:
            self._stats.stop()
        self._fetch.close()
        self._closed = True
        _OPEN.discard(self)
        while len(self._executor) and not self._executor.background:
            try:  # on_commit of the last commits; callbacks raising now are only logged
                self._executor.serve(0)
            except Exception:
                self._log.exception("a consumer callback raised while closing (ignored)")
        self._executor.close()
        self._client.close()
        if failure is not None:
            raise failure

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Consumers not closed yet: at interpreter exit each one in a group says so (its partitions wait
# for session.timeout.ms before the group moves them, and what it consumed since its last commit
# will be read again).
_OPEN: weakref.WeakSet[Consumer] = weakref.WeakSet()


@atexit.register
def _warn_unclosed() -> None:
    for consumer in list(_OPEN):
        if not consumer._closed and consumer._subscription is not None:
            consumer._log.warning(
                "a Consumer of group %s was never closed: it did not leave the group (call close() before exiting)",
                consumer._config.group_id,
            )
