"""`RunningLoop`: ``asyncio.get_running_loop()`` for the asyncio faces, asked once per loop run.

Python 3.10 and 3.11 make a system call in every ``get_running_loop()`` (``getpid()``, their
check that a forked child does not use its parent's loop): a third of ``AIOProducer.produce()``'s
own time. The C `RunningLoop` (native_c/running_loop.c) answers from its last lookup while the
thread's loop has not started, stopped or changed since; `PyRunningLoop` is its twin, which asks
asyncio every time. Each face keeps one (it holds the last loop it answered, as the face does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..native import native


class PyRunningLoop:
    """``get_running_loop()`` called through an object: the pure-Python twin of the C type."""

    __slots__ = ("_get_running_loop",)

    def __init__(self, get_running_loop: Callable[[], asyncio.AbstractEventLoop]) -> None:
        self._get_running_loop = get_running_loop

    def __call__(self) -> asyncio.AbstractEventLoop:
        return self._get_running_loop()


RunningLoop = PyRunningLoop if native is None else native.RunningLoop


def running_loop() -> Callable[[], asyncio.AbstractEventLoop]:
    """A new lookup of this thread's running loop, for one face to keep."""
    return RunningLoop(asyncio.get_running_loop)
