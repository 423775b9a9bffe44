"""A produced batch reported by one call of a `BatchDeliveryCallback` (the Arrow writer's
`DeliveryTracker`): every record counted in exactly one report, one report per run of records
sharing such a callback, per-record reports when a record has another kind of callback, and
``tally_shared``'s C and Python twins equal."""

from __future__ import annotations

import gc
import logging
from typing import Any

import pytest

from kafkawire.base.model import OFFSET_INVALID, Message
from kafkawire.client.dropped import Kept
from kafkawire.client.executor import CallbackExecutor
from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.lane_state import buffer_charge
from kafkawire.native import native
from kafkawire.producer.arrow import DeliveryTracker
from kafkawire.producer.delivery import BatchDeliveryCallback, Deliveries, tally_shared
from kafkawire.producer.interceptors import InterceptorChain
from kafkawire.producer.pending import PendingMessage, PurePendingMessage


class Recorder(BatchDeliveryCallback):
    """Every report it gets, per batch and per record."""

    def __init__(self) -> None:
        self.batches: list[tuple[str, int, int, int, Any]] = []
        self.records: list[tuple[Any, int | None]] = []

    def __call__(self, error: KafkaError | None, message: Message) -> None:
        self.records.append((error, message.offset()))

    def report_batch(self, topic: str, partition: int, count: int, base_offset: int, error: KafkaError | None) -> None:
        self.batches.append((topic, partition, count, base_offset, error))


def _deliveries(
    interceptors: Any = (), only_errors: bool = False, on_delivery: Any = None
) -> tuple[Deliveries, list[tuple[int, int]]]:
    released: list[tuple[int, int]] = []
    deliveries = Deliveries(
        CallbackExecutor(background=False),
        InterceptorChain(list(interceptors), {}),
        lambda count, charge: released.append((count, charge)),
        lambda: 20.0,
        None,
        None,
        logging.getLogger("test"),
        only_errors=only_errors,
        on_delivery=on_delivery,
    )
    return deliveries, released


def _records(kind: Any, n: int, callback: Any, partition: int = 2) -> list[Any]:
    return [kind("t", partition, None, b"v" * (i + 1), None, 1_700_000_000_000, callback, None, 10.0) for i in range(n)]


def test_a_batch_of_one_batch_callback_is_one_report_counting_its_records() -> None:
    deliveries, released = _deliveries()
    recorder = Recorder()
    records = _records(PendingMessage, 5, recorder)
    deliveries.complete(records, None, 40, -1)
    assert deliveries.executor.serve(0) == 1
    assert recorder.batches == [("t", 2, 5, 40, None)] and recorder.records == []
    assert released == [(5, sum(buffer_charge(m.value) for m in records))]
    assert (deliveries.delivered_count, deliveries.delivered_bytes) == (5, 1 + 2 + 3 + 4 + 5)


def test_a_failed_batch_is_one_report_with_the_error_and_no_offset() -> None:
    deliveries, released = _deliveries()
    recorder = Recorder()
    error = KafkaError(KafkaError._MSG_TIMED_OUT)
    deliveries.complete(_records(PendingMessage, 3, recorder), error, -1001, -1)
    deliveries.executor.serve(0)
    assert recorder.batches == [("t", 2, 3, OFFSET_INVALID, error)]
    assert [count for count, _ in released] == [3] and deliveries.delivered_count == 0


def test_without_batch_failures_a_failed_batch_is_reported_per_record_and_a_delivered_one_as_one() -> None:
    class PerRecordFailures(Recorder):
        batch_failures = False

    deliveries, released = _deliveries()
    recorder = PerRecordFailures()
    error = KafkaError(KafkaError._MSG_TIMED_OUT)
    deliveries.complete(_records(PendingMessage, 3, recorder), error, -1001, -1)
    deliveries.complete(_records(PendingMessage, 2, recorder), None, 7, -1)
    deliveries.executor.serve(0)
    assert recorder.records == [(error, None)] * 3
    assert recorder.batches == [("t", 2, 2, 7, None)]
    assert sum(count for count, _ in released) == 5


def test_a_raising_batch_report_comes_out_of_poll_and_still_frees_the_room() -> None:
    class Raising(Recorder):
        def report_batch(self, *args: Any) -> None:
            raise ValueError("from report_batch")

    deliveries, released = _deliveries()
    deliveries.complete(_records(PendingMessage, 3, Raising()), None, 0, -1)
    with pytest.raises(ValueError, match="from report_batch"):
        deliveries.executor.serve(0)
    assert [count for count, _ in released] == [3]


def test_runs_of_batch_callbacks_are_one_report_each() -> None:
    """A produced batch holding the end of one produce_batch() call and the start of the next (the
    sticky partition moves when a batch is full, not at a call's end): one report per run."""
    deliveries, released = _deliveries()
    recorder, other = Recorder(), Recorder()
    records = _records(PendingMessage, 5, recorder)
    records[2].callback = records[3].callback = other
    deliveries.complete(records, None, 100, -1)
    assert deliveries.executor.serve(0) == 3
    assert recorder.batches == [("t", 2, 2, 100, None), ("t", 2, 1, 104, None)] and recorder.records == []
    assert other.batches == [("t", 2, 2, 102, None)] and other.records == []
    assert [count for count, _ in released] == [2, 2, 1]
    assert sum(charge for _, charge in released) == sum(buffer_charge(m.value) for m in records)
    assert (deliveries.delivered_count, deliveries.delivered_bytes) == (5, 1 + 2 + 3 + 4 + 5)


