"""`AIOConsumer`: the consumer for asyncio, shaped like ``confluent_kafka.aio.AIOConsumer``.

``await poll()``/``consume()``/``commit()`` run on the event loop itself, with no thread-pool hop:
they take what the fetch engine already holds and, when nothing is there, await a wake-up that the
consumer's callback queue sends the loop (``call_soon_threadsafe``) when records or callbacks
arrive. Callbacks (rebalance, ``on_commit``, ``error_cb``, ``throttle_cb``, ``stats_cb``) are served
on the loop inside those calls; each may be a coroutine function (as confluent-kafka's must be), its
coroutine awaited in turn before the call returns; a rebalance callback receives the AIOConsumer.
``unsubscribe()`` returns at once: the next ``poll()`` serves the revocation (``on_revoke``, the
automatic commit, ``on_commit`` once it is answered), as confluent-kafka's does, with no wait on
the loop. Calls that wait on the network (``committed``, ``get_watermark_offsets``,
``offsets_for_times``, ``list_topics``, ``close``) run on a small thread pool, as confluent-kafka
runs every call (``max_workers``, 100 by default as there, ``executor``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import kafkawire

from ..base.model import ClusterMetadata, ConsumerGroupMetadata, Message, TopicPartition
from ..client.dropped import Kept
from ..client.executor import CallbackExecutor
from ..client.running_loop import running_loop
from ..consumer.consumer import engine_of
from . import _common


class AIOConsumer:
    def __init__(
        self,
        consumer_conf: Mapping[str, Any],
        max_workers: int = 100,
        executor: concurrent.futures.Executor | None = None,
        **kwargs: Any,
    ) -> None:
        self._own_executor = executor is None
        if executor is None:
            if max_workers < 1:
                # same text as confluent-kafka: its tests match on it
                raise ValueError("max_workers must be at least 1")
            executor = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers)
        self.executor = executor
        self._reports = CallbackExecutor(background=False, owner="consumer")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Event | None = None
        self._running_loop = running_loop()  # this thread's loop, asked of asyncio once per loop run
        self._kept = kept = Kept()  # what the IO side calls back here, held here alone (client/dropped.py)
        self._reports.hand_over(kept.hold("wake", self._wake))
        # The coroutines of async callbacks, in the order they were called, awaited in _serve; a
        # rebalance callback's (True) reports its end to the engine.
        self._pending: list[tuple[Any, bool]] = []
        conf, kwargs = self._awaiting(consumer_conf), self._awaiting(kwargs)
        self._consumer = kafkawire.Consumer(conf, _executor=self._reports, **kwargs)
        self._engine = engine_of(self._consumer)  # commit() awaits the commit's futures on the loop
        self._engine.await_callbacks(kept.hold("await", lambda awaitable: self._pending.append((awaitable, True))))

    def _awaiting(self, conf: Mapping[str, Any]) -> Any:
        """``conf`` with its callbacks' coroutines (an ``async def`` on_commit, ...) awaited by _serve
        (anything but a dict goes on as it is, for the Consumer to refuse)."""
        if not isinstance(conf, Mapping):
            return conf
        out = dict(conf)
        for name in _SERVED_CALLBACKS:
            callback = out.get(name)
            if callable(callback):
                out[name] = functools.partial(self._called, callback)
        return out

    def _called(self, callback: Callable[..., Any], *args: Any) -> None:
        result = callback(*args)
        if inspect.isawaitable(result):
            self._pending.append((result, False))

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` on the thread pool: for Consumer calls that wait on the network."""
        return await _common.async_call(self.executor, functools.partial(fn, *args, **kwargs))

    # --- consuming on the loop ------------------------------------------------------------------

    async def poll(self, timeout: float | None = None) -> Message | None:
        found = await self._until(lambda: self._consumer.poll(0), timeout)
        return found  # type: ignore[no-any-return]

    async def consume(self, num_messages: int = 1, timeout: float | None = None) -> list[Message]:
        found = await self._until(lambda: self._consumer.consume(num_messages, 0) or None, timeout)
        return found or []

    async def consume_arrow(self, max_records: int = 1000, timeout: float | None = None) -> Any:
        """`Consumer.consume_arrow` on the loop: a pyarrow RecordBatch, or None once ``timeout`` passed."""
        return await self._until(lambda: self._consumer.consume_arrow(max_records, 0), timeout)

    async def _until(self, take: Callable[[], Any], timeout: float | None) -> Any:
        """Serve callbacks and take, until something is taken or ``timeout`` s passed."""
        loop, ready = self._on_loop()
        deadline = None if timeout is None or timeout < 0 else loop.time() + timeout
        while True:
            ready.clear()
            await self._serve()
            found = take()
            if found is not None:
                return found
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return None
            try:
                await asyncio.wait_for(ready.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def _serve(self) -> None:
        """Serve the queued callbacks; a rebalance callback's coroutine is awaited to its end before
        its default applies (none when it assigned itself) and before the next change is served."""
        self._reports.drain()
        engine = self._engine
        while self._pending:
            pending, rebalance = self._pending.pop(0)
            if not rebalance:
                await pending  # its exception comes out of this call, as a plain callback's does
                continue
            try:
                await pending
            except BaseException as exc:  # raised out of this call once the default was applied
                engine.callback_done(exc)
            else:
                engine.callback_done(None)

    def _on_loop(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Event]:
        """The loop calling, and the event that wakes its waiting poll (new when the loop is)."""
        loop = self._running_loop()
        if self._loop is not loop or self._ready is None:
            self._loop, self._ready = loop, asyncio.Event()
        return loop, self._ready

    def _wake(self) -> None:
        """Something was queued (any thread): wake a waiting poll on its loop."""
        loop, ready = self._loop, self._ready
        if loop is not None and ready is not None:
            try:
                loop.call_soon_threadsafe(ready.set)
            except RuntimeError:  # the loop is closed
                pass

    def _bridge(self, callback: Any) -> Any:
        """A rebalance callback called with this AIOConsumer. A coroutine it returns goes back to
        the engine, for the poll serving it to await (`_serve`); called off the loop (close and
        unsubscribe run on the thread pool), it is run on the loop and waited for here."""
        if callback is None:
            return None

        def call(_consumer: Any, partitions: list[TopicPartition]) -> Any:
            result = callback(self, partitions)
            if not inspect.isawaitable(result):
                return None
            loop = self._loop
            try:
                on_loop = asyncio.get_running_loop() is loop
            except RuntimeError:
                on_loop = False
            if on_loop or loop is None:
                return result
            asyncio.run_coroutine_threadsafe(_awaited(result), loop).result()
            return None

        return call

    # --- the rest of the Consumer API -------------------------------------------------------------

    async def subscribe(
        self, topics: list[str], on_assign: Any = None, on_revoke: Any = None, on_lost: Any = None
    ) -> None:
        self._on_loop()
        self._consumer.subscribe(topics, self._bridge(on_assign), self._bridge(on_revoke), self._bridge(on_lost))

    async def unsubscribe(self) -> None:
        self._on_loop()
        self._consumer.unsubscribe()

    async def commit(
        self, message: Message | None = None, offsets: list[TopicPartition] | None = None, asynchronous: bool = True
    ) -> list[TopicPartition] | None:
        engine = self._engine
        engine.check_open()
        wanted = engine.offsets_to_commit(message, offsets)
        if asynchronous or not wanted:
            return engine.commit(wanted, asynchronous)  # at once (or _NO_OFFSET)
        op = engine.start_commit(wanted)
        await asyncio.gather(*(asyncio.wrap_future(f) for f in op.futures.values()), return_exceptions=True)
        return engine.commit_outcome(wanted, op.futures)

    async def assign(self, partitions: list[TopicPartition]) -> None:
        self._consumer.assign(partitions)

    async def unassign(self) -> None:
        self._consumer.unassign()

    async def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        self._consumer.incremental_assign(partitions)

    async def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        self._consumer.incremental_unassign(partitions)

    async def assignment(self, *args: Any, **kwargs: Any) -> list[TopicPartition]:
        return self._consumer.assignment(*args, **kwargs)

    async def store_offsets(self, message: Message | None = None, offsets: list[TopicPartition] | None = None) -> None:
        self._consumer.store_offsets(message, offsets)

    async def seek(self, partition: TopicPartition) -> None:
        self._consumer.seek(partition)

    async def pause(self, partitions: list[TopicPartition]) -> None:
        self._consumer.pause(partitions)

    async def resume(self, partitions: list[TopicPartition]) -> None:
        self._consumer.resume(partitions)

    async def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        return self._consumer.position(partitions)

    async def consumer_group_metadata(self) -> ConsumerGroupMetadata:
        return self._consumer.consumer_group_metadata()

    async def memberid(self) -> str | None:
        return self._consumer.memberid()

    async def set_sasl_credentials(self, username: str, password: str) -> None:
        self._consumer.set_sasl_credentials(username, password)

    async def committed(self, partitions: list[TopicPartition], timeout: float | None = None) -> list[TopicPartition]:
        return await self._call(self._consumer.committed, partitions, timeout)  # type: ignore[no-any-return]

    async def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float | None = None, cached: bool = False
    ) -> tuple[int, int] | None:
        if cached:
            return self._consumer.get_watermark_offsets(partition, cached=True)
        return await self._call(self._consumer.get_watermark_offsets, partition, timeout)  # type: ignore[no-any-return]

    async def offsets_for_times(
        self, partitions: list[TopicPartition], timeout: float | None = None
    ) -> list[TopicPartition]:
        return await self._call(self._consumer.offsets_for_times, partitions, timeout)  # type: ignore[no-any-return]

    async def list_topics(self, topic: str | None = None, timeout: float = -1) -> ClusterMetadata:
        return await self._call(self._consumer.list_topics, topic, timeout)  # type: ignore[no-any-return]

    async def cluster_id(self, timeout: float = -1) -> str | None:
        """`Consumer.cluster_id` on the pool (it may wait for the first broker's answer)."""
        return await self._call(self._consumer.cluster_id, timeout)  # type: ignore[no-any-return]

    async def close(self) -> None:
        """Revoke (callbacks), commit, leave the group and stop; then the thread pool."""
        self._on_loop()
        await self._call(self._consumer.close)
        await self._serve()
        if self._own_executor:
            self.executor.shutdown(wait=False)

    async def __aenter__(self) -> AIOConsumer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


# The configuration's callbacks served from the callback queue (rebalance ones are given to subscribe()).
_SERVED_CALLBACKS = ("on_commit", "error_cb", "throttle_cb", "stats_cb")


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
