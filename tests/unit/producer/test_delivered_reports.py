"""A delivered batch's reports served as one event (`DeliveredReports`), and batch encoding in one
loop (`BatchBuilder.append_records`) giving the bytes record-by-record appends give."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.client.executor import CallbackExecutor
from kafkawire.core.accumulator import ProducerBatch
from kafkawire.producer.delivery import DeliveredReports
from kafkawire.producer.pending import PendingMessage
from kafkawire.records import BatchBuilder, decode_batches


class StubDeliveries:
    """What DeliveredReports uses of `Deliveries`: the executor, the configured callback and the buffer release."""

    def __init__(self) -> None:
        self.executor = CallbackExecutor(background=False)
        self._reports = self.executor
        self.grouped_callbacks = 0
        self.on_delivery = None  # no configured callback's forwarder
        self.released: list[tuple[int, int]] = []

    def release(self, count: int, size: int) -> None:
        self.released.append((count, size))


def pending(value: bytes, callback: Any) -> PendingMessage:
    return PendingMessage("t", 3, None, value, None, 1_700_000_000_000, callback, None, 10.0)


def test_reports_come_in_order_with_offsets_and_latency_and_release_once() -> None:
    seen: list[tuple[Any, bytes | None, int | None, float | None]] = []

    def cb(err: Any, msg: Any) -> None:
        seen.append((err, msg.value(), msg.offset(), msg.latency()))

    stub = StubDeliveries()
    messages = [pending(b"a", cb), pending(b"b", None), pending(b"c", cb)]
    event = DeliveredReports(stub, messages, 100, -1, 10.5)  # type: ignore[arg-type]
    stub._reports.put(event, (), event.release)
    assert stub._reports.serve(0) == 1
    assert seen == [(None, b"a", 100, 0.5), (None, b"c", 102, 0.5)]
    # Only the records with a callback are released here (the others when the answer came).
    assert stub.released == [(2, sum(len(m.value or b"") for m in (messages[0], messages[2])))]
    assert stub.grouped_callbacks == 1  # two callbacks in one event: poll() counts one more


def test_a_raising_callback_stops_the_event_and_the_rest_is_served_next_time() -> None:
    seen: list[tuple[bytes | None, int | None]] = []

    def cb(err: Any, msg: Any) -> None:
        seen.append((msg.value(), msg.offset()))
        if msg.value() == b"b":
            raise ValueError("boom")

    stub = StubDeliveries()
    messages = [pending(v, cb) for v in (b"a", b"b", b"c", b"d")]
    event = DeliveredReports(stub, messages, 7, 1234, 10.0)  # type: ignore[arg-type]
    stub._reports.put(event, (), event.release)
    with pytest.raises(ValueError, match="boom"):
        stub._reports.serve(0)
    assert seen == [(b"a", 7), (b"b", 8)]
    assert [count for count, _ in stub.released] == [2]
    stub._reports.serve(0)
    assert seen == [(b"a", 7), (b"b", 8), (b"c", 9), (b"d", 10)]
    assert [count for count, _ in stub.released] == [2, 2]


def test_log_append_time_is_every_report_timestamp() -> None:
    got: list[Any] = []
    stub = StubDeliveries()
    event = DeliveredReports(stub, [pending(b"a", lambda e, m: got.append(m.timestamp()))], 0, 555, 10.0)  # type: ignore[arg-type]
    event()
    assert got == [(2, 555)]  # TIMESTAMP_LOG_APPEND_TIME


def test_append_records_gives_the_bytes_of_appending_one_by_one() -> None:
    records = [
        (1_700_000_000_000 + i, None if i % 3 else b"k%d" % i, None if i == 5 else b"v" * (i * 37 % 300), None)
        for i in range(50)
    ]
    records.append((1_699_999_999_000, b"late", b"x" * 5000, [("h", b"1"), ("n", None)]))
    one_by_one = BatchBuilder()
    for ts, key, value, headers in records:
        one_by_one.append(ts, key, value, headers or ())
    together = BatchBuilder()
    together.append_records(records[:20])
    together.append_records(records[20:])
    assert together.build() == one_by_one.build()
    assert together.max_timestamp == one_by_one.max_timestamp == 1_700_000_000_049


def test_a_batch_encodes_its_records_when_it_closes() -> None:
    batch = ProducerBatch("t", 0, 0.0)
    batch.messages.extend(pending(b"%d" % i, None) for i in range(3))
    [decoded] = decode_batches(batch.close(0, None))
    assert [r.value for r in decoded.records] == [b"0", b"1", b"2"]


def test_remembered_key_partitions_equal_the_partitioners_answers() -> None:
    from kafkawire.core.partitioners import BUILTIN_PARTITIONERS, STICKY, KeyedPartitions

    for name, partitioner in BUILTIN_PARTITIONERS.items():
        keyed = KeyedPartitions(partitioner, limit=50)
        for round_ in range(2):  # the second round answers from memory (the first 50 keys)
            for i in range(100):
                key = b"key-%d" % i
                assert keyed.partition("t", key, 7) == partitioner(key, 7), (name, round_, i)
                assert keyed.partition("t", key, 3) == partitioner(key, 3), (name, round_, i)
    sticky = KeyedPartitions(BUILTIN_PARTITIONERS["consistent_random"])
    assert sticky.partition("t", b"", 4) == STICKY  # librdkafka: an empty key is keyless there
