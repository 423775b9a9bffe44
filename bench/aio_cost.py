"""What ``AIOProducer.produce()`` costs per record against the asyncio floor, in one process.

``python -m bench.aio_cost [--records 300000] [--rounds 3]``: starts Tansu, then per round runs
bench.asyncio_floor's loop over its stand-in and kafkawire-aio's loop (`bench.workload.await_each`
over ``AIOProducer.produce``, the benchmark's configuration) on a fresh 4-partition topic, and
prints each one's CPU microseconds per record: the process's (all threads) and the main
thread's (``time.thread_time``: the event loop's own). The ratio to the floor is the target of
issue 41 (within 1.5x). CPU time, not throughput: it holds on a loaded host. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid

from bench.asyncio_floor import StandIn
from bench.run import create_topic
from bench.scenarios import parse_scenario
from bench.workload import Counts, Workload, await_each, librdkafka_style_conf


async def _timed(send_all: object, records: int) -> tuple[float, float]:
    cpu, main = time.process_time(), time.thread_time()
    await send_all  # type: ignore[misc]
    return (time.process_time() - cpu) / records * 1e6, (time.thread_time() - main) / records * 1e6


async def floor(records: int) -> tuple[float, float]:
    w = Workload(parse_scenario("100b-keyless-acks1-none", False), records)
    counts = Counts()
    stand_in = StandIn(asyncio.get_running_loop(), records)
    out = await _timed(await_each(stand_in.produce, "t", w, counts), records)
    assert counts.acked == records, counts.acked
    return out


async def aio(bootstrap: str, records: int) -> tuple[float, float]:
    from kafkawire import AIOProducer

    sc = parse_scenario("100b-keyless-acks1-none", False)
    topic = f"aio-cost-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 4)
    w = Workload(sc, records)
    counts = Counts()
    producer = AIOProducer(librdkafka_style_conf(sc, bootstrap, None))
    await producer.list_topics(topic, 10)
    out = await _timed(await_each(producer.produce, topic, w, counts), records)
    await producer.close()
    if counts.acked != records:
        raise RuntimeError(f"{counts.acked} of {records} acknowledged ({counts.failed} failed: {counts.first_error})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from kafkawire import AIOProducer  # noqa: F401  (before the first floor: the same heap for both)
    from kafkawire.local_broker import TansuBroker

    with TansuBroker() as tansu:
        for _ in range(args.rounds):
            f_all, f_main = asyncio.run(floor(args.records))
            a_all, a_main = asyncio.run(aio(tansu.bootstrap, args.records))
            print(
                f"floor {f_all:.2f} us (main {f_main:.2f}); AIOProducer.produce() {a_all:.2f} us (main {a_main:.2f}):"
                f" {a_all / f_all:.2f}x the floor (main thread {a_main / f_main:.2f}x)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
