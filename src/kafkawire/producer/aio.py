"""`AIOProducer`: the producer for asyncio, shaped like ``confluent_kafka.aio.AIOProducer``.

``await produce(...)`` queues the record at once (no thread pool per call) and returns an
asyncio future of the delivered `Message`. Delivery reports come from the producer's report
thread and are handed to the event loop in batches: one ``call_soon_threadsafe`` wakes the loop
for all the reports that arrived since its last wake-up, not one per record. When the buffer is full,
``produce`` awaits room (up to ``max.block.ms`` when set) instead of raising ``BufferError``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from ..errors import KafkaError, KafkaException
from ..model import ClusterMetadata, Message
from .config import parse_producer_config
from .producer import Producer

_ROOM_POLL = 0.002  # seconds between looks for buffer room while awaiting it


class AIOProducer:
    def __init__(self, producer_conf: Mapping[str, Any], **kwargs: Any) -> None:
        conf = {**producer_conf, "delivery.reports": "background"}
        # Checked like every other option (_INVALID_ARG naming the key and the range); the
        # producer underneath never blocks a thread: this face awaits room instead.
        checked = parse_producer_config({**conf, **{k: v for k, v in kwargs.items() if k != "logger"}})
        self._max_block = checked.max_block_ms / 1000
        conf["max.block.ms"] = 0
        kwargs.pop("max.block.ms", None)
        self._producer = Producer(conf, **kwargs)
        self._reports: dict[asyncio.AbstractEventLoop, _LoopReports] = {}

    def _reports_for(self, loop: asyncio.AbstractEventLoop) -> _LoopReports:
        reports = self._reports.get(loop)
        if reports is None:
            reports = self._reports[loop] = _LoopReports(loop)
        return reports

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
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Message] = loop.create_future()
        report = partial(self._reports_for(loop).add, fut, on_delivery)
        deadline = time.monotonic() + self._max_block if self._max_block > 0 else None
        while True:
            try:
                self._producer.produce(topic, value, key, partition, report, timestamp, headers)
                return fut
            except BufferError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(_ROOM_POLL)

    async def flush(self, timeout: float = -1) -> int:
        return await asyncio.to_thread(self._producer.flush, timeout)

    async def purge(self, in_queue: bool = True, in_flight: bool = True) -> None:
        await asyncio.to_thread(self._producer.purge, in_queue, in_flight)

    async def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        return await asyncio.to_thread(self._producer.list_topics, topic, timeout)

    async def close(self) -> None:
        await asyncio.to_thread(self._producer.close)

    def __len__(self) -> int:
        return len(self._producer)

    async def __aenter__(self) -> AIOProducer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class _LoopReports:
    """Delivery reports on their way to one event loop: the report thread appends, and only the
    first report after the loop last drained schedules a drain (a wake-up costs a syscall)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._pending: deque[tuple[asyncio.Future[Message], Callable[..., Any] | None, KafkaError | None, Message]]
        self._pending = deque()
        self._scheduled = False

    def add(
        self, fut: asyncio.Future[Message], on_delivery: Callable[..., Any] | None, err: KafkaError | None, msg: Message
    ) -> None:
        with self._lock:
            self._pending.append((fut, on_delivery, err, msg))
            if self._scheduled:
                return
            self._scheduled = True
        self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            batch, self._pending = self._pending, deque()
            self._scheduled = False
        for fut, on_delivery, err, msg in batch:
            _settle(fut, err, msg)
            if on_delivery is not None:
                try:
                    on_delivery(err, msg)
                except Exception as exc:  # as the loop does for a failing callback: report, go on
                    self._loop.call_exception_handler(
                        {"message": "exception in an AIOProducer on_delivery callback", "exception": exc}
                    )


def _settle(fut: asyncio.Future[Message], err: KafkaError | None, msg: Message) -> None:
    if fut.done():
        return
    if err is None:
        fut.set_result(msg)
    else:
        fut.set_exception(KafkaException(err))
