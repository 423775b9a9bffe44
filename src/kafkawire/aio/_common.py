"""What the asyncio faces share: a blocking call run on a thread pool (for the rare calls that wait
on the network: committed offsets, watermarks, metadata, close), as confluent_kafka.aio does."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

T = TypeVar("T")


async def async_call(executor: Executor | None, blocking_task: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, functools.partial(blocking_task, *args, **kwargs))
