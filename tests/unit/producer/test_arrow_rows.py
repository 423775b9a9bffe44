"""ArrowRows entries (native_c/arrow_rows.c) against the records they stand for.

`produce_arrow` of a batch with value/key columns only queues its rows as row numbers into the
columns: one ArrowRows entry per run of rows in a producer batch, no PendingMessage or bytes per
row. Every path that reads a batch must see what the rows' PendingMessages (`ArrowRows.expand`,
what the per-row path queues) would give: the encoded bytes (C encoder reading the buffers against
the pure-Python encoder over the expanded records), the tallies of a delivered batch, the reports
(one `report_batch` for a `BatchDeliveryCallback`, one per record otherwise, failures too), the
record counts of splits and sequences. No broker: the partition counts are put in the metadata.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest

from kafkawire import Producer
from kafkawire.core.accumulator import ProducerBatch
from kafkawire.core.kafka_error import KafkaError
from kafkawire.native import native
from kafkawire.producer.arrow import DeliveryTracker, produce_arrow
from kafkawire.producer.delivery import tally_shared
from kafkawire.records.batch import encode_records

pytestmark = pytest.mark.skipif(
    native is None and os.environ.get("KAFKAWIRE_REQUIRE_NATIVE") != "1", reason="kafkawire._native is not built"
)
pa = pytest.importorskip("pyarrow")

TOPIC = "rows-topic"


def _producer(**conf: Any) -> Producer:
    p = Producer({"bootstrap.servers": "127.0.0.1:1", "linger.ms": 600_000, "message.timeout.ms": 900_000, **conf})
    p._engine._sticky._rng = random.Random(5)
    p._engine.client.metadata.partition_counts = {TOPIC: 4}
    return p


def _batches(p: Producer) -> list[ProducerBatch]:
    return [b for _, queue in sorted(p._engine.acc._queues.items()) for b in queue]


def _close(p: Producer) -> None:
    p.purge()
    p.close(0)


def _table(n: int, keyed: bool, seed: int = 1, large: bool = False) -> Any:
    rng = random.Random(seed)
    values = [
        None if rng.random() < 0.05 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
        for _ in range(n)
    ]
    columns = {"value": pa.array(values, pa.large_binary() if large else pa.binary())}
    if keyed:
        columns["key"] = pa.array([None if i % 9 == 0 else b"k%d" % (i % 13) for i in range(n)], pa.binary())
    return pa.RecordBatch.from_pydict(columns)


def _tracked(p: Producer) -> list[ProducerBatch]:
    batches = _batches(p)
    assert any(b.rows for b in batches), "the Arrow rows were not queued as ArrowRows entries"
    for b in batches:
        records = b.records()
        assert b.count == len(records) == len(b.messages) + b.extra
        assert b.rows == sum(1 for m in b.messages if isinstance(m, native.ArrowRows))
        assert b.bytes - (b.bytes - sum(m.size for m in b.messages)) == sum(m.size for m in records)
    return batches


@pytest.mark.parametrize("keyed", [False, True])
def test_rows_encode_as_their_records(keyed: bool) -> None:
    p = _producer(**{"batch.size": 20_000})
    try:
        table = _table(900, keyed)
        produce_arrow(p, table.slice(7, 800), TOPIC, on_delivery=DeliveryTracker())
        p.produce(TOPIC, b"plain", headers=[("h", b"v")], partition=0)  # the general path, after rows
        produce_arrow(p, _table(300, keyed, seed=2, large=True), TOPIC, on_delivery=DeliveryTracker())
        for b in _tracked(p):
            assert native is not None
            records = b.records()
            c_buf, py_buf = bytearray(b"spare" * 10), bytearray(b"spare" * 10)
            c_end = native.encode_records(c_buf, b.messages, 0, 0, 0, 3)
            py_end = encode_records(py_buf, records, 0, 0, 0, 3)
            assert c_end == py_end and c_buf == py_buf
            half = len(records) // 2  # after records encoded before: the same continuation
            start = encode_records(bytearray(), records[:half], 0, 0, 0)
            assert native.encode_records(bytearray(), b.messages, *start[:3]) == encode_records(
                bytearray(), records, *start[:3]
            )
    finally:
        _close(p)


def test_rows_tally_as_their_records() -> None:
    p = _producer(**{"batch.size": 30_000})
    tracker = DeliveryTracker()
    try:
        produce_arrow(p, _table(700, True), TOPIC, on_delivery=tracker)
        for b in _tracked(p):
            assert native is not None
            records = b.records()
            assert native.tally_shared(b.messages, tracker) == tally_shared(records, tracker)
            assert native.tally_shared(b.messages, DeliveryTracker()) is None
    finally:
        _close(p)


class _Reports(DeliveryTracker):
    """A DeliveryTracker that notes each call it gets."""

    def __init__(self, batch_failures: bool = True) -> None:
        super().__init__()
        self.calls: list[Any] = []
        self.batch_failures = batch_failures

    def __call__(self, error: KafkaError | None, message: Any) -> None:
        self.calls.append(("record", None if error is None else error.code(), message.value()))
        super().__call__(error, message)

    def report_batch(self, topic: str, partition: int, count: int, base_offset: int, error: KafkaError | None) -> None:
        self.calls.append(("batch", None if error is None else error.code(), count, base_offset))
        super().report_batch(topic, partition, count, base_offset, error)


def _deliver(p: Producer, batch: ProducerBatch, error: KafkaError | None) -> None:
    extra = batch.extra if batch.rows else None
    deliveries = p._engine.deliveries
    messages = batch.messages if error is None else batch.records()
    deliveries.complete(messages, error, 100 if error is None else -1001, -1, extra if error is None else None)
    p.poll(0)


def test_rows_report_once_per_batch_or_once_per_record() -> None:
    p = _producer(**{"batch.size": 10_000})
    tracker = _Reports()
    per_record: list[Any] = []
    try:
        produce_arrow(p, _table(200, False), TOPIC, on_delivery=tracker)
        produce_arrow(p, _table(50, True, seed=3), TOPIC, on_delivery=lambda err, msg: per_record.append(msg.value()))
        batches = _tracked(p)
        taken = p._engine.acc.take_all()
        assert sorted(map(id, taken)) == sorted(map(id, batches))
        delivered = 0
        for b in batches:
            shared = {id(m.callback) for m in b.messages}
            before = len(tracker.calls), len(per_record)
            _deliver(p, b, None)
            if shared == {id(tracker)}:  # one call for the whole batch, counting its records
                assert tracker.calls[before[0] :] == [("batch", None, b.count, 100)]
            delivered += b.count
        assert tracker.delivered + len(per_record) == delivered == 250
        expected = [m.value for b in batches for m in b.records() if m.callback is not tracker]
        assert sorted(per_record, key=lambda v: v or b"") == sorted(expected, key=lambda v: v or b"")
        assert p._engine.state.outstanding == 0
    finally:
        _close(p)


def test_rows_fail_per_record_unless_the_callback_takes_failures_as_a_batch() -> None:
    p = _producer()
    batch_failures, one_by_one = _Reports(True), _Reports(False)
    try:
        produce_arrow(p, _table(30, False), TOPIC, on_delivery=batch_failures)
        produce_arrow(p, _table(20, False, seed=4), TOPIC, on_delivery=one_by_one)
        batches = _tracked(p)
        p._engine.acc.take_all()
        timed_out = KafkaError(KafkaError._MSG_TIMED_OUT)
        for b in batches:
            _deliver(p, b, timed_out)
        assert batch_failures.failed == 30 and one_by_one.failed == 20
        assert [c for c in one_by_one.calls if c[0] == "record"] == [
            ("record", KafkaError._MSG_TIMED_OUT, v) for v in _table(20, False, seed=4).column("value").to_pylist()
        ]
        assert p._engine.state.outstanding == 0
    finally:
        _close(p)


def test_a_split_keeps_the_record_counts() -> None:
    p = _producer()
    try:
        produce_arrow(p, _table(40, False), TOPIC, on_delivery=DeliveryTracker())
        p.produce(TOPIC, b"later", partition=next(b.partition for b in _batches(p)))
        # The first row opened the batch through admit (a PendingMessage), the others one entry.
        (batch,) = _batches(p)
        assert (batch.count, batch.rows, batch.extra, len(batch.messages)) == (41, 1, 38, 3)
        part = batch.split(batch.messages[0].enqueued)
        assert part is not None
        assert (part.count, part.rows, part.extra) == (40, 1, 38)
        assert (batch.count, batch.rows, batch.extra) == (1, 0, 0)
        assert [m.value for m in part.records()] == _table(40, False).column("value").to_pylist()
        with p._engine.lock:
            p._engine.acc.requeue(part, 0.0)  # back where purge() finds it
    finally:
        _close(p)


def test_sequences_advance_by_records() -> None:
    p = _producer(**{"enable.idempotence": True})
    try:
        produce_arrow(p, _table(25, False), TOPIC, on_delivery=DeliveryTracker())
        idem = p._engine.idem
        assert idem is not None
        (batch,) = _batches(p)
        assert batch.rows == 1 and batch.count == 25
        idem.stamp(batch)
        assert idem._next[(batch.topic, batch.partition)] == batch.base_sequence + 25
    finally:
        _close(p)


def test_columns_check_the_buffers_and_expand_to_pending_records() -> None:
    assert native is not None
    value = pa.array([b"ab", None, b"c"], pa.binary())
    validity, offsets, data = value.buffers()
    with pytest.raises(ValueError):  # more rows than the offsets hold
        native.arrow_columns(TOPIC, 9, (validity, offsets, data, 0, False), None, None, 0.0)
    columns = native.arrow_columns(TOPIC, 3, (validity, offsets, data, 0, False), None, None, 2.5)
    assert [(m.value, m.key, m.partition, m.enqueued) for m in map(columns.pending, range(3))] == [
        (b"ab", None, -1, 2.5),
        (None, None, -1, 2.5),
        (b"c", None, -1, 2.5),
    ]
    with pytest.raises(IndexError):
        columns.pending(3)


def test_statistics_count_the_rows_records() -> None:
    p = _producer(**{"statistics.interval.ms": 60_000, "stats_cb": lambda _: None})
    tracker = _Reports()
    try:
        produce_arrow(p, _table(120, True), TOPIC, on_delivery=tracker)
        batches = _tracked(p)
        p._engine.acc.take_all()
        stats = p._engine.deliveries.batch_stats
        assert stats is not None
        for b in batches:
            _deliver(p, b, None)
        expected: dict[Any, list[int]] = {}
        for b in batches:
            counts = expected.setdefault((b.topic, b.partition), [0, 0])
            counts[0] += b.count
            counts[1] += sum(len(m.key or b"") + len(m.value or b"") for m in b.records())
        assert stats.delivered == expected
        assert tracker.delivered == 120 and p._engine.state.outstanding == 0
    finally:
        _close(p)
