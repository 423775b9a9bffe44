"""`ShareConsumer`: confluent-kafka's KIP-932 share consumer, the face over a share membership
(`share_member.py`) and a share fetch engine (`share_engine.py`) on one client.

Records come without partition ownership: each poll() returns the records the broker acquired for
this member (locked to it for the group's record lock duration), and each must be acknowledged,
implicitly (the next poll or commit accepts the previous poll's records) or explicitly with
acknowledge(). Like confluent-kafka's, the consumer is for one thread at a time (a second thread's
call raises ConcurrentModificationException) and has no background dispatch: error_cb, the log
lines and the acknowledgement-commit callback run inside poll(), commit_sync/commit_async and
close(). The IO side holds no reference to this object, so a consumer dropped without close() is
collected and its client finished (client/dropped.py).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from ..base.config import given_config
from ..base.debug import Debug
from ..base.messages import Messages
from ..base.model import Message, TopicPartition
from ..client.dropped import Kept, when_dropped
from ..client.executor import CallbackExecutor
from ..client.logs import DeferredLogger, client_logger, log_init
from ..client.network_client import Client
from ..client.telemetry import MetricsPusher, resource_attributes
from ..consumer.consumer_config import parse_consumer_config
from ..consumer.consumer_stats import ConsumerStatistics
from ..core import TopicPartitionKey as TP
from ..core.kafka_error import ConcurrentModificationException, IllegalStateException, KafkaError, KafkaException
from ..core.share_acks import ACCEPT, IMPLICIT, MODES, Acknowledgements, Refusal
from .share_engine import ShareFetchEngine, ShareFetchSettings
from .share_member import ShareMembership
from .share_metrics import ShareMetrics

log = logging.getLogger("kafkawire.share_consumer")

CLOSED = "Share consumer closed"
_CONFWARN_MARGIN_MS = 1000
_NOT_SUPPORTED = ("on_commit",)  # nothing to commit: records are acknowledged instead
_REFUSALS: dict[Refusal, type[Exception]] = {
    Refusal.IMPLICIT_MODE: IllegalStateException,
    Refusal.NOT_IN_FLIGHT: IllegalStateException,
    Refusal.UNACKNOWLEDGED: IllegalStateException,
    Refusal.BAD_TYPE: ValueError,
}


def _resource(consumer: weakref.ref[ShareConsumer], group_id: str) -> dict[str, str]:
    """The resource attributes of a metrics push (IO thread), through a weak reference: the pusher
    must not keep a dropped share consumer alive (client/dropped.py finishes its client)."""
    me = consumer()
    membership = me._membership if me is not None else None
    return resource_attributes({"group_id": group_id, "member_id": membership.member_id if membership else ""})


class _AckCallback:
    """The acknowledgement-commit callback and whether it is running (no re-entry from inside it)."""

    def __init__(self) -> None:
        self.fn: Callable[[dict[TopicPartition, set[int]], KafkaException | None], None] | None = None
        self.running = False

    def serve(self, offsets: dict[TP, set[int]], error: KafkaException | None) -> None:
        if self.fn is None:
            return
        self.running = True
        try:
            self.fn({TopicPartition(t, p): o for (t, p), o in offsets.items()}, error)
        finally:
            self.running = False


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    return float(value)


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return value


class ShareConsumer:
    def __init__(self, conf: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        if getattr(self, "_built", False):
            raise RuntimeError("ShareConsumer already initialized")
        merged = given_config(conf, kwargs)
        for key in _NOT_SUPPORTED:
            if key in merged:
                raise ValueError(
                    f"{key} is not supported by the share consumer (records are acknowledged, not committed)"
                )
        if "topic.blacklist" in merged:  # (librdkafka's refusal, in its words)
            raise ValueError("Failed to create share consumer: `topic.blacklist` is not applicable for share consumer")
        mode = str(merged.pop("share.acknowledgement.mode", IMPLICIT)).lower()
        if mode not in MODES:
            raise ValueError(f"share.acknowledgement.mode must be 'implicit' or 'explicit', not {mode!r}")
        self._kept = Kept()  # its callbacks and logger, held here alone (client/dropped.py)
        weak = self._kept.weakly(merged, log)
        config = parse_consumer_config(weak, log)
        if config.group_id is None:
            raise ValueError("group.id must be set")
        opts = config.options
        self._executor = CallbackExecutor(background=False, name="kafkawire-share-consumer", owner="share_consumer")
        self._log = DeferredLogger(client_logger(weak.get("logger"), log), self._executor.put)
        try:
            self._client = Client(
                opts, logger=cast(logging.Logger, self._log), debug=Debug.of(opts, self._log, "consumer")
            )
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError._INVALID_ARG:
                raise
            raise ValueError(f"Failed to create share consumer: {exc.args[0].str()}") from None
        when_dropped(self, self._client, functools.partial(self._executor.close, 0))  # (nothing more: no leaving)
        self._built = True
        self._group_id = config.group_id
        self._request_timeout = opts["socket.timeout.ms"] / 1000
        self._coordinators = self._client.coordinators
        self._acks = Acknowledgements(mode)
        self._ack_callback = _AckCallback()
        self._settings = ShareFetchSettings(
            group_id=config.group_id,
            max_wait_ms=opts["fetch.wait.max.ms"],
            min_bytes=opts["fetch.min.bytes"],
            max_bytes=opts["fetch.max.bytes"],
            max_records=opts["max.poll.records"],  # records per ShareFetch (its MaxRecords and BatchSize)
            request_timeout=self._request_timeout,
        )
        executor, error_cb = self._executor, config.error_cb
        if error_cb is not None:
            self._client.on_error = lambda error: executor.put(error_cb, (error,))
        self._topics: list[str] = []
        self._membership: ShareMembership | None = None
        self._engine: ShareFetchEngine | None = None
        stats_cb, stats_interval = opts["stats_cb"], opts["statistics.interval.ms"] / 1000
        self._stats_cb = stats_cb if stats_cb is not None and stats_interval > 0 else None
        self._stats_interval = stats_interval
        self._stats: ConsumerStatistics | None = None  # while subscribed: the engine is what it reads
        self._owner: int | None = None  # the thread inside a call
        self._depth = 0
        self._guard = threading.Lock()
        self._closed = False
        self._metrics = ShareMetrics()
        self._telemetry = MetricsPusher(
            "share_consumer",
            self._client,
            bool(opts["enable.metrics.push"]),
            self._log,
            self._metrics.values,
            functools.partial(_resource, weakref.ref(self), self._group_id),
            self._metrics.counts,
        )
        log_init(self._client.debug, merged)
        if opts["socket.timeout.ms"] < opts["fetch.wait.max.ms"] + _CONFWARN_MARGIN_MS:
            self._log.warning(
                "CONFWARN [%s] fetch.wait.max.ms (%d) should be at least %d ms below socket.timeout.ms (%d): a "
                "ShareFetch waiting that long times out before its answer comes",
                opts["client.id"],
                opts["fetch.wait.max.ms"],
                _CONFWARN_MARGIN_MS,
                opts["socket.timeout.ms"],
            )

    # --- one thread at a time ------------------------------------------------------------------

    @contextmanager
    def _call(self) -> Iterator[None]:
        if self._closed:
            raise IllegalStateException(CLOSED)
        me = threading.get_ident()
        with self._guard:
            if self._owner is not None and self._owner != me:
                raise ConcurrentModificationException(
                    "ShareConsumer is not safe for multi-threaded access: another thread is inside a call"
                )
            if self._ack_callback.running:
                raise IllegalStateException(
                    "the share consumer cannot be called from its acknowledgement commit callback"
                )
            self._owner = me
            self._depth += 1
        try:
            yield
        finally:
            with self._guard:
                self._depth -= 1
                if not self._depth:
                    self._owner = None

    # --- subscription ---------------------------------------------------------------------------

    def subscribe(self, topics: list[str]) -> None:
        """Join the share group for ``topics`` (replacing the subscription; [] unsubscribes)."""
        with self._call():
            if not isinstance(topics, list):
                raise TypeError(f"expected list of topic names, not {type(topics).__name__}")
            names = [str(t) for t in topics]
            if not names:
                self._stop(wait=False)
                return
            if any(not n for n in names) or len(set(names)) != len(names):
                raise ValueError(
                    f"{KafkaError(KafkaError._INVALID_ARG).str()}: topic names must be non-empty and unique"
                )
            self._topics = names
            if self._membership is not None:
                self._membership.resubscribe(names)
                return
            self._start(names)

    def _start(self, topics: list[str]) -> None:
        executor, callback = self._executor, self._ack_callback
        ready_queued = [False]

        def ready() -> None:  # IO thread: wake a waiting poll()
            if not ready_queued[0]:
                ready_queued[0] = True
                executor.put(ready_queued.__setitem__, (0, False))

        def acked(offsets: dict[TP, set[int]], error: KafkaException | None) -> None:
            executor.put(callback.serve, (offsets, error))

        engine = ShareFetchEngine(
            self._client, self._settings, self._acks, lambda: membership.member_id, ready, acked, self._metrics
        )
        error_cb = self._client.on_error
        membership = ShareMembership(
            self._client,
            self._coordinators,
            self._group_id,
            topics,
            self._request_timeout,
            engine.assign,
            error_cb if error_cb is not None else (lambda _e: None),
        )
        self._engine, self._membership = engine, membership
        if self._stats_cb is not None:
            self._stats = ConsumerStatistics(
                self._client, engine, executor, self._stats_cb, self._stats_interval, engine.assigned_count
            )
        membership.start()

    def unsubscribe(self) -> None:
        """Send the acknowledgements made, close the share sessions and leave the group (as close())."""
        with self._call():
            self._stop(wait=False)

    def _stop(self, wait: bool) -> None:
        engine, membership, stats = self._engine, self._membership, self._stats
        self._engine = self._membership = self._stats = None
        self._topics = []
        if stats is not None:
            stats.stop()
        if engine is None or membership is None:
            return
        with engine.lock:
            self._acks.before_close()
            pending = self._acks.take(until_sent=True)
            self._acks.clear()  # what was still in flight is released as the sessions close
        closed = engine.commit(pending, close=True)
        if wait:
            try:
                closed.result(self._request_timeout)
            except Exception:
                pass
        left = membership.leave(self._request_timeout)
        if wait:
            try:
                left.result(self._request_timeout)
            except Exception:
                pass

    def subscription(self) -> list[str]:
        with self._call():
            return list(self._topics)

    # --- records --------------------------------------------------------------------------------

    def poll(self, timeout: float = -1) -> Messages:
        """The records acquired for this member (an empty batch when none came within ``timeout``)."""
        with self._call():
            wait = _number(timeout, "timeout")
            engine = self._engine
            if engine is None:
                raise IllegalStateException(f"{KafkaError(KafkaError._STATE).str()}: not subscribed to any topic")
            with engine.lock:
                refusal = self._acks.before_poll()
            if refusal is not None:
                raise _REFUSALS[refusal](refusal.value)
            entered = time.monotonic()
            self._metrics.poll_spacing.entered(entered)
            try:
                return self._wait_for_records(engine, None if wait < 0 else entered + wait)
            finally:
                self._metrics.poll_idle.polled(entered, time.monotonic())

    def _wait_for_records(self, engine: ShareFetchEngine, deadline: float | None) -> Messages:
        engine.wake()
        while True:
            self._executor.serve(0)
            with engine.lock:
                records = engine.take()
                if records:
                    self._acks.delivered(((m._topic, m._partition), m._offset) for m in records)  # type: ignore[misc]
            if records:
                return Messages._from_list(records)
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return Messages()
            self._executor.serve(remaining)  # released by what the IO thread queues (records: ready)

    def acknowledge(self, message: Message, ack_type: int = ACCEPT) -> None:
        """Record how the broker should treat a polled record (explicit mode); sent with the next
        poll() or commit."""
        with self._call():
            if not isinstance(message, Message):
                raise TypeError(f"expected a Message, not {type(message).__name__}")
            topic = message.topic()
            if topic is None:
                raise ValueError(f"{KafkaError(KafkaError._INVALID_ARG).str()}: the message has no topic")
            self._acknowledge(topic, message.partition(), message.offset(), ack_type)

    def acknowledge_offset(self, topic: str, partition: int, offset: int, ack_type: int = ACCEPT) -> None:
        """`acknowledge` by a record's coordinates."""
        with self._call():
            if not isinstance(topic, str):
                raise TypeError(f"topic must be a str, not {type(topic).__name__}")
            self._acknowledge(topic, _integer(partition, "partition"), _integer(offset, "offset"), ack_type)

    def _acknowledge(self, topic: str, partition: Any, offset: Any, ack_type: Any) -> None:
        kind = _integer(ack_type, "ack_type")
        if partition is None or offset is None or partition < 0 or offset < 0:
            raise ValueError(f"{KafkaError(KafkaError._INVALID_ARG).str()}: partition and offset must not be negative")
        engine = self._engine
        lock = engine.lock if engine is not None else threading.Lock()
        with lock:
            refusal = self._acks.acknowledge((topic, partition), offset, kind)
        if refusal is not None:
            raise _REFUSALS[refusal](refusal.value)

    # --- acknowledgements -----------------------------------------------------------------------

    def commit_sync(self, timeout: float = 60) -> dict[TopicPartition, KafkaException | None]:
        """Send the pending acknowledgements and wait for the brokers' answers (``timeout`` seconds,
        -1: no limit); each partition's outcome, {} when nothing was pending."""
        with self._call():
            wait = _number(timeout, "timeout")
            self._executor.serve(0)
            sent = self._send_acks()
            if sent is None:
                return {}
            try:
                results = sent.result(None if wait < 0 else wait)
            except TimeoutError:
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "commit_sync timed out")) from None
            self._executor.serve(0)
            return {TopicPartition(t, p): outcome for (t, p), outcome in results.items()}

    def commit_async(self) -> None:
        """Send the pending acknowledgements; their outcomes go to the acknowledgement commit callback."""
        with self._call():
            self._executor.serve(0)
            self._send_acks()

    def _send_acks(self) -> Any:
        engine = self._engine
        if engine is None:
            return None
        with engine.lock:
            self._acks.before_commit()
            pending = self._acks.take(until_sent=True)
        return engine.commit(pending) if pending else None

    def set_acknowledgement_commit_callback(self, callback: Any) -> None:
        """``callback(offsets, error)`` once a broker answered acknowledgements; None removes it."""
        with self._call():
            if callback is not None and not callable(callback):
                raise TypeError("callback must be callable or None")
            self._ack_callback.fn = self._kept.hold("acknowledgement_commit", callback)

    def set_sasl_credentials(self, username: str, password: str) -> None:
        with self._call():
            if not isinstance(username, str) or not isinstance(password, str):
                raise TypeError("username and password must be str")
            self._client.set_sasl_credentials(username, password)

    # --- the end --------------------------------------------------------------------------------

    def close(self) -> None:
        """Send the acknowledgements made (implicit mode: not the last poll's records, as
        librdkafka's), close the share sessions (the brokers release what this member still
        holds), leave the group and stop; a second close() does nothing."""
        if self._closed or not getattr(self, "_built", False):
            return
        with self._call():
            self._stop(wait=True)
            self._telemetry.close()  # the last push (terminating)
            self._closed = True
        try:
            while len(self._executor):
                try:
                    self._executor.serve(0)
                except Exception:
                    log.exception("a share consumer callback raised during close()")
        finally:
            self._client.close()  # (a second time: nothing)
            self._executor.close(0)

    def __enter__(self) -> ShareConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
