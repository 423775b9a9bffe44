"""`AIOProducer.produce_batch()`, the awaitable bulk form, against Tansu (confluent-kafka reads back).

What matters: every queued record ends in exactly one report, and the call's one future resolves
to a `BatchResult` counting exactly those (the delivered ones, each failure's `Message`); a record the producer refuses carries its own error (``_error``, as the
sync ``produce_batch``) and no report; a full buffer is awaited, or refused after ``max.block.ms``;
cancelling the future or the call loses no report; callbacks run on the loop's thread.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire import AIOProducer, KafkaError, Message
from kafkawire.local_broker import TansuBroker
from kafkawire.producer.aio import BatchResult
from tests.harness.judge import consume_all
from tests.harness.topics import create_topic

pytestmark = pytest.mark.broker

PARTITIONS = 3
UNREACHABLE = "127.0.0.1:1"


@pytest.fixture
def bootstrap(tansu: TansuBroker) -> str:
    return tansu.bootstrap


@pytest.fixture
def topic(bootstrap: str, topic_name: Callable[[str], str]) -> str:
    name = topic_name("aiobatch")
    create_topic(bootstrap, name, PARTITIONS)
    return name


def test_every_record_reported_once_and_the_future_counts_them(bootstrap: str, topic: str) -> None:
    calls = 5
    per_call = 4_000
    threads: list[int] = []
    called: collections.Counter[bytes] = collections.Counter()
    seen: list[Message] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        threads.append(threading.get_ident())
        called[msg.value() or b""] += 1
        seen.append(msg)

    async def main() -> tuple[int, list[BatchResult]]:
        async with AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 5}) as p:
            futures = []
            for c in range(calls):
                messages = [{"value": b"%d-%d" % (c, i), "key": b"k%d" % (i % 7)} for i in range(per_call)]
                futures.append(await p.produce_batch(topic, messages, on_delivery=on_delivery))
                assert not any("_error" in m for m in messages)
            results = await asyncio.wait_for(asyncio.gather(*futures), 60)
        return threading.get_ident(), results

    loop_thread, results = asyncio.run(main())
    assert [(r.delivered, r.failed) for r in results] == [(per_call, [])] * calls
    assert all(m.error() is None and m.offset() is not None and m.offset() >= 0 for m in seen)
    assert sorted(called) == sorted(b"%d-%d" % (c, i) for c in range(calls) for i in range(per_call))
    assert set(called.values()) == {1}, "on_delivery once per record"
    assert set(threads) == {loop_thread}
    positions = {(m.partition(), m.offset()) for m in seen}
    assert len(positions) == calls * per_call
    stored = consume_all(bootstrap, topic, calls * per_call, timeout=30)
    assert {(m.partition(), m.offset()) for m in stored} == positions


def test_refused_records_carry_their_error_and_no_report(bootstrap: str, topic: str) -> None:
    own: list[tuple[KafkaError | None, bytes | None]] = []
    shared: list[bytes | None] = []

    async def main() -> tuple[list[dict[str, Any]], BatchResult, int]:
        conf = {"bootstrap.servers": bootstrap, "message.max.bytes": 10_000}
        async with AIOProducer(conf) as p:
            await p.list_topics(topic, 10)  # the partition count known: partition 99 refused at once
            messages: list[dict[str, Any]] = [{"value": b"ok-%d" % i} for i in range(20)]
            messages[3] = {"value": b"x" * 20_000}  # too large
            messages[5] = {"value": b"elsewhere", "partition": 99}  # no such partition
            messages[7] = {"value": b"own", "callback": lambda err, msg: own.append((err, msg.value()))}
            messages[9] = {"value": b"stale", "_error": KafkaError(KafkaError._QUEUE_FULL)}  # an earlier call's
            future = await p.produce_batch(topic, messages, on_delivery=lambda err, msg: shared.append(msg.value()))
            result = await asyncio.wait_for(future, 30)
            return messages, result, len(p)

    messages, result, left = asyncio.run(main())
    assert messages[3]["_error"].code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert messages[5]["_error"].code() == KafkaError._UNKNOWN_PARTITION
    assert [i for i, m in enumerate(messages) if "_error" in m] == [3, 5], "the stale _error is gone"
    assert "on_delivery" not in messages[7] and callable(messages[7]["callback"])
    assert result.delivered == 18 and result.failed == []
    assert own == [(None, b"own")], "a message's own callback runs instead of the call's"
    assert sorted(v or b"" for v in shared) == sorted(
        (m["value"] for i, m in enumerate(messages) if i not in (3, 5, 7))
    )
    assert left == 0


def test_wrong_type_raises_and_queues_nothing(bootstrap: str, topic: str) -> None:
    async def main() -> int:
        async with AIOProducer({"bootstrap.servers": bootstrap}) as p:
            with pytest.raises(TypeError):
                await p.produce_batch(topic, [{"value": b"a"}, {"value": 12}])
            with pytest.raises(TypeError):
                await p.produce_batch(topic, [{"value": b"a"}], on_delivery=42)  # type: ignore[arg-type]
            return len(p)

    assert asyncio.run(main()) == 0


def test_failed_deliveries_resolve_the_future_with_their_errors(bootstrap: str, topic: str) -> None:
    async def main() -> BatchResult:
        p = AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 10_000})
        await p.list_topics(topic, 10)
        future = await p.produce_batch(topic, [{"value": b"%d" % i} for i in range(100)])
        await p.purge()
        result = await asyncio.wait_for(future, 10)
        await p.close()
        return result

    result = asyncio.run(main())
    assert result.delivered == 0 and len(result.failed) == 100
    assert {m.error().code() for m in result.failed if m.error() is not None} == {KafkaError._PURGE_QUEUE}
    assert all(m.error() is not None for m in result.failed)
    assert sorted(m.value() or b"" for m in result.failed) == sorted(b"%d" % i for i in range(100))


def test_full_buffer_is_awaited_then_every_record_delivered(bootstrap: str, topic: str) -> None:
    count = 2_000

    async def main() -> tuple[int, BatchResult, list[dict[str, Any]]]:
        conf = {"bootstrap.servers": bootstrap, "linger.ms": 1, "queue.buffering.max.messages": 100}
        async with AIOProducer(conf) as p:
            messages = [{"value": b"%d" % i} for i in range(count)]
            future = await p.produce_batch(topic, messages)
            most = len(p)
            result = await asyncio.wait_for(future, 60)
        return most, result, messages

    most, result, messages = asyncio.run(main())
    assert most <= 100
    assert not any("_error" in m for m in messages)
    assert result.delivered == count and result.failed == []
    stored = consume_all(bootstrap, topic, count, timeout=30)
    assert sorted(m.value() or b"" for m in stored) == sorted(b"%d" % i for i in range(count))


def test_full_buffer_refused_after_max_block_ms_and_cancellation_loses_no_report() -> None:
    async def main() -> tuple[list[dict[str, Any]], BatchResult, bool, list[dict[str, Any]], list[Message]]:
        conf = {"bootstrap.servers": UNREACHABLE, "queue.buffering.max.messages": 10, "max.block.ms": 200}
        p = AIOProducer(conf)
        messages = [{"value": b"%d" % i} for i in range(30)]
        future = await p.produce_batch("t", messages)
        # The future, cancelled by its awaiter: the records are still reported, to the callback.
        seen: list[Message] = []
        more = [{"value": b"more"}]
        task = asyncio.create_task(p.produce_batch("t", more, on_delivery=lambda err, msg: seen.append(msg)))
        await asyncio.sleep(0.05)
        task.cancel()  # cancelled while awaiting room: its record is left refused
        with pytest.raises(asyncio.CancelledError):
            await task
        await p.purge()
        result = await asyncio.wait_for(future, 10)
        await p.close()
        return messages, result, future.cancelled(), more, seen

    messages, result, cancelled, more, seen = asyncio.run(main())
    refused = [m for m in messages if "_error" in m]
    assert len(refused) == 20 and {m["_error"].code() for m in refused} == {KafkaError._QUEUE_FULL}
    assert result.delivered == 0 and len(result.failed) == 10
    assert {m.error().code() for m in result.failed if m.error()} == {KafkaError._PURGE_QUEUE}
    assert not cancelled
    assert more[0]["_error"].code() == KafkaError._QUEUE_FULL and seen == []


def test_a_cancelled_future_loses_no_report_and_close_settles_the_rest(bootstrap: str, topic: str) -> None:
    seen: list[bytes | None] = []

    async def main() -> tuple[bool, BatchResult]:
        async with AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 50}) as p:
            cancelled = await p.produce_batch(
                topic, [{"value": b"%d" % i} for i in range(500)], on_delivery=lambda err, msg: seen.append(msg.value())
            )
            cancelled.cancel()
            await p.flush()
            left = await p.produce_batch(topic, [{"value": b"left-%d" % i} for i in range(300)])
            assert not left.done()
        # Closing (the context's exit) delivers and reports everything before it returns.
        assert left.done()
        return cancelled.cancelled(), left.result()

    was_cancelled, left = asyncio.run(main())
    assert was_cancelled
    assert sorted(v or b"" for v in seen) == sorted(b"%d" % i for i in range(500))
    assert left.delivered == 300 and left.failed == []
    stored = consume_all(bootstrap, topic, 800, timeout=30)
    assert sorted(m.value() or b"" for m in stored if (m.value() or b"").startswith(b"left-")) == sorted(
        b"left-%d" % i for i in range(300)
    )
