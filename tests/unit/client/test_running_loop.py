"""The asyncio faces' running-loop lookup (native_c/running_loop.c's `RunningLoop`) against its
pure-Python twin (client/running_loop.py's `PyRunningLoop`, which asks asyncio every time): each answers
what ``asyncio.get_running_loop()`` answers at that moment, whatever started, stopped, moved or
was set running on the thread since the last call, on several threads at once, and in a forked
child."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any

import pytest

from kafkawire.client.running_loop import PyRunningLoop
from kafkawire.native import native

KINDS = [pytest.param(PyRunningLoop, id="python")]
if native is not None:
    KINDS.append(pytest.param(native.RunningLoop, id="c"))


def asked(running: Any) -> Any:
    """``running()``'s answer, and asyncio's, or the error type each raised."""
    try:
        got = running()
    except RuntimeError:
        got = RuntimeError
    try:
        expected = asyncio.get_running_loop()
    except RuntimeError:
        expected = RuntimeError
    return got, expected


@pytest.mark.parametrize("kind", KINDS)
def test_outside_a_loop_it_raises_as_asyncio_does(kind: type) -> None:
    running = kind(asyncio.get_running_loop)
    with pytest.raises(RuntimeError):
        running()

    async def main() -> Any:
        return running(), asyncio.get_running_loop()

    got, loop = asyncio.run(main())
    assert got is loop
    with pytest.raises(RuntimeError):  # the loop it answered last has stopped
        running()
    with pytest.raises(TypeError):
        running(1)


@pytest.mark.parametrize("kind", KINDS)
def test_each_loop_run_after_another_on_one_thread_is_answered(kind: type) -> None:
    running = kind(asyncio.get_running_loop)

    async def main() -> Any:
        return [asked(running) for _ in range(3)]

    loops = []
    for _ in range(4):
        answers = asyncio.run(main())
        assert all(got is expected for got, expected in answers)
        loops.append(answers[0][0])
    assert len({id(loop) for loop in loops}) == 4


@pytest.mark.parametrize("kind", KINDS)
def test_a_loop_set_running_inside_another_is_answered(kind: type) -> None:
    """As nest_asyncio runs a second loop inside a callback of the first, and restores it after."""
    running = kind(asyncio.get_running_loop)
    inner = asyncio.new_event_loop()

    async def main() -> Any:
        outer = running()
        asyncio.events._set_running_loop(inner)
        try:
            during = asked(running)
        finally:
            asyncio.events._set_running_loop(outer)
        return outer, during, asked(running)

    try:
        outer, during, after = asyncio.run(main())
    finally:
        inner.close()
    assert during == (inner, inner)
    assert after == (outer, outer)


@pytest.mark.parametrize("kind", KINDS)
def test_threads_running_loops_at_once_each_get_their_own(kind: type) -> None:
    """One lookup object, three threads each running a loop, calls interleaved: each thread is
    answered its own loop every time."""
    running = kind(asyncio.get_running_loop)
    barrier = threading.Barrier(3)
    wrong: list[Any] = []

    async def spin() -> None:
        mine = asyncio.get_running_loop()
        for i in range(2_000):
            if running() is not mine:
                wrong.append((threading.get_ident(), i))
            if i % 50 == 0:
                await asyncio.sleep(0)

    def thread() -> None:
        barrier.wait()
        asyncio.run(spin())

    threads = [threading.Thread(target=thread) for _ in range(3)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads interleave between calls
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert wrong == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_loop_that_moved_to_another_thread_is_not_answered_here(kind: type) -> None:
    """The loop this thread ran first is running on another thread while this one runs a second:
    here the second is answered, there the first."""
    running = kind(asyncio.get_running_loop)
    first = asyncio.new_event_loop()
    second = asyncio.new_event_loop()
    try:

        async def ask() -> Any:
            return asked(running)

        assert first.run_until_complete(ask()) == (first, first)
        moved = threading.Event()
        release = threading.Event()
        there: list[Any] = []

        async def elsewhere() -> None:
            there.append(asked(running))
            moved.set()
            await asyncio.get_running_loop().run_in_executor(None, release.wait, 5)
            there.append(asked(running))

        other = threading.Thread(target=first.run_until_complete, args=(elsewhere(),))
        other.start()
        assert moved.wait(5)
        here = second.run_until_complete(ask())
        release.set()
        other.join()
        assert here == (second, second)
        assert there == [(first, first), (first, first)]
    finally:
        first.close()
        second.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
@pytest.mark.parametrize("kind", KINDS)
def test_a_forked_child_is_answered_as_asyncio_answers_it(kind: type) -> None:
    running = kind(asyncio.get_running_loop)

    async def main() -> Any:
        running()  # remembered in the parent
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child, still inside the parent's loop's callback
            got, expected = asked(running)
            os.write(write, b"same" if got is expected else repr((got, expected)).encode())
            os._exit(0)
        os.close(write)
        answer = os.read(read, 200)
        os.close(read)
        os.waitpid(pid, 0)
        return answer

    assert asyncio.run(main()) == b"same"


@pytest.mark.skipif(native is None, reason="the C extension is not built or switched off")
def test_asyncio_is_asked_again_only_when_the_thread_s_loop_may_have_changed() -> None:
    """On 3.10/3.11 (whose lookup makes a system call) once per loop run; from 3.12 on, each time."""
    assert native is not None
    calls: list[None] = []

    def ask() -> asyncio.AbstractEventLoop:
        calls.append(None)
        return asyncio.get_running_loop()

    running = native.RunningLoop(ask)

    async def main() -> None:
        for _ in range(100):
            running()

    asyncio.run(main())
    asyncio.run(main())
    assert len(calls) == (2 if sys.version_info < (3, 12) else 200)
