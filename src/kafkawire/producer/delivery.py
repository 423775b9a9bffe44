"""Delivery reports, built in one place: every record's report, future and acknowledgement.

The sender (IO thread) hands each finished batch to `Deliveries.complete`: futures of ``send()`` are
completed there, interceptors hear ``on_acknowledgement`` there, and each callback is queued on the
client's `CallbackExecutor` with the buffer room it frees once served. A delivered batch without
interceptors takes the fast way: one `DeliveredReports` event for the whole batch, whose `Message`
objects are made when served, by `serve_delivered` (C twin ``kafkawire._native.serve_delivered``).
A batch whose records share one `BatchDeliveryCallback` is reported by one call of it, with no
`Message` at all (the Arrow writer's reports: one per produced batch, not per record).
Each report frees its record's buffer charge (core/lane_state.py `buffer_charge`) once served.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import partial
from itertools import groupby
from typing import TYPE_CHECKING, Any

from ..base.model import (
    OFFSET_INVALID,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    Message,
    ThrottleEvent,
    throttle_event,
)
from ..client.dropped import forwarded
from ..client.executor import CallbackExecutor
from ..core.accumulator import Pending, expanded
from ..core.kafka_error import KafkaError, KafkaException
from ..core.lane_state import buffer_charge
from ..native import native
from .batch_stats import BatchStats
from .interceptors import InterceptorChain, record_types

if TYPE_CHECKING:
    from ..base.record_metadata import RecordMetadata

Release = Callable[[int, int], None]  # (records, their buffer charge): room freed once reported


def serve_delivered(
    messages: list[Pending],
    start: int,
    base_offset: int,
    log_append: tuple[int, int] | None,
    create_time: int,
    now: float,
    message_type: type[Message],
    forward: Any = None,
    target: Any = None,
) -> tuple[int, int, int, BaseException | None]:
    """Run the callback of each record from ``start`` on with its report `Message`, made directly
    (no re-check of values the producer checked). Stops at the first exception, which is returned
    (not raised) with how far it got: (next index, callbacks run, their buffer charge, exception).
    A record whose callback is ``forward`` (the configured callback's forwarder, client/dropped.py)
    is reported to ``target`` instead, or to nobody when that is None (its face is gone).
    The twin of ``kafkawire._native.serve_delivered``."""
    new = message_type.__new__
    i = start
    served = 0
    charge = 0
    try:
        while i < len(messages):
            m = messages[i]
            i += 1
            callback = m.callback
            if callback is None:
                continue
            if callback is forward:
                callback = target
                if callback is None:  # counted as served: its room was not freed when answered
                    served += 1
                    charge += buffer_charge(m.value)
                    continue
            report = new(message_type)
            report._topic = m.topic
            report._partition = m.partition
            report._offset = base_offset + i - 1 if base_offset >= 0 else None
            report._key = m.key
            report._value = m.value
            report._headers = m.headers
            report._timestamp = log_append or (create_time, m.timestamp)
            report._error = None
            latency = now - m.enqueued
            report._latency = latency if latency >= 0 else None
            report._leader_epoch = None
            report._delivery_count = None
            served += 1
            charge += buffer_charge(m.value)
            callback(None, report)
    except BaseException as exc:  # returned: the caller keeps its books, then raises it
        return i, served, charge, exc
    return i, served, charge, None


def tally_delivered(messages: list[Pending]) -> tuple[int, int, int, list[int]]:
    """A delivered batch's bookkeeping in one pass: its value bytes (statistics), how many records
    have no callback and the buffer charge they free now, and the indexes of those with a future.
    The twin of ``kafkawire._native.tally_delivered``."""
    value_bytes = freed = charge = 0
    with_future = []
    for i, m in enumerate(messages):
        if m.value is not None:
            value_bytes += len(m.value)
        if m.future is not None:
            with_future.append(i)
        if m.callback is None:
            freed += 1
            charge += buffer_charge(m.value)
    return value_bytes, freed, charge, with_future


def tally_shared(messages: list[Pending], callback: Any) -> tuple[int, int] | None:
    """A batch whose every record has ``callback``, no future, one topic and one partition: its
    value bytes (statistics) and the buffer charge of all its records; None when a record differs.
    The twin of ``kafkawire._native.tally_shared``."""
    if not messages:
        return None
    first = messages[0]
    value_bytes = charge = 0
    for m in messages:
        if (
            m.callback is not callback
            or m.future is not None
            or m.topic != first.topic
            or m.partition != first.partition
        ):
            return None
        if m.value is not None:
            value_bytes += len(m.value)
        charge += buffer_charge(m.value)
    return value_bytes, charge


class BatchDeliveryCallback(ABC):
    """An ``on_delivery`` callback that can take a produced batch's reports in one call.

    When every record of a batch has this callback (and no interceptor listens, no future
    waits), the batch is reported by one `report_batch` call instead of a `Message` and a call
    per record; otherwise each record is reported through ``__call__`` as usual. Either way each
    record is counted in exactly one report. With ``batch_failures`` False, a failed batch is
    reported per record instead (each failure's `Message`, for a caller that keeps those).
    """

    batch_failures = True

    @abstractmethod
    def __call__(self, error: KafkaError | None, message: Message) -> None:
        """One record's report, as any ``on_delivery`` callback gets it."""

    @abstractmethod
    def report_batch(self, topic: str, partition: int, count: int, base_offset: int, error: KafkaError | None) -> None:
        """``count`` records of ``topic``/``partition`` delivered at ``base_offset`` onwards
        (OFFSET_INVALID when unknown or failed), or all failed with ``error``."""


class DeliveredReports:
    """The delivery reports of one delivered batch, served as one event (as librdkafka serves a
    batch of reports as one event): one queue entry, and one release of buffer room once served.

    If a callback raises, the records after it are queued again as a new event (behind what was
    queued meanwhile) and the exception comes out of ``poll()``.
    """

    __slots__ = ("append_time", "base_offset", "charge", "deliveries", "messages", "next", "now", "served")

    def __init__(
        self, deliveries: Deliveries, messages: list[Pending], base_offset: int, append_time: int, now: float
    ) -> None:
        self.deliveries = deliveries
        self.messages = messages
        self.base_offset = base_offset
        self.append_time = append_time
        self.now = now  # when the answer came: each record's latency is from its enqueueing to now
        self.next = 0  # index in ``messages`` of the next record to report
        self.served = 0  # callbacks run (records without a callback were released when answered)
        self.charge = 0  # their buffer charge

    def __call__(self) -> None:
        log_append = (TIMESTAMP_LOG_APPEND_TIME, self.append_time) if self.append_time != -1 else None
        serve = serve_delivered if native is None else native.serve_delivered
        forward, target = forwarded(self.deliveries.on_delivery)
        i, served, charge, exc = serve(
            self.messages,
            self.next,
            self.base_offset,
            log_append,
            TIMESTAMP_CREATE_TIME,
            self.now,
            Message,
            forward,
            target,
        )
        self.next = i
        self.served += served
        self.charge += charge
        self.deliveries.grouped_callbacks += served - 1
        if exc is not None:
            rest = self.messages[i:]
            if any(m.callback is not None for m in rest):
                base = self.base_offset + i if self.base_offset >= 0 else self.base_offset
                event = DeliveredReports(self.deliveries, rest, base, self.append_time, self.now)
                self.deliveries.executor.put(event, (), event.release)
            raise exc

    def release(self) -> None:
        self.deliveries.release(self.served, self.charge)


class Deliveries:
    """The producer's reports to the application: delivery reports, ``error_cb``, ``throttle_cb``.
    Called on the IO thread; callbacks run where the executor serves them."""

    def __init__(
        self,
        executor: CallbackExecutor,
        interceptors: InterceptorChain,
        release: Release,
        clock: Callable[[], float],
        error_cb: Callable[[KafkaError], Any] | None,
        throttle_cb: Callable[[ThrottleEvent], Any] | None,
        log: logging.Logger,
        only_errors: bool = False,
        on_delivery: Any = None,
    ) -> None:
        self.executor = executor
        # The configured callback as records carry it: a forwarder (client/dropped.py), resolved
        # once per batch of reports.
        self.on_delivery = on_delivery
        self.release = release
        self._interceptors = interceptors
        self._clock = clock
        self._error_cb = error_cb
        self._throttle_cb = throttle_cb
        self._log = log
        self._only_errors = only_errors  # delivery.report.only.error: delivered records call no callback
        self.grouped_callbacks = 0  # callbacks run by DeliveredReports events beyond one per event
        self.delivered_count = 0  # statistics: records and value bytes acknowledged
        self.batch_stats: BatchStats | None = None  # with statistics: per partition and per batch counts
        self.delivered_bytes = 0

    def complete(
        self,
        messages: list[Pending],
        error: KafkaError | None,
        base_offset: int,
        append_time: int,
        extra: int | None = None,
    ) -> None:
        """A batch's records are done: delivered at ``base_offset`` (-1001: unknown), or failed.
        ``extra`` when ``messages`` holds ArrowRows entries, each standing for some of an Arrow
        batch's rows: the records beyond one per entry (they are reported as one batch, or
        expanded into one object per record)."""
        if extra is not None:
            if (
                self.batch_stats is None
                and not self._interceptors
                and self._reported_as_batch(messages, error, base_offset, extra)
            ):
                return
            messages = expanded(messages)
        if error is None and messages and self.batch_stats is not None:
            self.batch_stats.acknowledged(messages)
        now = self._clock()
        intercepted = self._interceptors.interceptors  # (a list's truth: no Python call per batch)
        if (
            not intercepted
            and messages
            and messages[0].callback is not None  # (what `_shared_runs` looks at first)
            and self._reported_as_batch(messages, error, base_offset)
        ):
            return
        if error is None and not intercepted:
            self._delivered(messages, base_offset, append_time, now)
            return
        exc = KafkaException(error) if error is not None else None
        if error is None:
            self.delivered_count += len(messages)
            self.delivered_bytes += sum(len(m.value or b"") for m in messages)
        freed = freed_bytes = 0
        for i, m in enumerate(messages):
            offset = base_offset + i if error is None and base_offset >= 0 else OFFSET_INVALID
            ts = (TIMESTAMP_LOG_APPEND_TIME, append_time) if append_time != -1 else (TIMESTAMP_CREATE_TIME, m.timestamp)
            if self._interceptors or m.future is not None:
                metadata = _metadata(m, offset, ts)
                if self._interceptors:
                    self._interceptors.on_acknowledgement(metadata, exc)
                if m.future is not None:
                    if exc is None:
                        m.future.set_result(metadata)
                    else:
                        m.future.set_exception(exc)
            charge = buffer_charge(m.value)
            if m.callback is None or (error is None and self._only_errors):
                freed += 1
                freed_bytes += charge
                continue
            latency = None if error else now - m.enqueued
            report = Message(
                m.topic, m.partition, offset, m.key, m.value, m.headers, error=error, timestamp=ts, latency=latency
            )
            self.executor.put(m.callback, (error, report), self._releaser(charge))
        if freed:
            self.release(freed, freed_bytes)

    def _reported_as_batch(
        self, messages: list[Pending], error: KafkaError | None, base_offset: int, extra: int = 0
    ) -> bool:
        """The batch's reports queued as `BatchDeliveryCallback.report_batch` calls, one per run of
        records sharing such a callback (a produced batch may end one ``produce_batch()`` call and
        begin the next); False, nothing done, when a record has another callback. With ``extra``
        (ArrowRows entries) only a batch whose every entry shares one is."""
        runs = self._shared_runs(messages, error, extra)
        if runs is None:
            return False
        for start, stop, callback, (value_bytes, charge) in runs:
            count = stop - start
            if error is None:
                self.delivered_count += count
                self.delivered_bytes += value_bytes
                if self._only_errors:
                    self.release(count, charge)
                    continue
            first = messages[start]
            offset = base_offset + start if error is None and base_offset >= 0 else OFFSET_INVALID
            report = (first.topic, first.partition, count, offset, error)
            self.executor.put(callback.report_batch, report, partial(self.release, count, charge))
        return True

    def _shared_runs(
        self, messages: list[Pending], error: KafkaError | None, extra: int = 0
    ) -> list[tuple[int, int, BatchDeliveryCallback, tuple[int, int]]] | None:
        """(start, stop, callback, (value bytes, charge)) of each run of records sharing one
        `BatchDeliveryCallback` that takes this report as a batch, or None. One C pass when the
        whole batch shares one; a look at each record's callback only when it does not. (Records
        carry the configured callback as its forwarder: compared as it is, called as resolved.)"""
        first = messages[0].callback if messages else None
        if first is None:  # (the first record has no callback: no run starts there)
            return None
        tally = tally_shared if native is None else native.tally_shared
        forward, target = forwarded(self.on_delivery)

        def taker(callback: Any) -> BatchDeliveryCallback | None:
            callee = target if forward is not None and callback is forward else callback
            takes = isinstance(callee, BatchDeliveryCallback) and (error is None or callee.batch_failures)
            return callee if takes else None

        if (callee := taker(first)) is None:
            return None
        whole = tally(messages, first)
        if whole is not None:
            return [(0, len(messages) + extra, callee, whole)]
        if extra:
            return None
        callbacks = [m.callback for m in messages]
        runs: list[tuple[int, int, BatchDeliveryCallback, tuple[int, int]]] = []
        start = 0
        for _, group in groupby(callbacks, key=id):
            stop = start + sum(1 for _ in group)
            shared = callbacks[start]
            callee = taker(shared)
            if callee is None or (counted := tally(messages[start:stop], shared)) is None:
                return None
            runs.append((start, stop, callee, counted))
            start = stop
        return runs

    def _delivered(self, messages: list[Pending], base_offset: int, append_time: int, now: float) -> None:
        """A delivered batch: futures completed here (on the IO thread), callbacks queued as one
        `DeliveredReports` event, buffer room of records without a callback freed at once."""
        tally = tally_delivered if native is None else native.tally_delivered
        value_bytes, freed, freed_bytes, with_future = tally(messages)
        self.delivered_count += len(messages)
        self.delivered_bytes += value_bytes
        for i in with_future:
            m = messages[i]
            assert m.future is not None
            ts = (TIMESTAMP_LOG_APPEND_TIME, append_time) if append_time != -1 else (TIMESTAMP_CREATE_TIME, m.timestamp)
            m.future.set_result(_metadata(m, base_offset + i if base_offset >= 0 else -1, ts))
        if freed < len(messages) and self._only_errors:
            freed, freed_bytes = len(messages), sum(buffer_charge(m.value) for m in messages)
        elif freed < len(messages):
            event = DeliveredReports(self, messages, base_offset, append_time, now)
            self.executor.put(event, (), event.release)
        if freed:
            self.release(freed, freed_bytes)

    def _releaser(self, size: int) -> Callable[[], None]:
        return lambda: self.release(1, size)

    def error(self, error: KafkaError) -> None:
        """A client-level error for ``error_cb`` (logged when there is none)."""
        if self._error_cb is not None:
            self.executor.put(self._error_cb, (error,))
        else:
            self._log.error("%s", error.str())

    def throttled(self, node: int, host: str, port: int, throttle_ms: int) -> None:
        if self._throttle_cb is not None:
            self.executor.put(self._throttle_cb, (throttle_event(host, port, node, throttle_ms),))


def _metadata(m: Pending, offset: int, ts: tuple[int, int]) -> RecordMetadata:
    """A record's `RecordMetadata`; a ``send()``'s future holds the id it echoes (`RecordFuture`)."""
    metadata: type[RecordMetadata] = record_types().RecordMetadata
    return metadata(
        m.topic,
        m.partition,
        offset if offset >= 0 else -1,
        ts[1],
        ts[0],
        -1 if m.key is None else len(m.key),
        -1 if m.value is None else len(m.value),
        getattr(m.future, "record_id", None),
    )
