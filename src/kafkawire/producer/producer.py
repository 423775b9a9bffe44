"""`Producer`: confluent-kafka's producer API, plus Java-style ``send()`` futures: the face only.

The machinery is `kafkawire.producer.producer_engine.ProducerEngine` (admission, buffer, sender, reports);
this module turns calls into it. Threads: ``produce()``/``send()`` run in the caller's thread and
only touch the accumulator under a lock (no IO under it). The IO thread (one per producer) sends
requests, handles answers, runs interceptors' ``on_acknowledgement`` and completes ``send()``
futures (their done-callbacks run there: keep them short). Delivery reports and
error/throttle/stats callbacks run where ``delivery.reports`` says (`kafkawire.client.executor`).

Every record handed to ``produce()`` ends in exactly one delivery report (success or a precise error), including
when it is purged, times out, or the producer is closed; one dropped or never closed warns of the records it held.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from itertools import islice
from typing import TYPE_CHECKING, Any, cast

from ..base.config import given_config
from ..base.model import ClusterMetadata, ConsumerGroupMetadata, TopicPartition
from ..client.dropped import Kept, when_dropped
from ..client.executor import CallbackExecutor
from ..client.logs import DeferredLogger, client_logger, log_init
from ..client.options import PRODUCER, warn_foreign
from ..core.kafka_error import KafkaError, KafkaException
from ..core.transactions import Call, moves_state
from ..native import native
from .inputs import Prepared, check_batch, check_topic, first_set, refusal
from .interceptors import InterceptorChain, record_types
from .producer_config import ProducerConfig, parse_producer_config
from .producer_engine import ProducerEngine, refuse_rest
from .producer_stats import Statistics

if TYPE_CHECKING:
    from ..base.record_metadata import RecordMetadata
    from .producer_record import ProducerRecord, RecordFuture, SendArguments
    from .transactions import TransactionManager

log = logging.getLogger("kafkawire.producer")


class ProducerClosedError(KafkaException, RuntimeError):
    """A call on a closed producer: a `KafkaException` (``_DESTROY``) that is also the
    ``RuntimeError`` confluent-kafka raises there, so handlers written for either catch it."""


class Producer:
    # What a subclass whose __init__ never called Producer.__init__ sees: a closed producer (its
    # calls raise ProducerClosedError, as confluent-kafka's do), not an AttributeError.
    _closed = True
    _plain = False
    _lane: Any = None  # the engine's C path for produce(): set while open and without interceptors

    def __init__(self, config: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        executor: CallbackExecutor | None = kwargs.pop("_executor", None)  # AIOProducer serves on its loop
        merged = given_config(config, kwargs)
        self._kept = kept = Kept()  # its callbacks, held here alone (client/dropped.py)
        weak = kept.weakly(merged, log)
        conf = parse_producer_config(weak)
        self._conf: ProducerConfig = conf
        self._log = client_logger(weak.get("logger"), log)
        warn_foreign(dict.fromkeys(conf.ignored), PRODUCER, self._log)
        self._interceptors = InterceptorChain(conf.interceptors, conf.raw)  # before any thread starts
        if executor is None:
            executor = CallbackExecutor(background=conf.delivery_reports == "background")
        self._reports = executor
        # A logger the application gave hears the client's records when poll()/flush() serve them,
        # on the application's thread, as confluent-kafka's (it sets librdkafka's log.queue).
        served_log = (
            self._log if weak.get("logger") is None else cast(logging.Logger, DeferredLogger(self._log, executor.put))
        )
        self._engine = engine = ProducerEngine(conf, served_log, self._reports, self._interceptors)
        self._interceptors.diagnose(engine.client.debug)
        executor.diagnose(engine.client.debug)
        self._accept = engine.accept  # produce()'s way in, bound once
        self._plain = not self._interceptors  # no interceptors: produce() goes straight to the engine
        self._lane = engine.lane if self._plain else None
        self._closed = False
        self._stats = Statistics(engine)
        _OPEN.add(self)
        when_dropped(self, engine.client, lambda: executor.close(0), lost=lambda: engine.state.outstanding)
        log_init(engine.client.debug, merged)

    # --- producing -------------------------------------------------------------------------------

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        on_delivery: Callable[..., Any] | None = None,
        timestamp: int = 0,
        headers: Any = None,
        *,
        callback: Callable[..., Any] | None = None,
    ) -> None:
        """Queue one record; its delivery report comes from ``poll()``/``flush()`` (or the report thread)."""
        if self._plain and not self._closed:
            cb = (
                callback if callback is not None else on_delivery if on_delivery is not None else self._conf.on_delivery
            )
            self._accept(topic, value, key, partition, timestamp, headers, cb, None)
        else:
            self._check_open()
            cb = (
                callback if callback is not None else on_delivery if on_delivery is not None else self._conf.on_delivery
            )
            self._enqueue(topic, value, key, partition, timestamp, headers, cb, None)

    if native is not None and not TYPE_CHECKING:
        # The same produce(), called from C: its common case queued by the engine's lane without a
        # Python frame (`kafkawire._native` FastMethod), everything else by the function above.
        produce = native.FastMethod(produce, "produce")

    def send(
        self,
        topic: str | ProducerRecord,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        timestamp: int = 0,
        headers: Any = None,
    ) -> Future[RecordMetadata]:
        """Java-style: a future of the record's metadata, completed on the IO thread (no poll needed);
        also Java's ``send(ProducerRecord(...))`` and ``send(record, callback)`` (`send_arguments`)."""
        sent: tuple[SendArguments, RecordFuture] = record_types().send_arguments(
            topic, value, (key, partition, timestamp, headers)
        )
        arguments, fut = sent
        self._enqueue(*arguments, fut)
        return fut

    def produce_batch(
        self,
        topic: str,
        messages: list[dict[str, Any]],
        partition: int = -1,
        on_delivery: Callable[..., Any] | None = None,
        callback: Callable[..., Any] | None = None,
    ) -> int:
        """Queue many records; returns how many were queued. A record that cannot be queued gets an
        ``_error`` entry (a `KafkaError`) in its dict, as with confluent-kafka."""
        self._check_open()
        if not isinstance(messages, list):
            raise TypeError(f"messages must be a list, not {type(messages).__name__}")
        check_topic(topic)
        default_cb = first_set(callback, on_delivery, self._conf.on_delivery)
        # Plain messages (the common case) on the engine's lane; any other batch is checked whole
        # first, as confluent-kafka does: a TypeError means nothing was queued.
        refused_at: list[tuple[int, KafkaError]] = []
        rest = (
            None
            if self._lane is None
            else self._engine.queue_messages(topic, messages, partition, default_cb, refused_at)
        )
        if rest is not None:
            for i, error in refused_at:
                messages[i]["_error"] = error
            if rest < len(messages):
                full = KafkaError(KafkaError._QUEUE_FULL)
                for m in islice(messages, rest, None):
                    m["_error"] = full
            return rest - len(refused_at)
        prepared, refused = check_batch(messages, partition, default_cb)
        self._queue_checked(topic, prepared, refused, wait=False)
        for m, error in refused:
            m["_error"] = error
        return len(messages) - len(refused)

    def _queue_checked(
        self, topic: str, prepared: list[Prepared], refused: list[tuple[Any, KafkaError]], wait: bool
    ) -> None:
        """The bulk paths: checked records of one topic, queued by the engine in slices (or one by
        one through the interceptors). When the buffer is full: with ``wait``, serve reports until
        there is room; without, refuse the record (``_QUEUE_FULL``)."""
        if self._plain:
            self._engine.queue_checked(topic, prepared, refused, wait)
            return
        for index, (handle, value, key, part, timestamp, headers, cb) in enumerate(prepared):
            while True:
                try:
                    self._enqueue(topic, value, key, part, timestamp, headers, cb, None)
                except KafkaException as exc:
                    refused.append((handle, exc.args[0]))
                except BufferError:
                    if wait:
                        self._engine.room.wait(None)  # until a report frees room (served here)
                        continue
                    refuse_rest(refused, [p[0] for p in prepared[index:]])
                    return
                break

    def _enqueue(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        timestamp: int,
        headers: Any,
        callback: Callable[..., Any] | None,
        future: RecordFuture | None,
    ) -> None:
        self._check_open()
        if not self._interceptors:
            self._accept(topic, value, key, partition, timestamp, headers, callback, future)
            return
        record = self._interceptors.on_send(
            record_types().ProducerRecord(
                topic, partition, timestamp, key, value, headers, id=None if future is None else future.record_id
            )
        )
        self._accept_sent(record, callback, future)

    def _accept_sent(
        self, record: ProducerRecord, callback: Callable[..., Any] | None, future: RecordFuture | None
    ) -> None:
        """Queue a record the interceptors' ``on_send`` gave; one refused is reported to them (the
        Java client's onSendError) and raised."""
        try:
            if future is not None:  # (send()'s) the id of the record sent, as on_send left it
                future.record_id = record_types().checked_id(record.id)
            self._accept(
                record.topic,
                record.value,
                record.key,
                record.partition,
                record.timestamp,
                record.headers,
                callback,
                future,
            )
        except (KafkaException, BufferError, TypeError, ValueError, OverflowError) as exc:
            # As the Java client's onSendError: interceptors hear of records send() refused.
            refused = exc if isinstance(exc, KafkaException) else KafkaException(refusal(exc))
            self._interceptors.on_send_error(record, refused)
            raise

    # --- serving, flushing, closing ------------------------------------------------------------

    def poll(self, timeout: float = -1) -> int:
        """Serve queued callbacks; wait up to ``timeout`` seconds (-1: forever) for the first.

        Returns how many callbacks ran (confluent-kafka counts librdkafka events, which may
        carry several delivery reports each). An exception raised by a callback comes out of
        this call; the callbacks queued after it wait for the next ``poll()``/``flush()``.
        """
        self._check_open()
        deliveries = self._engine.deliveries
        grouped = deliveries.grouped_callbacks
        events = self._reports.serve(None if timeout is None or timeout < 0 else timeout)
        if self._reports.background:
            return events
        # A batch's delivery reports are one event (DeliveredReports): count each callback.
        return events + deliveries.grouped_callbacks - grouped

    def flush(self, timeout: float = -1) -> int:
        """Send everything now and wait until every record is reported; returns how many remain.

        Always serves the callbacks already queued, even with ``timeout=0``. As with
        confluent-kafka, an exception raised by a callback does not stop the flush: every report
        is still served, then the (last) exception is raised, earlier ones chained as context.
        """
        self._check_open()
        return self._flush(timeout)

    def _flush(self, timeout: float | None) -> int:
        """`ProducerEngine.flush`, serving reports here: a callback's exception does not stop it;
        the last one is raised at the end, earlier ones chained as its context."""
        failure: Exception | None = None

        def serve(wait: float | None, until: Callable[[], bool]) -> None:
            nonlocal failure
            try:
                self._reports.serve(wait, until)
            except Exception as exc:
                if failure is not None and exc is not failure:
                    exc.__context__ = failure
                failure = exc

        left = self._engine.flush(timeout, serve)
        if failure is not None:
            raise failure
        return left

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        """Fail queued (``_PURGE_QUEUE``) and in-flight (``_PURGE_INFLIGHT``) records; their reports
        are served by the next ``poll()``/``flush()``."""
        self._check_open()
        self._engine.purge(in_queue, in_flight, blocking)

    def _check_open(self) -> None:
        if self._closed:
            # same text as confluent-kafka: its tests match on it
            raise ProducerClosedError(KafkaError(KafkaError._DESTROY, "Producer has been closed"))

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """New SASL username and password for the next authentications (confluent-kafka's call)."""
        self._engine.client.set_sasl_credentials(username, password)

    def cluster_id(self, timeout: float = -1) -> str | None:
        """The cluster's id (`Client.cluster_id`); ``timeout`` -1: no limit."""
        self._check_open()
        return self._engine.client.cluster_id(None if timeout is None or timeout < 0 else timeout)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        """Cluster metadata (``auto.create.topics.enable`` brokers create an unknown ``topic``, unless
        ``allow.auto.create.topics`` is false)."""
        self._check_open()
        auto = self._conf.raw["allow.auto.create.topics"]
        return self._engine.client.list_topics(
            topic, None if timeout < 0 else timeout, auto_create=auto, open_leaders=True
        )

    # --- transactions (the Transactional Producer API of confluent-kafka) ----------------------

    def init_transactions(self, timeout: float | None = None, /) -> None:
        """Register ``transactional.id`` with its coordinator, fencing older producers with it and
        finishing their open transaction. Retriable on timeout: call again to resume."""
        txn = self._transactional()
        txn.state.require(Call.INIT)
        self._txn_call(Call.INIT, lambda deadline: txn.init(deadline), timeout)
        self._engine.sender.wake()

    def begin_transaction(self) -> None:
        txn = self._transactional()
        txn.state.require(Call.BEGIN)
        txn.added.clear()
        txn.state.succeeded(Call.BEGIN)

    def send_offsets_to_transaction(
        self, positions: list[TopicPartition], group_metadata: ConsumerGroupMetadata, timeout: float | None = None, /
    ) -> None:
        """Commit consumer offsets as part of the transaction (consume-transform-produce)."""
        txn = self._transactional()
        if not isinstance(group_metadata, ConsumerGroupMetadata):
            raise TypeError("group_metadata must be a ConsumerGroupMetadata")
        offsets: dict[str, list[tuple[int, int, int]]] = {}
        for tp in positions:
            if not isinstance(tp, TopicPartition):
                raise TypeError("positions must be a list of TopicPartition")
            if tp.offset >= 0:  # logical offsets are ignored, as confluent-kafka does
                epoch = tp.leader_epoch if tp.leader_epoch is not None else -1
                offsets.setdefault(tp.topic, []).append((tp.partition, tp.offset, epoch))
        txn.state.require(Call.SEND_OFFSETS)
        if not offsets:
            return
        g = group_metadata
        self._txn_call(
            None,
            lambda deadline: txn.send_offsets(
                g.group_id, g.generation_id, g.member_id, g.group_instance_id, offsets, deadline
            ),
            timeout,
        )

    def commit_transaction(self, timeout: float | None = None, /) -> None:
        """Flush, then commit. An abortable error means: abort_transaction(), then begin again."""
        txn = self._transactional()
        txn.state.require(Call.COMMIT)
        deadline = self._txn_deadline(timeout)
        if self.flush(max(0.0, deadline - time.monotonic())):
            txn.state.interrupted(Call.COMMIT)
            raise KafkaException(
                KafkaError(KafkaError._TIMED_OUT, "commit_transaction: records still in flight", retriable=True)
            )
        failed = txn.state.cannot_commit  # a record of the transaction failed meanwhile
        if failed is not None:
            raise KafkaException(failed)
        self._txn_call(Call.COMMIT, lambda d: txn.end(True, d), deadline - time.monotonic())

    def abort_transaction(self, timeout: float | None = None, /) -> None:
        """Fail what is queued or in flight (``_PURGE_*``), abort on the coordinator, and take a new
        epoch if a sequence was lost. Retriable on timeout: call again to resume."""
        txn = self._transactional()
        txn.state.require(Call.ABORT)
        deadline = self._txn_deadline(timeout)
        idem = self._engine.idem
        self._engine.purge(True, True, True)  # a purged retry's sequence asks for a new epoch
        self.flush(max(0.0, deadline - time.monotonic()))
        try:
            self._txn_call(None, lambda d: txn.end(False, d), deadline - time.monotonic())
            if idem is not None and idem.needs_init:
                # Purged batches may or may not be in the log: their sequences cannot be reused,
                # so take a new epoch (InitProducerId with our id, KIP-360) before going on.
                self._txn_call(None, lambda d: txn.init(d), deadline - time.monotonic())
        except KafkaException:
            txn.state.interrupted(Call.ABORT)
            raise
        txn.state.succeeded(Call.ABORT)
        self._engine.sender.wake()

    @contextlib.contextmanager
    def transaction(self, timeout: float | None = None) -> Iterator[Producer]:
        """``with producer.transaction(): ...``: begin; commit on success, abort on an exception."""
        self.begin_transaction()
        try:
            yield self
        except BaseException:
            if self._transactional().state.allows(Call.ABORT):
                self.abort_transaction(timeout)
            raise
        self.commit_transaction(timeout)

    def _transactional(self) -> TransactionManager:
        self._check_open()
        if self._engine.txn is None:
            raise KafkaException(
                KafkaError(KafkaError._NOT_CONFIGURED, 'transactions need "transactional.id" in the configuration')
            )
        return self._engine.txn

    def _txn_deadline(self, timeout: float | None) -> float:
        seconds = self._conf.transaction_timeout_ms / 1000 if timeout is None or timeout < 0 else timeout
        return time.monotonic() + seconds

    def _txn_call(self, call: Call | None, start: Callable[[float], Future[None]], timeout: float | None) -> None:
        """Run one coordinator conversation to its end or the timeout; what a failure means for the
        transaction is decided by `kafkawire.core.transactions`. Only `KafkaException` comes out."""
        txn = self._transactional()
        seconds = self._conf.transaction_timeout_ms / 1000 if timeout is None or timeout < 0 else max(0.0, timeout)
        fut = start(self._engine.client.engine.now() + seconds)
        try:
            fut.result(seconds + 5)
        except FutureTimeout:
            error = KafkaError(
                KafkaError._TIMED_OUT,
                f"{'transaction call' if call is None else call.value}() timed out",
                retriable=True,
            )
        except KafkaException as exc:
            error = exc.args[0]
            assert isinstance(error, KafkaError)
        else:
            if call is not None:
                txn.state.succeeded(call)
            return
        if moves_state(call, error):
            txn.fail(error)  # abortable, or fatal when fenced
        raise KafkaException(txn.state.call_failed(call, error)) from None

    def __len__(self) -> int:
        engine = getattr(self, "_engine", None)  # None: a subclass that never called __init__
        return 0 if engine is None else engine.state.outstanding

    def __bool__(self) -> bool:
        # A producer is truthy even when nothing is queued (``len() == 0``), as confluent-kafka's.
        return True

    def close(self, timeout: float = -1) -> bool:
        """Flush (up to ``timeout``), fail whatever is left (``_PURGE_*``), serve every report and
        stop. Returns True, as confluent-kafka's; closing again is a no-op that returns True.
        Afterwards ``produce()``, ``poll()``, ``flush()``, ``purge()`` and ``list_topics()`` raise
        `ProducerClosedError` (a ``RuntimeError``, as confluent-kafka raises, and a
        `KafkaException` with ``_DESTROY``). A callback's exception is raised once closing is done.
        """
        if self._closed:
            return True
        failure: Exception | None = None

        def keep(exc: Exception) -> None:
            nonlocal failure
            if failure is not None and exc is not failure:
                exc.__context__ = failure
            failure = exc

        try:
            self._flush(timeout)
        except Exception as exc:
            keep(exc)
        engine = self._engine
        if engine.state.outstanding:
            engine.purge(True, True, True)
        self._lane = None
        self._closed = True
        _OPEN.discard(self)
        while not engine.reported() and not self._reports.background:
            try:
                self._reports.serve(None, engine.reported)
            except Exception as exc:
                keep(exc)
        if self._reports.background and not self._reports.on_report_thread:
            self._reports.wait_idle(engine.reported, 10)
        self._stats.stop()
        self._interceptors.close()
        engine.close()
        if not self._reports.background:
            try:
                self._reports.serve(0)  # what closing logged (a logger's records are served)
            except Exception as exc:
                keep(exc)
        self._reports.close()
        if failure is not None:
            raise failure
        return True

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def delivery_callback(producer: Producer, on_delivery: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """The delivery callback of records queued with ``on_delivery``: it, else the configured one."""
    callback = on_delivery if on_delivery is not None else producer._conf.on_delivery
    if callback is not None and not callable(callback):
        raise TypeError("on_delivery must be callable")
    return callback


def queue_rows(producer: Producer, topic: str, rows: list[Prepared]) -> None:
    """Queue checked records of one topic as ``produce()`` one by one would (kafkawire's own bulk
    writers: `kafkawire.producer.arrow`), in slices: waiting for room (serving reports) when the
    buffer is full, and raising the first refusal as a `KafkaException` once the others are queued."""
    producer._check_open()
    check_topic(topic)
    refused: list[tuple[Any, KafkaError]] = []
    producer._queue_checked(topic, rows, refused, wait=True)
    if refused:
        raise KafkaException(refused[0][1])


def queue_columns(producer: Producer, topic: str, rows: int, columns: tuple[Any, ...], callback: Any) -> bool:
    """`queue_rows` for an Arrow batch whose columns the engine's lane reads in C (``columns``: see
    `ProducerEngine.queue_columns`); False, nothing queued, when the producer has no lane (no
    extension, interceptors, transactions) or a row needs the per-row path."""
    producer._check_open()
    check_topic(topic)
    refused: list[tuple[int, KafkaError]] = []
    if producer._lane is None or not producer._engine.queue_columns(topic, rows, columns, callback, refused):
        return False
    if refused:
        raise KafkaException(refused[0][1])
    return True


# Producers not closed yet: at interpreter exit each one still holding records says so (as
# librdkafka does when a producer is destroyed with messages in queue or in flight).
_OPEN: weakref.WeakSet[Producer] = weakref.WeakSet()


@atexit.register
def _warn_unclosed() -> None:
    for producer in list(_OPEN):
        held = len(producer)
        if held and not producer._closed:
            producer._log.warning(
                "a Producer was never closed: %d record(s) still queued or in flight are lost at exit "
                "(call flush() or close() before exiting)",
                held,
            )
