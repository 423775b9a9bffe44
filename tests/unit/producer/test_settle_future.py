"""AIOProducer's delivery future settled from C (native_c/settle_futures.c's `_Delivery`) against
its pure-Python twin (producer/aio.py's `_PyDelivery`): the same outcome and return value on its
own loop (a result, an error, a cancelled future), from another thread (handed to its loop) and
with its loop closed (dropped); and served by serve_delivered without a call, which asks for the
running loop once per batch: futures of two loops and a callback running a loop of its own in one
batch each land where they belong."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from kafkawire.base.model import Message
from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.native import native
from kafkawire.producer import aio
from kafkawire.producer.delivery import serve_delivered
from kafkawire.producer.pending import PendingMessage

needs_native = pytest.mark.skipif(native is None, reason="the C extension is not built or switched off")
KINDS = [aio._PyDelivery, aio._Delivery]
REPORT = Message("t", 0, 5, None, b"v")


def outcome(fut: asyncio.Future[Any]) -> Any:
    if fut.cancelled():
        return "cancelled"
    if not fut.done():
        return "pending"
    exc = fut.exception()
    return ("error", exc.args[0].code()) if isinstance(exc, KafkaException) else ("result", fut.result())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("err", [None, KafkaError(KafkaError._MSG_TIMED_OUT)])
def test_on_its_loop(kind: type, err: KafkaError | None) -> None:
    async def main() -> Any:
        fut = kind(loop=asyncio.get_running_loop())
        return fut(err, REPORT), outcome(fut)

    settled, got = asyncio.run(main())
    assert settled is True
    assert got == (("result", REPORT) if err is None else ("error", KafkaError._MSG_TIMED_OUT))


@pytest.mark.parametrize("kind", KINDS)
def test_cancelled_is_left_alone(kind: type) -> None:
    async def main() -> Any:
        fut = kind(loop=asyncio.get_running_loop())
        fut.cancel()
        return fut(None, REPORT), outcome(fut)

    assert asyncio.run(main()) == (True, "cancelled")


@pytest.mark.parametrize("kind", KINDS)
def test_from_another_thread_it_settles_on_its_loop(kind: type) -> None:
    async def main() -> Any:
        loop = asyncio.get_running_loop()
        fut = kind(loop=loop)
        returned: list[Any] = []
        thread = threading.Thread(target=lambda: returned.append(fut(None, REPORT)))
        thread.start()
        thread.join()
        before = outcome(fut)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return returned, before, outcome(fut)

    assert asyncio.run(main()) == ([False], "pending", ("result", REPORT))


@pytest.mark.parametrize("kind", KINDS)
def test_its_loop_closed_drops_it(kind: type) -> None:
    loop = asyncio.new_event_loop()
    fut = kind(loop=loop)
    loop.close()
    assert fut(None, REPORT) is False
    assert outcome(fut) == "pending"


@needs_native
def test_the_c_type_settles_in_c_and_a_subclass_keeps_its_own_call() -> None:
    assert aio._Delivery is not aio._PyDelivery
    assert aio._Delivery.__bases__ == (asyncio.Future,)
    assert aio._Delivery.__call__ is not aio._PyDelivery.__call__
    assert issubclass(aio._DeliveryThenCallback, aio._Delivery)
    assert native is not None
    assert native.settling_future(asyncio.Future, None, None, None) is aio._Delivery  # one per process
    with pytest.raises(RuntimeError):
        native.settling_future(aio._PyDelivery, None, None, None)


@pytest.mark.parametrize("kind", [*KINDS, aio._DeliveryThenCallback])
def test_a_future_freed_keeps_what_asyncio_does_for_its_own(kind: type) -> None:
    """The C type frees and traverses its futures with asyncio's own functions: an error never
    retrieved is still reported when one is freed, a cycle through one is still collected, and
    its type is let go once per future made."""
    import gc
    import sys
    import weakref

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        reported: list[Any] = []
        loop.set_exception_handler(lambda _loop, context: reported.append(context["message"]))
        fut = kind(loop=loop)
        fut.set_exception(KafkaException(KafkaError(KafkaError._MSG_TIMED_OUT)))
        del fut
        gc.collect()
        cyclic = kind(loop=loop)
        cyclic.itself = cyclic
        gone = weakref.ref(cyclic)
        del cyclic
        gc.collect()
        before = sys.getrefcount(kind)
        for _ in range(1_000):
            kind(loop=loop)
        return reported, gone() is None, sys.getrefcount(kind) - before

    reported, collected, type_refs = asyncio.run(main())
    assert reported == [f"{kind.__name__} exception was never retrieved"]
    assert collected
    assert type_refs == 0


SERVES = [pytest.param(serve_delivered, PendingMessage, aio._PyDelivery, id="python")]
if native is not None:
    SERVES.append(pytest.param(native.serve_delivered, native.PendingMessage, aio._Delivery, id="c"))


def _batch(pending: type, callbacks: list[Any]) -> list[Any]:
    return [pending("t", 0, None, b"v", None, 1, cb, None, 0.0) for cb in callbacks]


def _held(loop: asyncio.AbstractEventLoop) -> threading.Event:
    """``loop`` (running on another thread) kept busy until the returned event is set: what is
    handed to it meanwhile waits, so a future still pending after serving was handed over."""
    release = threading.Event()
    loop.call_soon_threadsafe(release.wait, 5)
    return release


def _settled_on(
    loop: asyncio.AbstractEventLoop, futures: list[asyncio.Future[Any]], release: threading.Event
) -> list[Any]:
    """Each future's outcome once ``loop``, let go, settled it."""
    release.set()
    asyncio.run_coroutine_threadsafe(asyncio.wait(futures), loop).result(5)
    return [outcome(f) for f in futures]


