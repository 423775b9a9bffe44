"""What asyncio alone costs kafkawire-aio's loop: the bound on ``AIOProducer.produce()``'s target.

``python -m bench.asyncio_floor [--records 1000000]``: `bench.workload.await_each` (``await
produce()`` per record, the delivery futures gathered in groups of 10,000) over a stand-in whose
``produce`` is a coroutine returning a loop future, settled 1,000 at a time from a loop callback, as
delivery reports arrive per produced batch. No broker, no encoding, no thread: what is left is the
coroutine, the future and ``gather`` (its done-callbacks, one loop handle per future). Prints the
CPU microseconds and records per second of that floor, with the garbage collector on (as in the
benchmark) and off, and the same loop awaiting each future in order instead of gathering. Any
producer that returns a future per record costs at least this under that loop; divide
confluent-kafka's ``produce()`` msg/s in bench/RESULTS.md by the floor's to see the best ratio the
target could reach.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time

from bench.scenarios import parse_scenario
from bench.workload import Counts, Workload, await_each

SETTLE_EVERY = 1_000  # futures settled per loop callback, as one produced batch's reports


class StandIn:
    """``produce`` as AIOProducer's shape: a coroutine returning the record's delivery future."""

    def __init__(self, loop: asyncio.AbstractEventLoop, records: int) -> None:
        self._loop = loop
        self._left = records
        self._unsettled: list[asyncio.Future[None]] = []

    async def produce(self, topic: str, value: bytes, key: bytes | None = None) -> asyncio.Future[None]:
        fut = self._loop.create_future()
        self._unsettled.append(fut)
        self._left -= 1
        if len(self._unsettled) >= SETTLE_EVERY or not self._left:
            self._loop.call_soon(_settle, self._unsettled)
            self._unsettled = []
        return fut


def _settle(futures: list[asyncio.Future[None]]) -> None:
    for fut in futures:
        fut.set_result(None)


async def _await_in_order(producer: StandIn, w: Workload, counts: Counts) -> None:
    """The same records, each group's futures awaited one by one instead of gathered."""
    futures: list[asyncio.Future[None]] = []
    for i in range(w.records):
        futures.append(await producer.produce("t", w.value(i), w.key(i)))
        if len(futures) >= 10 * SETTLE_EVERY or i == w.records - 1:
            for fut in futures:
                await fut
                counts.report(None)
            futures = []


async def _floor(records: int, gathered: bool) -> tuple[float, float]:
    w = Workload(parse_scenario("100b-keyless-acks1-none", False), records)
    counts = Counts()
    stand_in = StandIn(asyncio.get_running_loop(), records)
    cpu, wall = time.process_time(), time.perf_counter()
    if gathered:
        await await_each(stand_in.produce, "t", w, counts)
    else:
        await _await_in_order(stand_in, w, counts)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if counts.acked != records:
        raise RuntimeError(f"{counts.acked} of {records} futures settled")
    return cpu / records * 1e6, records / wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    print("loop                              GC   CPU us/record   records/s")
    for gathered in (True, False):
        for collect in (True, False):
            if collect:
                gc.enable()
            else:
                gc.disable()
            us, rate = asyncio.run(_floor(args.records, gathered))
            gc.enable()
            name = "await produce(), gather groups" if gathered else "await produce(), await each"
            print(f"{name:34}{'on ' if collect else 'off'}  {us:13.2f}   {rate:11,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
