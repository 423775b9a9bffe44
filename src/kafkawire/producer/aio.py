"""`AIOProducer`: the producer for asyncio, shaped like ``confluent_kafka.aio.AIOProducer``.

``await produce(...)`` queues the record at once (no thread pool per call) and returns an
asyncio future of the delivered `Message`. Delivery reports are served on the event loop, with
no thread of their own: the producer's report queue is handed over to the loop
(`CallbackExecutor.hand_over`), whose first report after an empty queue wakes the loop once
(``call_soon_threadsafe``) and the loop then serves everything queued. So each record's future
settles and its ``on_delivery`` runs on the loop's thread, and so do ``error_cb``, ``stats_cb``
and ``throttle_cb``. When the buffer is full, ``produce`` awaits room (up to ``max.block.ms``
when set) instead of raising ``BufferError``.

``await produce_batch(topic, messages)`` is the bulk form (not in confluent-kafka's aio module):
the sync `Producer.produce_batch` (same arguments, same ``_error`` entries for records it refuses)
plus one future for the whole call, resolved once the last queued record is reported to a
`BatchResult` (the count delivered, each failure's report): no future per record, and, unless a
callback per record is asked for, one report per produced batch (`BatchDeliveryCallback`).

The calls that wait (``flush``, ``purge``, ``list_topics``, ``close`` and the transactional calls)
run on a thread pool, ``executor`` or one of ``max_workers`` threads, as confluent-kafka's do;
its ``batch_size`` and ``buffer_timeout`` size a local buffer this producer does not have (each
record is queued at once): accepted, and they change nothing (README, "differs on purpose").

Several loops may use one producer: reports are served by whichever open loop that used it
comes first, and a record produced on another loop is handed to its own loop to settle (with loops
running at once on several threads, a loop may then see one partition's reports out of order; a
record whose loop was closed before its report is dropped: nothing could await it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
from asyncio import InvalidStateError
from asyncio.events import _get_running_loop
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..base.model import ClusterMetadata, ConsumerGroupMetadata, Message, TopicPartition
from ..client.dropped import Kept
from ..client.executor import CallbackExecutor
from ..client.running_loop import running_loop
from ..core.kafka_error import KafkaError, KafkaException
from ..native import native
from .delivery import BatchDeliveryCallback
from .inputs import first_set
from .producer import Producer
from .producer_config import parse_producer_config

T = TypeVar("T")


class AIOProducer:
    def __init__(
        self,
        producer_conf: Mapping[str, Any],
        max_workers: int = 4,
        executor: concurrent.futures.Executor | None = None,
        batch_size: int = 1000,
        buffer_timeout: float = 1.0,
        **kwargs: Any,
    ) -> None:
        """confluent-kafka's arguments: ``executor`` (else a pool of ``max_workers`` threads) runs
        the calls that wait; ``batch_size`` and ``buffer_timeout`` are accepted and mean nothing
        here (records are queued at once). ``kwargs``: more configuration, as the Producer's."""
        self._own_executor = executor is None
        self.executor = executor if executor is not None else concurrent.futures.ThreadPoolExecutor(max_workers)
        self._closed = False
        conf = {**producer_conf, "delivery.reports": "poll"}
        # Checked like every other option (_INVALID_ARG naming the key and the range); the
        # producer underneath never blocks a thread: this face awaits room instead.
        checked = parse_producer_config({**conf, **{k: v for k, v in kwargs.items() if k != "logger"}})
        self._max_block = checked.max_block_ms / 1000
        conf["max.block.ms"] = 0
        kwargs.pop("max.block.ms", None)
        kwargs.pop("delivery.reports", None)
        self._reports = CallbackExecutor(background=False)
        self._loop: asyncio.AbstractEventLoop | None = None  # where reports are served
        # Every loop that used this producer and was open when the last one came (`_wake`).
        self._loops: tuple[asyncio.AbstractEventLoop, ...] = ()
        self._waking: set[asyncio.AbstractEventLoop] = set()  # loops with a `_serve` on the way
        self._room_waiters: list[asyncio.Future[None]] = []  # produce calls awaiting buffer room
        self._running_loop = running_loop()  # this thread's loop, asked of asyncio once per loop run
        self._kept = Kept()  # what the IO side calls back here, held here alone (client/dropped.py)
        self._reports.hand_over(self._kept.hold("wake", self._wake))
        self._producer = Producer(conf, _executor=self._reports, **kwargs)
        loop = _get_running_loop()
        if loop is not None:  # else the first loop to call a method (error_cb etc. wait till then)
            self._serve_on(loop)

    async def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        timestamp: int = 0,
        headers: Any = None,
        on_delivery: Any = None,
    ) -> asyncio.Future[Message]:
        """Queue a record; the returned future resolves to the delivered `Message` or raises
        `KafkaException` with the delivery error."""
        loop = self._running_loop()
        if loop is not self._loop:
            self._serve_on(loop)
        if on_delivery is None:
            fut: _Delivery = _Delivery(loop=loop)
        elif callable(on_delivery):
            fut = _DeliveryThenCallback(loop=loop)
            fut.on_delivery = on_delivery
        else:
            raise TypeError("on_delivery must be callable")
        try:
            self._producer.produce(topic, value, key, partition, fut, timestamp, headers)
        except BufferError:
            await self._produce_when_room(loop, topic, value, key, partition, fut, timestamp, headers)
        return fut

    async def produce_batch(
        self,
        topic: str,
        messages: list[dict[str, Any]],
        partition: int = -1,
        on_delivery: Callable[..., Any] | None = None,
        callback: Callable[..., Any] | None = None,
    ) -> asyncio.Future[BatchResult]:
        """Queue many records, as `Producer.produce_batch` (a record it refuses gets an ``_error``
        entry in its dict; a full buffer is awaited, up to ``max.block.ms`` when set, then refused
        with ``_QUEUE_FULL``). The returned future resolves, once every queued record is reported,
        to a `BatchResult`: the count delivered and the report of each failed record.
        ``on_delivery``/``callback`` and each message's own run per record, on the loop."""
        loop = self._running_loop()
        if loop is not self._loop:
            self._serve_on(loop)
        per_record = first_set(callback, on_delivery)
        if per_record is not None and not callable(per_record):
            raise TypeError("on_delivery/callback must be callable")
        batch = _Batch(loop, per_record)
        queue: list[Any] = messages
        copies: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if isinstance(messages, list) and not _plain(messages):
            queue, copies = _reporting_to(batch, messages)
        try:
            await self._queue_batch(loop, batch, topic, queue, partition)
        finally:
            for original, copy in copies:
                if "_error" in copy:
                    original["_error"] = copy["_error"]
            batch.all_queued()
        return batch.future

    async def _queue_batch(
        self, loop: asyncio.AbstractEventLoop, batch: _Batch, topic: str, queue: list[dict[str, Any]], partition: int
    ) -> None:
        """The sync producer's produce_batch, again for the records refused for want of room (it
        never blocks here) until they fit or ``max.block.ms`` passed."""
        deadline = None
        while True:
            queued = self._producer.produce_batch(topic, queue, partition, on_delivery=batch.callback())
            batch.expected += queued
            if queued == len(queue):
                return
            full = [m for m in queue if m.get("_error") is not None and m["_error"].code() == KafkaError._QUEUE_FULL]
            if not full:
                return
            if deadline is None:
                deadline = loop.time() + self._max_block if self._max_block > 0 else float("inf")
            if loop.time() >= deadline:
                return
            await self._room(loop, None if deadline == float("inf") else deadline)
            for m in full:
                del m["_error"]
            queue = full

    async def _produce_when_room(self, loop: asyncio.AbstractEventLoop, *args: Any) -> None:
        deadline = loop.time() + self._max_block if self._max_block > 0 else None
        while True:
            try:
                self._producer.produce(*args)
                return
            except BufferError:
                if deadline is not None and loop.time() >= deadline:
                    raise
            await self._room(loop, deadline)

    async def _room(self, loop: asyncio.AbstractEventLoop, deadline: float | None) -> None:
        """Until reports were served (every record here has a callback: only serving them, on the
        loop, frees room) or ``deadline`` (loop time; None: no limit)."""
        if self._drain(loop):
            return
        waiter = loop.create_future()
        self._room_waiters.append(waiter)
        timer = None if deadline is None else loop.call_at(deadline, _settle, waiter)
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()

    async def flush(self, timeout: float = -1) -> int:
        """Send everything now and wait until every record is reported (served on this loop
        meanwhile); returns how many remain."""
        return await self._call(self._producer.flush, timeout)

    async def purge(self, in_queue: bool = True, in_flight: bool = True) -> None:
        await self._call(self._producer.purge, in_queue, in_flight)

    async def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        return await self._call(self._producer.list_topics, topic, timeout)

    async def cluster_id(self, timeout: float = -1) -> str | None:
        """`Producer.cluster_id` on the pool (it may wait for the first broker's answer)."""
        return await self._call(self._producer.cluster_id, timeout)

    async def close(self) -> None:
        """Flush and close the producer, then the thread pool it made; closing again does nothing."""
        if self._closed:
            return
        await self._call(self._producer.close)
        self._closed = True
        if self._own_executor:
            self.executor.shutdown(wait=False)

    # --- transactions (each call on the pool; reports go on being served on the loop) -------------

    async def init_transactions(self, timeout: float | None = None) -> None:
        await self._call(self._producer.init_transactions, timeout)

    async def begin_transaction(self) -> None:
        """Flush first, as confluent-kafka's: records produced before belong to no transaction."""
        await self.flush()
        await self._call(self._producer.begin_transaction)

    async def send_offsets_to_transaction(
        self, positions: list[TopicPartition], group_metadata: ConsumerGroupMetadata, timeout: float | None = None
    ) -> None:
        await self._call(self._producer.send_offsets_to_transaction, positions, group_metadata, timeout)

    async def commit_transaction(self, timeout: float | None = None) -> None:
        await self.flush()
        await self._call(self._producer.commit_transaction, timeout)

    async def abort_transaction(self, timeout: float | None = None) -> None:
        """Flush first, as confluent-kafka's: what was produced is delivered, then aborted."""
        await self.flush()
        await self._call(self._producer.abort_transaction, timeout)

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the pool, this loop serving reports meanwhile."""
        loop = asyncio.get_running_loop()
        self._serve_on(loop)
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args))

    def __len__(self) -> int:
        return len(self._producer)

    async def __aenter__(self) -> AIOProducer:
        self._serve_on(asyncio.get_running_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- serving reports on the loop ------------------------------------------------------------

    def _serve_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """Serve reports on ``loop`` from now on, starting with whatever is queued already."""
        if loop is not self._loop:
            self._loop = loop
            self._loops = (*(other for other in self._loops if other is not loop and not other.is_closed()), loop)
            self._waking.intersection_update(self._loops)
            loop.call_soon(self._serve)

    def _wake(self) -> None:
        """The report queue stopped being empty (any thread, mostly the IO thread): every open loop
        that used the producer is woken, not only the last. That one may end (``asyncio.run``
        returning with this wake-up unserved) while another still awaits reports: a queue left
        non-empty wakes no one again. A loop already woken is not woken twice: one left open and
        idle would pile them up."""
        for loop in self._loops:
            if loop in self._waking:
                continue
            self._waking.add(loop)
            with contextlib.suppress(RuntimeError):  # that loop is closed: the others serve
                loop.call_soon_threadsafe(self._serve)

    def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._waking.discard(loop)  # (before draining: what is queued from now on wakes it again)
        self._drain(loop)
        if len(self._reports):  # queued while serving (no wake-up for those), or left by a raise
            loop.call_soon(self._serve)

    def _drain(self, loop: asyncio.AbstractEventLoop) -> int:
        """Serve what is queued; how many were served. Those awaiting room (`_room`) are woken
        when any was: each report frees its record's room."""
        served = 0
        try:
            served = self._reports.drain()
        except Exception as exc:  # error_cb, stats_cb or throttle_cb raised: as the loop does, report it
            served = 1
            loop.call_exception_handler({"message": "exception in an AIOProducer callback", "exception": exc})
        if served and self._room_waiters:
            waiters, self._room_waiters = self._room_waiters, []
            for waiter in waiters:
                if waiter.get_loop() is loop:
                    _settle(waiter)
                else:
                    with contextlib.suppress(RuntimeError):  # its loop is closed: no one awaits it
                        waiter.get_loop().call_soon_threadsafe(_settle, waiter)
        return served


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