@pytest.fixture
def other_loop() -> Any:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


@pytest.mark.parametrize(("serve", "pending", "kind"), SERVES)
def test_one_batch_settles_each_future_on_its_own_loop(serve: Any, pending: type, kind: type, other_loop: Any) -> None:
    """Served on loop A's thread: A's futures are settled during the call, B's (B running on another
    thread) are handed to B, with a plain callback between them."""
    calls: list[Any] = []
    release = _held(other_loop)

    async def main() -> Any:
        mine = [kind(loop=asyncio.get_running_loop()) for _ in range(2)]
        theirs = [kind(loop=other_loop) for _ in range(2)]
        callbacks = [mine[0], theirs[0], lambda err, msg: calls.append(msg.offset()), theirs[1], mine[1]]
        _, served, _, exc = serve(_batch(pending, callbacks), 0, 7, None, 0, 1.0, Message)
        return served, exc, [outcome(f) for f in mine], theirs

    served, exc, mine, theirs = asyncio.run(main())
    assert (served, exc, calls) == (5, None, [9])
    assert [(o[0], o[1].offset()) for o in mine] == [("result", 7), ("result", 11)]
    assert [outcome(f) for f in theirs] == ["pending", "pending"]
    settled = _settled_on(other_loop, theirs, release)
    assert [(o[0], o[1].offset()) for o in settled] == [("result", 8), ("result", 10)]


@pytest.mark.parametrize(("serve", "pending", "kind"), SERVES)
def test_a_callback_running_a_loop_of_its_own_changes_nothing(
    serve: Any, pending: type, kind: type, other_loop: Any
) -> None:
    """Served with no loop running (a sync poll()): a callback that runs a loop to its end on this
    thread between two futures of loop B: both are still handed to B, not settled here."""
    ran: list[Any] = []
    release = _held(other_loop)
    theirs = [kind(loop=other_loop) for _ in range(2)]
    callbacks = [theirs[0], lambda err, msg: ran.append(asyncio.run(asyncio.sleep(0, "ran"))), theirs[1]]
    _, served, _, exc = serve(_batch(pending, callbacks), 0, 0, None, 0, 1.0, Message)
    assert (served, exc, ran) == (3, None, ["ran"])
    assert [outcome(f) for f in theirs] == ["pending", "pending"]
    assert [o[0] for o in _settled_on(other_loop, theirs, release)] == ["result", "result"]
