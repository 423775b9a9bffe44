"""What the asyncio faces share: a blocking call run on a thread pool (for the rare calls that wait
on the network: committed offsets, watermarks, metadata, close), as confluent_kafka.aio does.

The module and function names are the ones confluent-kafka's own AIOConsumer tests patch
(``_AIOConsumer._common.async_call``), so those tests run against kafkawire unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TypeVar

T = TypeVar("T")


async def async_call(executor: Executor, job: Callable[[], T]) -> T:
    """Await ``job()`` run on ``executor``; the loop goes on serving other tasks meanwhile."""
    return await asyncio.wrap_future(executor.submit(job))