def test_a_record_of_another_callback_makes_the_whole_batch_per_record() -> None:
    deliveries, released = _deliveries()
    recorder, seen = Recorder(), []
    records = _records(PendingMessage, 4, recorder)
    records[2].callback = lambda err, msg: seen.append(msg.offset())
    deliveries.complete(records, None, 0, -1)
    deliveries.executor.serve(0)
    assert recorder.batches == []
    assert recorder.records == [(None, 0), (None, 1), (None, 3)] and seen == [2]
    assert sum(count for count, _ in released) == 4


def test_interceptors_keep_per_record_reports() -> None:
    class Heard:
        def __init__(self) -> None:
            self.acks = 0

        def on_acknowledgement(self, metadata: Any, exc: Any) -> None:
            self.acks += 1

    heard = Heard()
    deliveries, _ = _deliveries([heard])
    recorder = Recorder()
    deliveries.complete(_records(PendingMessage, 3, recorder), None, 7, -1)
    deliveries.executor.serve(0)
    assert heard.acks == 3 and recorder.batches == [] and [o for _, o in recorder.records] == [7, 8, 9]


def test_only_errors_reports_no_delivered_batch_but_frees_its_room() -> None:
    deliveries, released = _deliveries(only_errors=True)
    recorder = Recorder()
    deliveries.complete(_records(PendingMessage, 3, recorder), None, 7, -1)
    assert deliveries.executor.serve(0) == 0 and recorder.batches == []
    assert [count for count, _ in released] == [3]


def test_delivery_tracker_counts_batches_and_records_alike() -> None:
    tracker = DeliveryTracker()
    tracker.report_batch("t", 1, 10, 0, None)
    tracker(None, Message("t", 3, 5, None, b"v"))
    error = KafkaError(KafkaError._MSG_TIMED_OUT)
    tracker.report_batch("t", 2, 4, OFFSET_INVALID, error)
    tracker(KafkaError(KafkaError._PURGE_QUEUE), Message("t", 2, None, None, b"v"))
    assert (tracker.delivered, tracker.failed, tracker.first_error) == (11, 5, error)
    assert tracker.partitions == {("t", 1), ("t", 3)}


def _variants(kind: Any) -> list[list[Any]]:
    """Batches tally_shared takes (the first two) and batches it must refuse."""
    recorder = Recorder()
    plain = _records(PendingMessage, 6, recorder)
    with_none = _records(PendingMessage, 3, recorder)
    with_none[1].value = None
    other_callback = _records(PendingMessage, 3, recorder)
    other_callback[2].callback = print
    with_future = _records(PendingMessage, 3, recorder)
    with_future[0].future = object()
    other_partition = _records(PendingMessage, 3, recorder) + _records(PendingMessage, 1, recorder, partition=3)
    other_topic = _records(PendingMessage, 3, recorder)
    other_topic[1].topic = "u"
    return [plain, with_none, other_callback, with_future, other_partition, other_topic, []]


@pytest.mark.skipif(native is None, reason="kafkawire._native is not built")
def test_tally_shared_is_the_python_twin() -> None:
    assert native is not None
    got_c, got_py = [], []
    for c_records, py_records in zip(_variants(native.PendingMessage), _variants(PurePendingMessage), strict=True):
        got_c.append(native.tally_shared(c_records, c_records[0].callback if c_records else None))
        got_py.append(tally_shared(py_records, py_records[0].callback if py_records else None))
    assert got_c == got_py
    assert got_py[0] == (21, sum(buffer_charge(m.value) for m in _variants(PurePendingMessage)[0]))
    assert got_py[1] is not None and got_py[1][0] == 1 + 3
    assert got_py[2:] == [None] * 5


def test_the_configured_batch_callback_reaches_records_as_a_forwarder_and_is_one_report() -> None:
    """A producer's configured ``on_delivery`` is held for its face (client/dropped.py) and records
    carry a forwarder to it: the batch is still one `report_batch` call, per-record reports call it
    directly, and once the face is gone nobody is told but the room is freed."""
    kept, recorder = Kept(), Recorder()
    forwarder = kept.hold("on_delivery", recorder)
    deliveries, released = _deliveries(on_delivery=forwarder)
    records = _records(PendingMessage, 4, forwarder)
    deliveries.complete(records, None, 10, -1)
    assert deliveries.executor.serve(0) == 1
    assert recorder.batches == [("t", 2, 4, 10, None)] and recorder.records == []

    mixed = _records(PendingMessage, 3, forwarder)
    mixed[1].callback = lambda err, msg: None  # another callback: reported per record
    deliveries.complete(mixed, None, 20, -1)
    deliveries.executor.serve(0)
    assert recorder.records == [(None, 20), (None, 22)]

    del kept
    gc.collect()
    before = sum(count for count, _ in released)
    deliveries.complete(_records(PendingMessage, 3, forwarder), None, 30, -1)
    deliveries.executor.serve(0)
    assert recorder.records == [(None, 20), (None, 22)] and len(recorder.batches) == 1
    assert sum(count for count, _ in released) - before == 3
