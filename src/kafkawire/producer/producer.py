"""`Producer`: confluent-kafka's producer API, plus Java-style ``send()`` futures.

Threads: ``produce()``/``send()`` run in the caller's thread and only touch the accumulator under
a lock (no IO under it). The IO thread (one per producer) sends requests, handles answers, runs
interceptors' ``on_acknowledgement`` and completes ``send()`` futures (their done-callbacks run
there: keep them short). Delivery reports and error/throttle/stats callbacks run where
``delivery.reports`` says (see `kafkawire.producer.delivery`).

Every record handed to ``produce()`` ends in exactly one delivery report (success or a precise
error), including when it is purged, times out, or the producer is closed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from typing import Any

from ..client.cluster import Client
from ..core.accumulator import Accumulator, PendingMessage
from ..core.idempotence import Idempotence
from ..core.partitioners import (
    BUILTIN_PARTITIONERS,
    KEYLESS_STICKY,
    KeyedPartitions,
    StickyPartitioner,
    choose_partition,
    resolve_partitioner,
)
from ..core.transactions import Call
from ..core.transactions import State as TxnState
from ..errors import KafkaError, KafkaException
from ..model import (
    OFFSET_INVALID,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    ClusterMetadata,
    Message,
    RecordMetadata,
    ThrottleEvent,
    TopicPartition,
    broker_name,
)
from ..native import native
from .config import ProducerConfig, parse_producer_config
from .delivery import Reports
from .interceptors import InterceptorChain, ProducerRecord
from .sender import Sender, SenderSettings
from .transactions import TransactionManager

log = logging.getLogger("kafkawire.producer")

_LEGAL_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SLICE = 512  # records produce_batch() queues per hold of the producer lock
Headers = list[tuple[str, bytes | None]]
# A record for the bulk paths (`Producer._queue_many`): (handle, value, key, partition, timestamp,
# headers, callback), checked and converted; ``handle`` says which record a refusal is about.
Prepared = tuple[Any, bytes | None, bytes | None, int, int, Headers | None, Callable[..., Any] | None]


def _to_bytes(value: Any, what: str) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"expected {what} to be str or bytes, not {type(value).__name__}")


def _headers(headers: Any) -> Headers | None:
    """Headers as a list of (str, bytes|None), from a list of pairs or a dict, as confluent-kafka takes them."""
    if headers is None:
        return None
    items: Iterable[Any]
    if isinstance(headers, Mapping):
        items = headers.items()
    elif isinstance(headers, (list, tuple)):
        items = headers
    else:
        raise TypeError(f"headers must be a list of (key, value) pairs or a dict, not {type(headers).__name__}")
    out: Headers = []
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"header {item!r} is not a (key, value) pair")
        key, value = item
        if not isinstance(key, str):
            raise TypeError(f"header key must be str, not {type(key).__name__}")
        out.append((key, _to_bytes(value, f"header {key!r} value")))
    return out


def _check_fields(partition: Any, timestamp: Any, callback: Any) -> None:
    """Types and ranges as confluent-kafka checks them (a C int32 partition, a C int64 timestamp):
    TypeError for a wrong type, OverflowError for a number the wire cannot carry."""
    if not isinstance(partition, int):
        raise TypeError(f"partition must be int, not {type(partition).__name__}")
    if not isinstance(timestamp, int):
        raise TypeError(f"timestamp must be int, not {type(timestamp).__name__}")
    if not INT32_MIN <= partition <= INT32_MAX:
        raise OverflowError(f"partition {partition} does not fit in a signed 32-bit integer")
    if not INT64_MIN <= timestamp <= INT64_MAX:
        raise OverflowError(f"timestamp {timestamp} does not fit in a signed 64-bit integer")
    if callback is not None and not callable(callback):
        raise TypeError("on_delivery/callback must be callable")


def check_topic(topic: Any) -> str:
    if not isinstance(topic, str):
        raise TypeError(f"topic must be str, not {type(topic).__name__}")
    if not _LEGAL_TOPIC.match(topic) or topic in (".", ".."):
        raise KafkaException(
            KafkaError(
                KafkaError._INVALID_ARG,
                f"invalid topic name {topic!r}: 1-249 characters from [A-Za-z0-9._-], not '.' or '..'",
            )
        )
    return topic


def _first_set(*callbacks: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """The first callback given (``is not None``: a callable object may well be falsy)."""
    return next((cb for cb in callbacks if cb is not None), None)


# What one queued record costs beyond its bytes: the PendingMessage, its report Message, the queued
# callback and its release hook (measured on CPython 3.11: about 600 bytes).
RECORD_OVERHEAD = 640


def buffer_charge(msg: PendingMessage) -> int:
    """The buffer room a record takes until its report is served: its bytes twice (as given, kept
    for the report, and encoded in its batch) plus the Python objects around it, so that
    ``queue.buffering.max.kbytes`` bounds the memory the producer really holds."""
    return 2 * msg.size + RECORD_OVERHEAD


def _too_large(size: int, limit: int) -> KafkaError:
    return KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, f"record of {size} bytes exceeds message.max.bytes ({limit})")


def _refusal(exc: BaseException) -> KafkaError:
    """The error interceptors are told of when produce() refuses a record without a KafkaError."""
    if isinstance(exc, BufferError):
        return KafkaError(KafkaError._QUEUE_FULL)
    return KafkaError(KafkaError._INVALID_ARG, str(exc))


def serve_delivered(
    messages: list[PendingMessage],
    start: int,
    base_offset: int,
    log_append: tuple[int, int] | None,
    create_time: int,
    now: float,
    message_type: type[Message],
    overhead: int,
) -> tuple[int, int, int, BaseException | None]:
    """Run the callback of each record from ``start`` on with its report `Message`, made directly
    (no re-check of values the producer checked). Stops at the first exception, which is returned
    (not raised) with how far it got: (next index, callbacks run, their buffer charge, exception).
    The twin of ``kafkawire._native.serve_delivered``."""
    new = message_type.__new__
    i = start
    served = 0
    charge = 0
    try:
        while i < len(messages):
            m = messages[i]
            i += 1
            callback = m.callback
            if callback is None:
                continue
            report = new(message_type)
            report._topic = m.topic
            report._partition = m.partition
            report._offset = base_offset + i - 1 if base_offset >= 0 else None
            report._key = m.key
            report._value = m.value
            report._headers = m.headers
            report._timestamp = log_append or (create_time, m.timestamp)
            report._error = None
            latency = now - m.enqueued
            report._latency = latency if latency >= 0 else None
            report._leader_epoch = None
            report._delivery_count = None
            served += 1
            charge += 2 * m.size + overhead  # buffer_charge(m)
            callback(None, report)
    except BaseException as exc:  # returned: the caller keeps its books, then raises it
        return i, served, charge, exc
    return i, served, charge, None


def tally_delivered(messages: list[PendingMessage], overhead: int) -> tuple[int, int, int, list[int]]:
    """A delivered batch's bookkeeping in one pass: its value bytes (statistics), how many records
    have no callback and the buffer charge they free now, and the indexes of those with a future.
    The twin of ``kafkawire._native.tally_delivered``."""
    value_bytes = freed = charge = 0
    with_future = []
    for i, m in enumerate(messages):
        if m.value is not None:
            value_bytes += len(m.value)
        if m.future is not None:
            with_future.append(i)
        if m.callback is None:
            freed += 1
            charge += 2 * m.size + overhead  # buffer_charge(m)
    return value_bytes, freed, charge, with_future


class DeliveredReports:
    """The delivery reports of one delivered batch, served as one event (as librdkafka serves a
    batch of reports as one event): one queue entry, and one release of buffer room once served.

    Each record's `Message` is made here, when served, as ``Message(...)`` would make it but
    without re-checking values the producer checked already (this runs once per record). If a
    callback raises, the records after it are queued again as a new event (behind what was
    queued meanwhile) and the exception comes out of ``poll()``.
    """

    __slots__ = ("append_time", "base_offset", "charge", "messages", "next", "now", "producer", "served")

    def __init__(
        self, producer: Producer, messages: list[PendingMessage], base_offset: int, append_time: int, now: float
    ) -> None:
        self.producer = producer
        self.messages = messages
        self.base_offset = base_offset
        self.append_time = append_time
        self.now = now  # when the answer came: each record's latency is from its enqueueing to now
        self.next = 0  # index in ``messages`` of the next record to report
        self.served = 0  # callbacks run (records without a callback were released when answered)
        self.charge = 0  # their buffer charge

    def __call__(self) -> None:
        log_append = (TIMESTAMP_LOG_APPEND_TIME, self.append_time) if self.append_time != -1 else None
        serve = serve_delivered if native is None else native.serve_delivered
        i, served, charge, exc = serve(
            self.messages, self.next, self.base_offset, log_append, TIMESTAMP_CREATE_TIME, self.now, Message, RECORD_OVERHEAD
        )
        self.next = i
        self.served += served
        self.charge += charge
        self.producer._grouped_callbacks += served - 1
        if exc is not None:
            rest = self.messages[i:]
            if any(m.callback is not None for m in rest):
                base = self.base_offset + i if self.base_offset >= 0 else self.base_offset
                event = DeliveredReports(self.producer, rest, base, self.append_time, self.now)
                self.producer._reports.put(event, (), event.release)
            raise exc

    def release(self) -> None:
        self.producer._release(self.served, self.charge)


class ConsumerGroupMetadata:
    """A consumer group's identity for ``send_offsets_to_transaction`` (KIP-447: the generation and
    member let the group coordinator fence a zombie)."""

    def __init__(
        self, group_id: str, generation_id: int = -1, member_id: str = "", group_instance_id: str | None = None
    ) -> None:
        if not isinstance(group_id, str) or not group_id:
            raise TypeError("group_id must be a non-empty str")
        self.group_id = group_id
        self.generation_id = generation_id
        self.member_id = member_id
        self.group_instance_id = group_instance_id

    def __repr__(self) -> str:
        return (
            f"ConsumerGroupMetadata(group_id={self.group_id!r}, generation_id={self.generation_id}, "
            f"member_id={self.member_id!r}, group_instance_id={self.group_instance_id!r})"
        )


class ProducerClosedError(KafkaException, RuntimeError):
    """A call on a closed producer: a `KafkaException` (``_DESTROY``) that is also the
    ``RuntimeError`` confluent-kafka raises there, so handlers written for either catch it."""


class Producer:
    def __init__(self, config: Mapping[str, Any], **kwargs: Any) -> None:
        logger = kwargs.pop("logger", None)
        conf = parse_producer_config({**config, **kwargs})
        self._conf: ProducerConfig = conf
        self._log = logger if isinstance(logger, logging.Logger) else log
        self._interceptors = InterceptorChain(conf.interceptors, conf.raw)  # before any thread starts
        self._client = Client(conf.raw, logger=self._log)
        self._lock = threading.RLock()
        self._space = threading.Condition(self._lock)
        self._acc = Accumulator(
            batch_size=conf.batch_size,
            batch_num_messages=conf.batch_num_messages,
            linger=conf.linger_ms / 1000,
            compression=conf.compression_codec,
            compression_level=None if conf.compression_level == -1 else conf.compression_level,
        )
        self._reports = Reports(background=conf.delivery_reports == "background")
        self._partitioner = resolve_partitioner(conf.partitioner)
        self._sticky = StickyPartitioner(conf.batch_size)
        # For produce()'s fast path: the buffer limits, and topic names already checked legal.
        self._max_messages = conf.queue_buffering_max_messages  # 0: no limit on the count
        self._max_buffer_bytes = conf.queue_buffering_max_kbytes * 1024
        self._legal_topics: set[str] = set()
        self._keyless_sticky = self._partitioner in KEYLESS_STICKY
        builtin = self._partitioner in BUILTIN_PARTITIONERS.values()
        self._keyed = KeyedPartitions(self._partitioner) if builtin else None  # remembered key hashes
        self._plain = not self._interceptors  # no interceptors: produce() goes straight to _accept
        self._grouped_callbacks = 0  # callbacks run by DeliveredReports events beyond one per event
        self._max_record_bytes = conf.message_max_bytes
        self._now = self._client.engine.now
        self._outstanding = 0  # records produced and not yet reported (their report served)
        self._flushes = 0  # flush() calls under way
        self._started = time.monotonic()
        self._delivered_count = 0  # statistics: records and value bytes acknowledged
        self._delivered_bytes = 0
        self._buffered_bytes = 0
        self._closed = False
        self._idem = Idempotence() if conf.enable_idempotence else None
        self._txn: TransactionManager | None = None
        if conf.transactional_id is not None:
            assert self._idem is not None  # the configuration turns idempotence on for transactions
            self._txn = TransactionManager(
                self._client,
                self._idem,
                conf.transactional_id,
                conf.transaction_timeout_ms,
                conf.retry_backoff_ms,
                conf.retry_backoff_max_ms,
            )
        self._sender = Sender(
            self._client,
            self._acc,
            self._lock,
            SenderSettings(
                acks=conf.acks,
                request_timeout=conf.request_timeout_ms / 1000,
                message_timeout=(conf.message_timeout_ms or 2**31) / 1000,
                retries=conf.retries,
                retry_backoff_ms=conf.retry_backoff_ms,
                retry_backoff_max_ms=conf.retry_backoff_max_ms,
                max_in_flight=conf.max_in_flight,
                max_request_bytes=conf.message_max_bytes,
            ),
            self._complete,
            self._assign_partition,
            self._throttled,
            self._idem,
            self._error,
            self._txn,
        )
        self._client.on_error = self._error
        if self._txn is not None:
            self._txn.on_added = self._sender.wake
        self._stopping = threading.Event()
        self._stats_thread: threading.Thread | None = None
        if conf.stats_cb is not None and conf.statistics_interval_ms > 0:
            self._stats_thread = threading.Thread(target=self._stats_loop, name="kafkawire-stats", daemon=True)
            self._stats_thread.start()

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
        cb = callback if callback is not None else on_delivery if on_delivery is not None else self._conf.on_delivery
        if self._plain and not self._closed:
            self._accept(topic, value, key, partition, timestamp, headers, cb, None)
        else:
            self._enqueue(topic, value, key, partition, timestamp, headers, cb, None)

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        timestamp: int = 0,
        headers: Any = None,
    ) -> Future[RecordMetadata]:
        """Java-style: a future of the record's metadata, completed on the IO thread (no poll needed)."""
        fut: Future[RecordMetadata] = Future()
        self._enqueue(topic, value, key, partition, timestamp, headers, None, fut)
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
        default_cb = _first_set(callback, on_delivery, self._conf.on_delivery)
        # Check every message before queueing any, as confluent-kafka does: a TypeError means
        # nothing was queued (no delivery report will come for any of them).
        prepared: list[Prepared] = []
        for i, m in enumerate(messages):
            if not isinstance(m, dict):
                raise TypeError(f"message at index {i} must be a dict, not {type(m).__name__}")
            get = m.get
            cb = get("callback")
            if cb is None:
                cb = get("on_delivery", default_cb)
                if cb is None:
                    cb = default_cb
            value, key, part, timestamp, headers = (
                get("value"),
                get("key"),
                get("partition", partition),
                get("timestamp", 0),
                get("headers"),
            )
            try:
                # The same checks produce() makes, here converting once for both passes.
                if value is not None and value.__class__ is not bytes:
                    value = _to_bytes(value, "value")
                if key is not None and key.__class__ is not bytes:
                    key = _to_bytes(key, "key")
                _check_fields(part, timestamp, cb)
                if headers is not None:
                    headers = _headers(headers)
            except (TypeError, OverflowError) as exc:
                raise type(exc)(f"message at index {i}: {exc}") from None
            prepared.append((m, value, key, part, timestamp, headers, cb))
        queued = 0
        if self._plain and self._txn is None:
            refused: list[tuple[Any, KafkaError]] = []
            taken = self._queue_many(topic, prepared, 0, refused)
            for m, error in refused:
                m["_error"] = error
            queued = taken - len(refused)
            prepared = prepared[taken:]
        queue = self._accept if self._plain else self._enqueue
        for m, value, key, part, timestamp, headers, cb in prepared:
            try:
                queue(topic, value, key, part, timestamp, headers, cb, None)
            except KafkaException as exc:
                m["_error"] = exc.args[0]
                continue
            except BufferError:
                m["_error"] = KafkaError(KafkaError._QUEUE_FULL)
                continue
            queued += 1
        return queued

    def _queue_many(
        self, topic: str, prepared: list[Prepared], start: int, refused: list[tuple[Any, KafkaError]]
    ) -> int:
        """The bulk paths' fast path (produce_batch(), the Arrow writer): `_accept` for the checked
        records ``prepared[start:]`` of one topic, with the per-call work done once per slice of
        records (clock, metadata lookup, lock) instead of per record. The lock is let go between
        slices so that the sender keeps sending.

        Refused records are added to ``refused`` as (handle, error). Returns the index of the first
        record the fast path could not take (the buffer is full, the topic has no metadata yet,
        the producer failed: `_accept` waits for room or refuses as usual), or ``len(prepared)``.
        """
        for first in range(start, len(prepared), _SLICE):
            if self._sender.fatal is not None or self._closed:
                return first
            full = self._queue_slice(topic, prepared, first, min(first + _SLICE, len(prepared)), refused)
            if full is not None:
                return full
        return len(prepared)

    def _produce_many(self, topic: str, prepared: list[Prepared]) -> None:
        """Queue checked records of one topic (the Arrow writer's path) as ``produce()`` one by one
        would, but through `_queue_many`: waiting for room (serving reports) when the buffer is
        full, and raising the first refusal as a `KafkaException` once the others are queued."""
        self._check_open()
        check_topic(topic)
        fast = self._plain and self._txn is None
        queue = self._accept if self._plain else self._enqueue
        refused: list[tuple[Any, KafkaError]] = []
        index = 0
        while index < len(prepared):
            if fast:
                index = self._queue_many(topic, prepared, index, refused)
                if index == len(prepared):
                    break
            _, value, key, part, timestamp, headers, cb = prepared[index]
            try:
                queue(topic, value, key, part, timestamp, headers, cb, None)
            except BufferError:
                self.poll(0.05)  # the queue is full: serve reports (frees room), then try again
                continue
            except KafkaException as exc:
                if self._sender.fatal is not None:
                    raise
                refused.append((prepared[index][0], exc.args[0]))
            index += 1
        if refused:
            raise KafkaException(refused[0][1])

    def _queue_slice(
        self, topic: str, prepared: list[Prepared], start: int, stop: int, refused: list[tuple[Any, KafkaError]]
    ) -> int | None:
        """Queue ``prepared[start:stop]`` under one lock hold: the index of the first record the
        fast path could not take, or None when it took them all."""
        now = self._now()
        wake = False
        with self._lock:
            info = self._client.metadata.topics.get(topic)
            count = len(info.partitions) if info is not None and info.partitions and not info.error_code else 0
            if not count:
                return start
            sticky = self._keyless_sticky
            known: dict[bytes, int] = {} if self._keyed is None else self._keyed.known(topic, count)
            max_record, max_messages, max_buffer = self._max_record_bytes, self._max_messages, self._max_buffer_bytes
            outstanding, buffered = self._outstanding, self._buffered_bytes
            runs: dict[int, list[PendingMessage]] = {}  # per partition, in order: one extend() each
            for index in range(start, stop):
                handle, value, key, part, timestamp, headers, cb = prepared[index]
                msg = PendingMessage(topic, part, key, value, headers, timestamp, cb, None, now)
                if msg.size > max_record:
                    refused.append((handle, _too_large(msg.size, max_record)))
                    continue
                charge = 2 * msg.size + RECORD_OVERHEAD  # buffer_charge(msg)
                if (max_messages and outstanding >= max_messages) or buffered + charge > max_buffer:
                    stop = index
                    break
                if part == -1:
                    if key is None:
                        if sticky:
                            part = self._sticky.partition(topic, count, None, len(value or b""))
                        else:
                            part = self._partition_for(topic, key, count, len(value or b""))
                    else:
                        part = known.get(key, -1)
                        if part < 0:
                            part = self._partition_for(topic, key, count, len(value or b""))
                    msg.partition = part
                    if not 0 <= part < count:
                        refused.append((handle, KafkaError(KafkaError._UNKNOWN_PARTITION, f"partitioner chose {part} of {count}")))
                        continue
                elif not 0 <= part < count:
                    refused.append((handle, KafkaError(KafkaError._UNKNOWN_PARTITION, f"{topic} has {count} partitions, not {part}")))
                    continue
                outstanding += 1
                buffered += charge
                run = runs.get(part)
                if run is None:
                    run = runs[part] = []
                run.append(msg)
            else:
                stop = -1
            for part, run in runs.items():
                wake = self._acc.extend(topic, part, run, now) or wake
            self._outstanding, self._buffered_bytes = outstanding, buffered
        if wake:
            self._sender.wake()
        return None if stop < 0 else stop

    def _enqueue(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        timestamp: int,
        headers: Any,
        callback: Callable[..., Any] | None,
        future: Future[RecordMetadata] | None,
    ) -> None:
        self._check_open()
        if not self._interceptors:
            self._accept(topic, value, key, partition, timestamp, headers, callback, future)
            return
        record = self._interceptors.on_send(ProducerRecord(topic, value, key, partition, timestamp, headers))
        try:
            self._accept(
                record.topic, record.value, record.key, record.partition, record.timestamp, record.headers, callback, future
            )
        except (KafkaException, BufferError, TypeError, OverflowError) as exc:
            # As the Java client's onSendError: interceptors hear of records send() refused.
            refused = exc if isinstance(exc, KafkaException) else KafkaException(_refusal(exc))
            self._interceptors.on_send_error(record, refused)
            raise

    def _accept(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        timestamp: int,
        headers: Any,
        callback: Callable[..., Any] | None,
        future: Future[RecordMetadata] | None,
    ) -> None:
        """Validate, encode, take buffer room, pick the partition and queue the record.

        The common case (bytes, no headers, default partition and timestamp, a topic seen before)
        skips the general checks, which would all pass; anything else goes through them.
        """
        if self._sender.fatal is not None:
            raise KafkaException(self._sender.fatal)
        if self._txn is not None:
            self._txn.state.require(Call.PRODUCE)
        if topic not in self._legal_topics:
            check_topic(topic)
            if len(self._legal_topics) < 10_000:
                self._legal_topics.add(topic)
        if (
            partition.__class__ is not int
            or timestamp.__class__ is not int
            or not -1 <= partition <= INT32_MAX
            or not 0 <= timestamp <= INT64_MAX
        ):
            _check_fields(partition, timestamp, callback)
        elif callback is not None and not callable(callback):
            raise TypeError("on_delivery/callback must be callable")
        key_b = key if key is None or key.__class__ is bytes else _to_bytes(key, "key")
        value_b = value if value is None or value.__class__ is bytes else _to_bytes(value, "value")
        hdrs = None if headers is None else _headers(headers)
        now = self._now()
        msg = PendingMessage(topic, partition, key_b, value_b, hdrs, timestamp, callback, future, now)
        if msg.size > self._max_record_bytes:
            raise KafkaException(_too_large(msg.size, self._max_record_bytes))
        charge = 2 * msg.size + RECORD_OVERHEAD  # buffer_charge(msg)
        with self._lock:
            if (
                not self._max_messages or self._outstanding < self._max_messages
            ) and self._buffered_bytes + charge <= self._max_buffer_bytes:
                self._outstanding += 1
                self._buffered_bytes += charge
            else:
                self._reserve(charge)
            info = self._client.metadata.topics.get(topic)
            # A topic whose metadata carries an error has no usable partitions (as the Java client).
            count = len(info.partitions) if info is not None and info.partitions and not info.error_code else 0
            if count and partition != -1 and not 0 <= partition < count:
                self._release(1, charge)
                raise KafkaException(
                    KafkaError(KafkaError._UNKNOWN_PARTITION, f"{topic} has {count} partitions, not {partition}")
                )
            if not count:
                self._sender.unassigned.setdefault(topic, []).append(msg)
                wake = len(self._sender.unassigned[topic]) == 1
            else:
                if partition == -1:
                    if key_b is None and self._keyless_sticky:
                        chosen = self._sticky.partition(topic, count, None, len(value_b or b""))
                    else:
                        chosen = self._partition_for(topic, key_b, count, len(value_b or b""))
                    if not 0 <= chosen < count:
                        self._release(1, charge)
                        raise KafkaException(
                            KafkaError(KafkaError._UNKNOWN_PARTITION, f"partitioner chose {chosen} of {count}")
                        )
                    msg.partition = chosen
                wake = self._acc.append(msg, now)
        if wake:
            self._sender.wake()

    def _assign_partition(self, msg: PendingMessage, count: int) -> int:
        """The partition of a record that waited for its topic's metadata: the one the caller named
        (the sender fails it with _UNKNOWN_PARTITION when out of range), else the partitioner's."""
        if msg.partition != -1:
            return msg.partition
        return self._choose_partition(msg.topic, msg.key, count, len(msg.value or b""))

    def _partition_for(self, topic: str, key: bytes | None, count: int, value_len: int) -> int:
        """`_choose_partition`, with a built-in partitioner's answer for a key remembered."""
        if key is not None and self._keyed is not None:
            chosen = self._keyed.partition(topic, key, count)
            if chosen >= 0:
                return chosen
        return self._choose_partition(topic, key, count, value_len)

    def _choose_partition(self, topic: str, key: bytes | None, count: int, value_len: int) -> int:
        """The partitioner's choice, or -1 when user code answered nonsense or raised."""
        try:
            return choose_partition(self._partitioner, self._sticky, topic, key, count, None, value_len)
        except Exception:
            self._log.exception("the partitioner failed for topic %s", topic)
            return -1

    def _reserve(self, size: int) -> None:
        """Take buffer room for a record, raising BufferError or waiting (``max.block.ms``) when full."""
        conf = self._conf
        deadline = time.monotonic() + conf.max_block_ms / 1000

        max_messages = conf.queue_buffering_max_messages or None  # 0: no limit on the count

        def full() -> bool:
            return (
                max_messages is not None and self._outstanding + 1 > max_messages
            ) or self._buffered_bytes + size > conf.queue_buffering_max_kbytes * 1024

        while full():
            remaining = deadline - time.monotonic()
            if conf.max_block_ms == 0 or remaining <= 0:
                raise BufferError("Local: Queue full")
            if self._reports.background:
                self._space.wait(remaining)
            else:
                # Reports only free room when served: serve them here rather than wait forever.
                self._lock.release()
                try:
                    self._reports.serve(min(remaining, 0.05))
                finally:
                    self._lock.acquire()
        self._outstanding += 1
        self._buffered_bytes += size

    def _release(self, count: int, size: int) -> None:
        with self._lock:
            self._outstanding -= count
            self._buffered_bytes -= size
            self._space.notify_all()
        if self._outstanding == 0:
            self._reports.notify()

    # --- completion (IO thread) ------------------------------------------------------------------

    def _complete(self, messages: list[PendingMessage], error: KafkaError | None, base_offset: int, append_time: int) -> None:
        now = self._client.engine.now()
        exc = KafkaException(error) if error is not None else None
        freed = 0
        freed_bytes = 0
        if error is None and self._plain:
            self._report_delivered(messages, base_offset, append_time, now)
            return
        if error is None:
            self._delivered_count += len(messages)
            self._delivered_bytes += sum(len(m.value or b"") for m in messages)
        elif self._txn is not None:
            self._txn.fail(error)  # a record of the transaction is lost: it can only be aborted
        for i, m in enumerate(messages):
            offset = base_offset + i if error is None and base_offset >= 0 else OFFSET_INVALID
            ts = (TIMESTAMP_LOG_APPEND_TIME, append_time) if append_time != -1 else (TIMESTAMP_CREATE_TIME, m.timestamp)
            if self._interceptors or m.future is not None:
                metadata = RecordMetadata(
                    m.topic,
                    m.partition,
                    offset if offset >= 0 else -1,
                    ts[1],
                    ts[0],
                    -1 if m.key is None else len(m.key),
                    -1 if m.value is None else len(m.value),
                )
                if self._interceptors:
                    self._interceptors.on_acknowledgement(metadata, exc)
                if m.future is not None:
                    if exc is None:
                        m.future.set_result(metadata)
                    else:
                        m.future.set_exception(exc)
            if m.callback is None:
                freed += 1
                freed_bytes += buffer_charge(m)
                continue
            report = Message(
                m.topic,
                m.partition,
                offset,
                m.key,
                m.value,
                m.headers,
                error=error,
                timestamp=ts,
                latency=None if error else now - m.enqueued,
            )
            self._reports.put(m.callback, (error, report), self._releaser(buffer_charge(m)))
        if freed:
            self._release(freed, freed_bytes)

    def _report_delivered(self, messages: list[PendingMessage], base_offset: int, append_time: int, now: float) -> None:
        """A delivered batch: futures completed here (on the IO thread), callbacks queued as one
        `DeliveredReports` event, buffer room of records without a callback freed at once."""
        tally = tally_delivered if native is None else native.tally_delivered
        value_bytes, freed, freed_bytes, with_future = tally(messages, RECORD_OVERHEAD)
        self._delivered_count += len(messages)
        self._delivered_bytes += value_bytes
        for i in with_future:
            m = messages[i]
            assert m.future is not None
            ts = (TIMESTAMP_LOG_APPEND_TIME, append_time) if append_time != -1 else (TIMESTAMP_CREATE_TIME, m.timestamp)
            m.future.set_result(
                RecordMetadata(
                    m.topic,
                    m.partition,
                    base_offset + i if base_offset >= 0 else -1,
                    ts[1],
                    ts[0],
                    -1 if m.key is None else len(m.key),
                    -1 if m.value is None else len(m.value),
                )
            )
        if freed < len(messages):
            event = DeliveredReports(self, messages, base_offset, append_time, now)
            self._reports.put(event, (), event.release)
        if freed:
            self._release(freed, freed_bytes)

    def _releaser(self, size: int) -> Callable[[], None]:
        return lambda: self._release(1, size)

    def _error(self, error: KafkaError) -> None:
        if self._conf.error_cb is not None:
            self._reports.put(self._conf.error_cb, (error,))
        else:
            self._log.error("%s", error.str())

    def _throttled(self, node: int, host: str, port: int, throttle_ms: int) -> None:
        if self._conf.throttle_cb is not None:
            event = ThrottleEvent(broker_name(host, port, node), node, throttle_ms / 1000)
            self._reports.put(self._conf.throttle_cb, (event,))

    # --- serving, flushing, closing ------------------------------------------------------------

    def poll(self, timeout: float = -1) -> int:
        """Serve queued callbacks; wait up to ``timeout`` seconds (-1: forever) for the first.

        Returns how many callbacks ran (confluent-kafka counts librdkafka events, which may
        carry several delivery reports each). An exception raised by a callback comes out of
        this call; the callbacks queued after it wait for the next ``poll()``/``flush()``.
        """
        self._check_open()
        grouped = self._grouped_callbacks
        events = self._reports.serve(None if timeout is None or timeout < 0 else timeout)
        if self._reports.background:
            return events
        # A batch's delivery reports are one event (DeliveredReports): count each callback.
        return events + self._grouped_callbacks - grouped

    def flush(self, timeout: float = -1) -> int:
        """Send everything now and wait until every record is reported; returns how many remain.

        Always serves the callbacks already queued, even with ``timeout=0``. As with
        confluent-kafka, an exception raised by a callback does not stop the flush: every report
        is still served, then the (last) exception is raised, earlier ones chained as context.
        """
        self._check_open()
        return self._flush(timeout)

    def _flush(self, timeout: float | None) -> int:
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        failure: Exception | None = None

        def serve(wait: float) -> None:
            nonlocal failure
            try:
                self._reports.serve(wait)
            except Exception as exc:
                if failure is not None and exc is not failure:
                    exc.__context__ = failure
                failure = exc

        with self._lock:
            self._flushes += 1  # linger stays off while any flush() runs
            self._acc.flushing = True
        self._sender.wake()
        try:
            if not self._reports.background:
                serve(0)
            while self._outstanding > 0 and not self._reports.on_report_thread:
                # (On the report thread the running callback's own record cannot be reported
                # until it returns: flushing there only sends, it does not wait.)
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                if self._reports.background:
                    self._reports.wait_idle(lambda: self._outstanding == 0, remaining)
                else:
                    serve(0.1 if remaining is None else min(remaining, 0.1))
        finally:
            with self._lock:
                self._flushes -= 1
                self._acc.flushing = self._flushes > 0
        if failure is not None:
            raise failure
        return len(self)

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        """Fail queued (``_PURGE_QUEUE``) and in-flight (``_PURGE_INFLIGHT``) records; their reports
        are served by the next ``poll()``/``flush()``."""
        self._check_open()
        self._purge(in_queue, in_flight, blocking)

    def _purge(self, in_queue: bool, in_flight: bool, blocking: bool) -> None:
        done = self._client.engine.run(lambda: self._sender.purge(in_queue, in_flight))
        if blocking:
            done.result()

    def _check_open(self) -> None:
        if self._closed:
            raise ProducerClosedError(KafkaError(KafkaError._DESTROY, "Producer has been closed"))

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """New SASL username and password for the next authentications (confluent-kafka's call)."""
        self._client.set_sasl_credentials(username, password)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        """Cluster metadata (``auto.create.topics.enable`` brokers create an unknown ``topic``)."""
        self._check_open()
        return self._client.list_topics(topic, None if timeout < 0 else timeout, auto_create=True)

    # --- transactions (the Transactional Producer API of confluent-kafka) ----------------------

    def init_transactions(self, timeout: float | None = None) -> None:
        """Register ``transactional.id`` with its coordinator, fencing older producers with it and
        finishing their open transaction. Retriable on timeout: call again to resume."""
        txn = self._transactional()
        txn.state.require(Call.INIT)
        # A fatal transaction error reaches error_cb too (once: the sender reports its own).
        txn.on_fatal = lambda error: None if self._sender.fatal is not None else self._error(error)
        self._txn_call(Call.INIT, lambda deadline: txn.init(deadline), timeout)
        self._sender.wake()

    def begin_transaction(self) -> None:
        txn = self._transactional()
        txn.state.require(Call.BEGIN)
        txn.added.clear()
        txn.state.succeeded(Call.BEGIN)

    def send_offsets_to_transaction(
        self, positions: list[TopicPartition], group_metadata: ConsumerGroupMetadata, timeout: float | None = None
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

    def commit_transaction(self, timeout: float | None = None) -> None:
        """Flush, then commit. An abortable error means: abort_transaction(), then begin again."""
        txn = self._transactional()
        txn.state.require(Call.COMMIT)
        deadline = self._txn_deadline(timeout)
        if self.flush(max(0.0, deadline - time.monotonic())):
            txn.state.interrupted(Call.COMMIT)
            raise KafkaException(
                KafkaError(KafkaError._TIMED_OUT, "commit_transaction: records still in flight", retriable=True)
            )
        if txn.state.state in (TxnState.ABORTABLE_ERROR, TxnState.FATAL_ERROR):
            assert txn.state.last_error is not None  # a record of the transaction failed meanwhile
            raise KafkaException(txn.state.last_error)
        self._txn_call(Call.COMMIT, lambda d: txn.end(True, d), deadline - time.monotonic())

    def abort_transaction(self, timeout: float | None = None) -> None:
        """Fail what is queued or in flight (``_PURGE_*``), abort on the coordinator, and take a new
        epoch if a sequence was lost. Retriable on timeout: call again to resume."""
        txn = self._transactional()
        txn.state.require(Call.ABORT)
        deadline = self._txn_deadline(timeout)
        idem = self._idem

        def purge() -> None:  # on the IO thread
            if idem is not None:
                with self._lock:
                    # Batches queued for a retry carry sequences: dropping them leaves a hole.
                    if self._acc.stamped_batches():
                        idem.request_bump()
            self._sender.purge(True, True)

        self._client.engine.run(purge).result()
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
        self._sender.wake()

    @contextlib.contextmanager
    def transaction(self, timeout: float | None = None) -> Iterator[Producer]:
        """``with producer.transaction(): ...``: begin; commit on success, abort on an exception."""
        self.begin_transaction()
        try:
            yield self
        except BaseException:
            txn = self._transactional()
            if txn.state.state is not TxnState.FATAL_ERROR:
                self.abort_transaction(timeout)
            raise
        self.commit_transaction(timeout)

    def _transactional(self) -> TransactionManager:
        if self._txn is None:
            raise KafkaException(
                KafkaError(KafkaError._NOT_CONFIGURED, 'transactions need "transactional.id" in the configuration')
            )
        return self._txn

    def _txn_deadline(self, timeout: float | None) -> float:
        seconds = self._conf.transaction_timeout_ms / 1000 if timeout is None or timeout < 0 else timeout
        return time.monotonic() + seconds

    def _txn_call(self, call: Call | None, start: Callable[[float], Future[None]], timeout: float | None) -> None:
        """Run one coordinator conversation to its end or the timeout, and classify what came back."""
        txn = self._transactional()
        seconds = self._conf.transaction_timeout_ms / 1000 if timeout is None or timeout < 0 else max(0.0, timeout)
        fut = start(self._client.engine.now() + seconds)
        try:
            fut.result(seconds + 5)
        except KafkaException as exc:
            error = exc.args[0]
            assert isinstance(error, KafkaError)
            # A retriable error (a timeout) leaves the transaction as it was: the same call resumes.
            if call is not Call.INIT and not (error.retriable() and not error.fatal()):
                txn.fail(error)
            if txn.state.state is TxnState.FATAL_ERROR and txn.state.last_error is not None:
                raise KafkaException(txn.state.last_error) from None
            if call is not None:
                txn.state.interrupted(call)
            if txn.state.state is TxnState.ABORTABLE_ERROR and txn.state.last_error is not None:
                raise KafkaException(txn.state.last_error) from None
            raise KafkaException(KafkaError(error.code(), error.str(), retriable=True)) from None
        if call is not None:
            txn.state.succeeded(call)

    def __len__(self) -> int:
        return self._outstanding

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
        if self._outstanding:
            self._purge(True, True, True)
        self._closed = True
        while self._outstanding and not self._reports.background:
            try:
                self._reports.serve(0.1)
            except Exception as exc:
                keep(exc)
        if self._reports.background and not self._reports.on_report_thread:
            self._reports.wait_idle(lambda: self._outstanding == 0, 10)
        self._stopping.set()
        if self._stats_thread is not None and self._stats_thread is not threading.current_thread():
            self._stats_thread.join(5)
        self._interceptors.close()
        self._client.close()
        self._reports.close()
        if failure is not None:
            raise failure
        return True

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- statistics ----------------------------------------------------------------------------

    def _stats_loop(self) -> None:
        interval = self._conf.statistics_interval_ms / 1000
        while not self._stopping.wait(interval):
            if self._conf.stats_cb is not None:
                self._reports.put(self._conf.stats_cb, (json.dumps(self._statistics()),))

    def _statistics(self) -> dict[str, Any]:
        """A documented subset of librdkafka's statistics, under librdkafka's names (README)."""
        with self._lock:
            depths = self._acc.depths()
        topics: dict[str, Any] = {}
        for (topic, partition), (count, size) in depths.items():
            parts = topics.setdefault(topic, {"topic": topic, "partitions": {}})["partitions"]
            parts[str(partition)] = {"partition": partition, "msgq_cnt": count, "msgq_bytes": size}
        brokers = {}
        for conn in self._client.connections():
            st = conn.stats
            name = broker_name(conn.host, conn.port, conn.node_id)
            brokers[name] = {
                "name": name,
                "nodeid": conn.node_id,
                "state": conn.state.value.upper(),
                "tx": st.tx,
                "rx": st.rx,
                "waitresp_cnt": conn.in_flight,
                "outbuf_cnt": conn.load - conn.in_flight,
                "rtt": {
                    "min": int(st.rtt_min * 1e6),
                    "max": int(st.rtt_max * 1e6),
                    "avg": int(st.rtt_sum / st.rx * 1e6) if st.rx else 0,
                    "cnt": st.rx,
                },
            }
        now = time.monotonic()
        return {
            "name": self._conf.raw["client.id"],
            "client_id": self._conf.raw["client.id"],
            "type": "producer",
            "ts": int(now * 1_000_000),
            "time": int(time.time()),
            "age": int((now - self._started) * 1_000_000),
            "replyq": len(self._reports),
            "msg_cnt": self._outstanding,
            "msg_size": self._buffered_bytes,
            "msg_max": self._conf.queue_buffering_max_messages,
            "msg_size_max": self._conf.queue_buffering_max_kbytes * 1024,
            "txmsgs": self._delivered_count,
            "txmsg_bytes": self._delivered_bytes,
            "tx": sum(b["tx"] for b in brokers.values()),
            "rx": sum(b["rx"] for b in brokers.values()),
            "brokers": brokers,
            "topics": topics,
        }


class SyncProducer:
    """Blocking producer (the seeds' KafkaSyncProducer): ``send()`` returns the record's metadata or
    raises `KafkaException`."""

    def __init__(self, config: Mapping[str, Any], **kwargs: Any) -> None:
        conf = dict(config)
        conf.setdefault("linger.ms", 0)  # nothing else will join a batch while we wait for it
        self._producer = Producer(conf, **kwargs)

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        timestamp: int = 0,
        headers: Any = None,
        timeout: float | None = None,
    ) -> RecordMetadata:
        fut = self._producer.send(topic, value, key, partition, timestamp, headers)
        return fut.result(timeout)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        return self._producer.list_topics(topic, timeout)

    def close(self, timeout: float = -1) -> None:
        self._producer.close(timeout)

    def __enter__(self) -> SyncProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

