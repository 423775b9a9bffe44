"""What the asyncio faces share: a blocking call run on a thread pool (for the rare calls that wait
on the network: committed offsets, watermarks, metadata, close), as confluent_kafka.aio does; and
confluent-kafka's helpers that run a client's callbacks and logger on an event loop.

The module and function names are the ones confluent-kafka's own AIOConsumer tests patch
(``_AIOConsumer._common.async_call``), so those tests run against kafkawire unchanged."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

T = TypeVar("T")


async def async_call(executor: Executor, job: Callable[[], T]) -> T:
    """Await ``job()`` run on ``executor``; the loop goes on serving other tasks meanwhile."""
    return await asyncio.wrap_future(executor.submit(job))


class AsyncLogger:
    """A logger whose records are written on ``loop`` (a client's threads log through it, so the
    handlers run where the application's other asyncio code does)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, logger: logging.Logger) -> None:
        self.loop = loop
        self.logger = logger

    def log(self, *args: Any, **kwargs: Any) -> None:
        self.loop.call_soon_threadsafe(functools.partial(self.logger.log, *args, **kwargs))


def wrap_callback(
    loop: asyncio.AbstractEventLoop,
    callback: Callable[..., Any],
    edit_args: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None,
    edit_kwargs: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Callable[..., Any]:
    """A plain function for a thread other than ``loop``'s that runs the coroutine function
    ``callback`` on ``loop`` and returns its result (``edit_args``/``edit_kwargs`` rewrite the
    arguments first)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if edit_args:
            args = edit_args(args)
        if edit_kwargs:
            kwargs = edit_kwargs(kwargs)

        async def on_loop() -> Any:
            return await callback(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(on_loop(), loop).result()

    return call


def wrap_conf_callback(loop: asyncio.AbstractEventLoop, conf: dict[str, Any], name: str) -> None:
    """``conf[name]``, if set, replaced by `wrap_callback` of it."""
    if name in conf:
        conf[name] = wrap_callback(loop, conf[name])


def wrap_conf_logger(loop: asyncio.AbstractEventLoop, conf: dict[str, Any]) -> None:
    """``conf["logger"]``, if set, replaced by an `AsyncLogger` over it."""
    if "logger" in conf:
        conf["logger"] = AsyncLogger(loop, conf["logger"])


def wrap_common_callbacks(loop: asyncio.AbstractEventLoop, conf: dict[str, Any]) -> None:
    """The callbacks every client has (``error_cb``, ``throttle_cb``, ``stats_cb``) and the logger,
    made to run on ``loop``."""
    for name in ("error_cb", "throttle_cb", "stats_cb"):
        wrap_conf_callback(loop, conf, name)
    wrap_conf_logger(loop, conf)