_OWN_KEYS = frozenset(("callback", "on_delivery", "_error"))  # what makes a message need a look


def _plain(messages: list[Any]) -> bool:
    """No message has a callback of its own or a stale ``_error`` (checked in C: the common case)."""
    try:
        return all(map(_OWN_KEYS.isdisjoint, messages))
    except TypeError:  # a message that is not a dict: the sync produce_batch refuses the call
        return True


def _reporting_to(batch: _Batch, messages: list[Any]) -> tuple[list[Any], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """``messages`` to queue for ``batch``: a record with a callback of its own as a copy whose
    callback reports to the batch first, and a stale ``_error`` (an earlier call's) removed, so
    that refusals are this call's. Returns them and the (original, copy) pairs."""
    queue = list(messages)
    copies = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        m.pop("_error", None)
        own = first_set(m.get("callback"), m.get("on_delivery"))
        if own is not None and callable(own):  # (not callable: the sync produce_batch raises)
            copy = {**m, "callback": functools.partial(batch.report_via, own)}
            copy.pop("on_delivery", None)
            queue[i] = copy
            copies.append((m, copy))
    return queue, copies


class _PyDelivery(asyncio.Future[Message]):
    """A record's future, and its delivery callback: the producer calls it with the report, so a
    record costs no object besides its future. The pure-Python twin of native_c/settle_futures.c's
    `_Delivery`, which does the same from C (and serve_delivered calls without a frame)."""

    __slots__ = ()

    def __call__(self, err: KafkaError | None, msg: Message) -> bool:
        """Settle with the report; False when handed to this future's own loop to do it there."""
        loop = self.get_loop()
        if _get_running_loop() is not loop:  # served on another loop's thread: settle on our own
            try:
                loop.call_soon_threadsafe(self, err, msg)
            except RuntimeError:  # our loop is closed: no one can await this future
                pass
            return False
        try:
            if err is None:
                self.set_result(msg)
            else:
                self.set_exception(KafkaException(err))
        except InvalidStateError:  # cancelled by its awaiter
            pass
        return True


if TYPE_CHECKING or native is None:
    _Delivery = _PyDelivery
else:
    _Delivery = native.settling_future(asyncio.Future, _get_running_loop, KafkaException, InvalidStateError)


class _DeliveryThenCallback(_Delivery):
    """A record's future whose ``on_delivery`` runs once the future is settled (on its loop)."""

    __slots__ = ("on_delivery",)
    on_delivery: Callable[[KafkaError | None, Message], Any]

    def __call__(self, err: KafkaError | None, msg: Message) -> bool:
        if not _Delivery.__call__(self, err, msg):
            return False
        _run_callback(self.get_loop(), self.on_delivery, err, msg)
        return True


@dataclass
class BatchResult:
    """What ``await produce_batch()``'s future resolves to: how many queued records were delivered,
    and the report (`Message`, ``error()`` set) of each that failed. A delivered record has no
    report object of its own here (its produced batch is tallied once); ``on_delivery`` gives them."""

    delivered: int = 0
    failed: list[Message] = field(default_factory=list)


class _Batch(BatchDeliveryCallback):
    """One ``produce_batch()`` call's future and the delivery callback of its records: a produced
    batch is counted by one `report_batch` call, a failed record's report kept, and the future
    resolved with the last (``expected`` is the count queued)."""

    __slots__ = ("expected", "future", "loop", "on_delivery", "queueing", "reported", "result")
    batch_failures = False  # each failed record's report is kept: per record

    def __init__(self, loop: asyncio.AbstractEventLoop, on_delivery: Callable[..., Any] | None) -> None:
        self.loop = loop
        self.future: asyncio.Future[BatchResult] = loop.create_future()
        self.on_delivery = on_delivery
        self.result = BatchResult()
        self.reported = 0
        self.expected = 0
        self.queueing = True  # more records may be queued: no settling yet

    def callback(self) -> Callable[[KafkaError | None, Message], None]:
        """What the records' ``on_delivery`` is: this batch, or (a callback per record asked for)
        its per-record face, which the producer never reports as a batch."""
        return self if self.on_delivery is None else self.report

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        self.report(err, msg)

    def report(self, err: KafkaError | None, msg: Message) -> None:
        if _get_running_loop() is not self.loop:  # served on another loop's thread: go on on our own
            self._hand_over(self.report, err, msg)
            return
        self._count(err, msg)
        if self.on_delivery is not None:
            _run_callback(self.loop, self.on_delivery, err, msg)
        self._maybe_settle()

    def report_batch(self, topic: str, partition: int, count: int, base_offset: int, error: KafkaError | None) -> None:
        """A produced batch of ``count`` records delivered (failures come per record)."""
        if _get_running_loop() is not self.loop:
            self._hand_over(self.report_batch, topic, partition, count, base_offset, error)
            return
        self.result.delivered += count
        self.reported += count
        self._maybe_settle()

    def report_via(self, callback: Callable[..., Any], err: KafkaError | None, msg: Message) -> None:
        """The report of a record with a callback of its own (run instead of the call's)."""
        if _get_running_loop() is not self.loop:
            self._hand_over(self.report_via, callback, err, msg)
            return
        self._count(err, msg)
        _run_callback(self.loop, callback, err, msg)
        self._maybe_settle()

    def _count(self, err: KafkaError | None, msg: Message) -> None:
        self.reported += 1
        if err is None:
            self.result.delivered += 1
        else:
            self.result.failed.append(msg)

    def _hand_over(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # our loop is closed: no one can await this batch
            pass

    def all_queued(self) -> None:
        self.queueing = False
        self._maybe_settle()

    def _maybe_settle(self) -> None:
        if self.reported == self.expected and not self.queueing:
            try:
                self.future.set_result(self.result)
            except InvalidStateError:  # cancelled by its awaiter (or settled already)
                pass


def _run_callback(
    loop: asyncio.AbstractEventLoop, callback: Callable[..., Any], err: KafkaError | None, msg: Message
) -> None:
    try:
        callback(err, msg)
    except Exception as exc:  # as the loop does for a failing callback: report, go on
        loop.call_exception_handler({"message": "exception in an AIOProducer on_delivery callback", "exception": exc})
