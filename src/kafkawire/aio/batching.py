"""confluent-kafka's AIOProducer batching parts (its private modules ``_message_batch``,
``_producer_batch_processor``, ``_kafka_batch_executor`` and ``_buffer_timeout_manager``, one
concern here), working over a `Producer`.

kafkawire's `AIOProducer` does not use them: it queues each record at once (README, "differs on
purpose"). A program that drives them itself gets their behaviour: records buffered each with a
future, grouped per (topic, partition) in the order first seen, handed to ``produce_batch`` on an
executor thread, each future settled with its record's report on its own loop's thread, and a
buffer flushed after ``timeout`` seconds without activity.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
import weakref
from asyncio.events import _get_running_loop
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..core.kafka_error import KafkaError, KafkaException

__all__ = [
    "BufferTimeoutManager",
    "MessageBatch",
    "ProducerBatchExecutor",
    "ProducerBatchManager",
    "create_message_batch",
]

log = logging.getLogger(__name__)
UNASSIGNED = -1  # no partition asked: the partitioner's choice
# The fields of a buffered record that survive a failed batch's return to the buffer.
_KEPT_ON_RETRY = ("partition", "timestamp", "headers")


class MessageBatch(NamedTuple):
    """The records of one (topic, partition) and their futures, in the same order."""

    topic: str
    messages: Sequence[dict[str, Any]]
    futures: Sequence[asyncio.Future[Any]]
    partition: int = UNASSIGNED

    @property
    def size(self) -> int:
        return len(self.messages)

    @property
    def info(self) -> str:
        return f"MessageBatch(topic='{self.topic}', partition={self.partition}, size={len(self.messages)})"


def create_message_batch(
    topic: str,
    messages: Sequence[dict[str, Any]],
    futures: Sequence[asyncio.Future[Any]],
    callbacks: Any = None,
    partition: int = UNASSIGNED,
) -> MessageBatch:
    """A `MessageBatch` holding tuples of ``messages`` and ``futures`` (``callbacks`` is ignored,
    as by confluent-kafka, which kept it for old callers)."""
    return MessageBatch(topic, tuple(messages), tuple(futures), partition)


def _settle(fut: asyncio.Future[Any], err: KafkaError | None, msg: Any) -> None:
    """Settle ``fut`` with a report, on its loop's thread (reports are served on an executor
    thread); a future already done (cancelled by its awaiter) or of a closed loop is left."""
    loop = fut.get_loop()
    if _get_running_loop() is not loop:
        try:
            loop.call_soon_threadsafe(_settle, fut, err, msg)
        except RuntimeError:  # its loop is closed: no one can await it
            pass
        return
    if fut.done():
        return
    if err is None:
        fut.set_result(msg)
    else:
        fut.set_exception(KafkaException(err))


def _report_to(fut: asyncio.Future[Any]) -> Callable[[KafkaError | None, Any], None]:
    def report(err: KafkaError | None, msg: Any) -> None:
        _settle(fut, err, msg)

    return report


class ProducerBatchExecutor:
    """Runs a batch's ``produce_batch`` and the ``poll`` after it on ``executor``, off the loop."""

    def __init__(self, producer: Any, executor: concurrent.futures.Executor) -> None:
        self._producer = producer
        self._executor = executor

    async def execute_batch(
        self, topic: str, batch_messages: Sequence[dict[str, Any]], partition: int = UNASSIGNED
    ) -> int:
        """Queue the batch; a record refused at once has its callback called with the refusal.
        Returns the count of reports the ``poll(0)`` after it served."""
        messages = list(batch_messages)

        def produce_and_poll() -> int:
            self._producer.produce_batch(topic, messages, partition=partition)
            self._handle_partial_failures(messages)
            return int(self._producer.poll(0))

        return await asyncio.get_running_loop().run_in_executor(self._executor, produce_and_poll)

    async def flush_librdkafka_queue(self, timeout: float = -1) -> int:
        """The producer's ``flush(timeout)`` off the loop: the count of records still queued."""
        return int(await asyncio.get_running_loop().run_in_executor(self._executor, self._producer.flush, timeout))

    def _handle_partial_failures(self, batch_messages: list[dict[str, Any]]) -> None:
        """A record ``produce_batch`` refused gets no report: its callback is told here."""
        for message in batch_messages:
            error = message.get("_error")
            callback = message.get("callback")
            if error is None or callback is None:
                continue
            try:
                callback(error, None)
            except Exception:
                log.warning("A callback raised while told of a refused record", exc_info=True)
                raise


