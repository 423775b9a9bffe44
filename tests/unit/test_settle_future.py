"""AIOProducer's delivery future settled from C (native_c/settle_futures.c's `_Delivery`) against
its pure-Python twin (producer/aio.py's `_PyDelivery`): the same outcome and return value on its
own loop (a result, an error, a cancelled future), from another thread (handed to its loop) and
with its loop closed (dropped); and served by serve_delivered without a call."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from kafkawire.base.model import Message
from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.native import native
from kafkawire.producer import aio

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
    assert issubclass(aio._Delivery, aio._PyDelivery)
    assert aio._Delivery.__call__ is not aio._PyDelivery.__call__
    assert issubclass(aio._DeliveryThenCallback, aio._Delivery)
    assert native is not None
    assert native.settling_future(aio._PyDelivery, None, None, None) is aio._Delivery  # one per process
    with pytest.raises(RuntimeError):
        native.settling_future(asyncio.Future, None, None, None)