class ProducerBatchManager:
    """The buffer: records (dicts with ``topic``) each with its future, until flushed as batches."""

    def __init__(self, kafka_executor: ProducerBatchExecutor) -> None:
        self._kafka_executor = kafka_executor
        self._message_buffer: list[dict[str, Any]] = []
        self._buffer_futures: list[asyncio.Future[Any]] = []

    def add_message(self, msg_data: dict[str, Any], future: asyncio.Future[Any]) -> None:
        self._message_buffer.append(msg_data)
        self._buffer_futures.append(future)

    def get_buffer_size(self) -> int:
        return len(self._message_buffer)

    def is_buffer_empty(self) -> bool:
        return not self._message_buffer

    def clear_buffer(self) -> None:
        self._message_buffer.clear()
        self._buffer_futures.clear()

    def cancel_pending_futures(self) -> None:
        for future in self._buffer_futures:
            if not future.done():
                future.cancel()

    def create_batches(self, target_topic: str | None = None) -> list[MessageBatch]:
        """One batch per (topic, partition) in the order first seen (only ``target_topic``'s when
        given): each record without its ``topic``, with a ``callback`` that settles its future.
        The buffer is left as it is."""
        groups: dict[tuple[str, int], tuple[list[dict[str, Any]], list[asyncio.Future[Any]]]] = {}
        for msg_data, future in zip(self._message_buffer, self._buffer_futures, strict=True):
            key = (msg_data["topic"], msg_data.get("partition", UNASSIGNED))
            messages, futures = groups.setdefault(key, ([], []))
            messages.append(msg_data)
            futures.append(future)
        batches = []
        for (topic, partition), (messages, futures) in groups.items():
            if target_topic is not None and topic != target_topic:
                continue
            prepared = []
            for msg_data, future in zip(messages, futures, strict=True):
                record = {k: v for k, v in msg_data.items() if k != "topic"}
                record["callback"] = _report_to(future)
                prepared.append(record)
            batches.append(create_message_batch(topic, prepared, futures, partition=partition))
        return batches

    async def flush_buffer(self, target_topic: str | None = None) -> None:
        """Hand the buffered records (``target_topic``'s only, when given) to the executor. When a
        batch fails, its futures not yet settled fail with the error and every batch taken goes
        back to the buffer (as confluent-kafka's), the error raised."""
        if self.is_buffer_empty():
            return
        batches = self.create_batches(target_topic)
        if target_topic is None:
            self.clear_buffer()
        else:
            kept = [
                (m, f)
                for m, f in zip(self._message_buffer, self._buffer_futures, strict=True)
                if m["topic"] != target_topic
            ]
            self._message_buffer = [m for m, _ in kept]
            self._buffer_futures = [f for _, f in kept]
        try:
            for batch in batches:
                try:
                    await self._kafka_executor.execute_batch(batch.topic, batch.messages, batch.partition)
                except Exception as exc:
                    for future in batch.futures:
                        if not future.done():
                            future.set_exception(exc)
                    raise
        except Exception:
            self._add_batches_back_to_buffer(batches)
            raise

    def _add_batches_back_to_buffer(self, batches: list[MessageBatch]) -> None:
        for batch in batches:
            for message, future in zip(batch.messages, batch.futures, strict=True):
                msg_data = {"topic": batch.topic, "value": message.get("value"), "key": message.get("key")}
                msg_data.update({k: message[k] for k in _KEPT_ON_RETRY if k in message})
                self._message_buffer.append(msg_data)
                self._buffer_futures.append(future)


class BufferTimeoutManager:
    """Flushes the buffer (then the producer, without waiting) once ``timeout`` seconds pass with
    no activity; ``timeout`` 0 or less: never. Its task holds the manager weakly, so a manager no
    one holds stops it."""

    def __init__(
        self, batch_processor: ProducerBatchManager, kafka_executor: ProducerBatchExecutor, timeout: float
    ) -> None:
        self._batch_processor = batch_processor
        self._kafka_executor = kafka_executor
        self._timeout = timeout
        self._last_activity = time.time()
        self._timeout_task: asyncio.Task[None] | None = None
        self._running = False

    def start_timeout_monitoring(self) -> None:
        """Start the watching task on the running loop (nothing when the timeout is off)."""
        if not self._timeout or self._timeout <= 0:
            return
        self._running = True
        self._timeout_task = asyncio.create_task(_watch(weakref.ref(self)))

    def stop_timeout_monitoring(self) -> None:
        self._running = False
        if self._timeout_task is not None and not self._timeout_task.done():
            self._timeout_task.cancel()
            self._timeout_task = None

    def mark_activity(self) -> None:
        """Records were added, flushed or purged: the quiet period starts again."""
        self._last_activity = time.time()

    async def _flush_buffer_due_to_timeout(self) -> None:
        await self._batch_processor.flush_buffer()
        await self._kafka_executor.flush_librdkafka_queue(0)


async def _watch(ref: weakref.ref[BufferTimeoutManager]) -> None:
    """Check about twice per timeout (every 0.1 s to 1 s) whether the buffer has been quiet for
    the whole timeout, and flush it then; ends when the manager stops or is gone."""
    while True:
        manager = ref()
        if manager is None or not manager._running:
            return
        interval = max(0.1, min(1.0, manager._timeout / 2))
        del manager  # held only while looked at
        await asyncio.sleep(interval)
        manager = ref()
        if manager is None or not manager._running:
            return
        if time.time() - manager._last_activity >= manager._timeout:
            try:
                await manager._flush_buffer_due_to_timeout()
            except Exception:
                log.error("Flushing the buffer after its timeout failed", exc_info=True)
                raise
            manager.mark_activity()
        del manager
