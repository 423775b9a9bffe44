"""`ProducerEngine`: the producer's machinery under its faces, and its one admission path.

The engine owns the client (IO thread), the accumulator, the sender, idempotence and transactions,
the callback executor and the buffer accounting. `admit` is the one way a record enters: buffer room
(``queue.buffering.max.messages``/``kbytes``: raise `BufferError`, or wait ``max.block.ms``), the
partition (partitioner; keyless records go to the sticky partitioner) and the accumulator (or the
sender's wait for the topic's metadata). ``produce()``/``send()`` reach it through `accept` (input
checks, one record); the bulk paths (`produce_batch`, the Arrow writer) through `queue_checked`,
a loop over `admit` holding the lock for a slice of records at a time.

Threads: `accept`/`queue_checked` run in the caller's thread and touch the accumulator only under
``lock`` (no IO under it); the sender runs on the IO thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any

from ..base.debug import Debug
from ..client import queue_log
from ..client.executor import CallbackExecutor
from ..client.network_client import Client
from ..client.telemetry import MetricsPusher, resource_attributes
from ..core.accumulator import Accumulator, Pending
from ..core.idempotence import Idempotence
from ..core.kafka_error import KafkaError, KafkaException
from ..core.lane_state import LANE_SLOTS, new_lane_state
from ..core.partitioners import (
    BUILTIN_PARTITIONERS,
    KEY_HASH_NONE,
    KEYLESS_STICKY,
    KeyedPartitions,
    TimedStickyPartitioner,
    _Stick,
    choose_partition,
    resolve_partitioner,
)
from ..core.transactions import Call, TxnState
from ..native import native
from ..records import HEADER_GAP, WIDEST_GAP, record_size_widest
from .delivery import Deliveries
from .inputs import INT32_MAX, INT64_MAX, Prepared, check_fields, check_topic, to_bytes, to_headers
from .interceptors import InterceptorChain
from .pending import PendingMessage
from .produce_request import SenderSettings
from .producer_config import ProducerConfig
from .room import Room
from .sender import Sender

if TYPE_CHECKING:
    from ..base.record_metadata import RecordMetadata
    from .transactions import TransactionManager

_SLICE = 512  # records the bulk path queues per hold of the lock


def refuse_rest(refused: list[tuple[Any, KafkaError]], handles: Iterable[Any]) -> None:
    """A bulk call that does not wait met a full buffer: it and every later record are refused, as
    librdkafka's produce_batch does (even one that would fit), in one step, not a raise each."""
    full = KafkaError(KafkaError._QUEUE_FULL)
    refused.extend((handle, full) for handle in handles)


def _too_large(size: int, limit: int) -> KafkaError:
    return KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, f"record of {size} bytes exceeds message.max.bytes ({limit})")


class ProducerEngine:
    def __init__(
        self, conf: ProducerConfig, log: logging.Logger, executor: CallbackExecutor, interceptors: InterceptorChain
    ) -> None:
        self.conf = conf
        self.executor = executor
        self.client = Client(conf.raw, logger=log, debug=Debug.of(conf.raw, log, "producer"))
        self.lock = threading.RLock() if native is None else native.RLock()  # the lane takes it in C
        self.room = Room(self.lock, executor)
        self._log = log
        # The counters (records not yet reported, their charge), the open batches and the fatal error,
        # shared with the C lane (core/lane_state.py).
        self.state = new_lane_state()
        self.state.max_messages = conf.queue_buffering_max_messages  # 0: no limit on the count
        self.state.max_bytes = conf.queue_buffering_max_kbytes * 1024
        self.acc = Accumulator(
            state=self.state,
            batch_size=conf.batch_size,
            batch_num_messages=conf.batch_num_messages,
            linger=conf.linger_ms / 1000,
            compression=conf.compression_codec,
            compression_level=None if conf.compression_level == -1 else conf.compression_level,
        )
        self._partitioner = resolve_partitioner(conf.partitioner)
        # librdkafka's timer (sticky.partitioning.linger.ms), and a full batch moves on too
        self._sticky = TimedStickyPartitioner(self.acc.room, conf.sticky_linger_ms / 1000)
        self._keyless_sticky = self._partitioner in KEYLESS_STICKY
        builtin = self._partitioner in BUILTIN_PARTITIONERS.values()
        self._keyed = KeyedPartitions(self._partitioner) if builtin else None  # remembered key hashes
        self._max_record_bytes = conf.message_max_bytes
        self._legal_topics: set[str] = set()  # topic names already checked legal
        self._now = self.client.engine.now
        self.deliveries = Deliveries(
            executor,
            interceptors,
            self.release,
            self._now,
            conf.error_cb,
            conf.throttle_cb,
            log,
            only_errors=conf.raw["delivery.report.only.error"],
            on_delivery=conf.on_delivery,
        )
        self.idem = Idempotence() if conf.enable_idempotence else None
        self.txn: TransactionManager | None = None
        if conf.transactional_id is not None:
            assert self.idem is not None  # the configuration turns idempotence on for transactions
            # Imported here: a producer without transactions never loads the coordinator
            # conversations (start-up, bench/PROFILE.md).
            from .transactions import TransactionManager

            self.txn = TransactionManager(
                self.client,
                self.idem,
                conf.transactional_id,
                conf.transaction_timeout_ms,
                conf.retry_backoff_ms,
                conf.retry_backoff_max_ms,
                request_timeout_ms=conf.socket_timeout_ms,
                debug=self.client.debug,
            )
        self.sender = Sender(
            self.client,
            self.acc,
            self.lock,
            SenderSettings(
                acks=conf.acks,
                request_timeout=conf.request_timeout_ms / 1000,
                message_timeout=(conf.message_timeout_ms or 2**31) / 1000,
                retries=conf.retries,
                retry_backoff_ms=conf.retry_backoff_ms,
                retry_backoff_max_ms=conf.retry_backoff_max_ms,
                max_in_flight=conf.max_in_flight,
                max_request_bytes=conf.message_max_bytes,
                unsent_limit=conf.raw["queue.buffering.backpressure.threshold"],
                auto_create_topics=conf.raw["allow.auto.create.topics"],
                gapless=conf.raw["enable.gapless.guarantee"],
                topic_propagation=conf.raw["topic.metadata.propagation.max.ms"] / 1000,
            ),
            self.deliveries,
            self.assign_partition,
            self.idem,
            self.txn,
        )
        self.client.on_error = self.deliveries.error
        self.telemetry = MetricsPusher(
            "producer",
            self.client,
            bool(conf.raw.get("enable.metrics.push", True)),
            log,
            self.metrics,
            lambda: resource_attributes(
                {"client_rack": conf.raw.get("client.rack"), "transactional_id": conf.transactional_id}
            ),
        )
        if self.txn is not None:
            self.txn.on_added = self.sender.wake
            # A fatal transaction error reaches error_cb too (once: the sender reports its own).
            self.txn.on_fatal = lambda error: None if self.sender.fatal is not None else self.deliveries.error(error)
        # produce()'s common case in C (`_native` ProduceLane): it reads and moves the lane state (buffer
        # counters, open batches), the sticky partition and the keys, and leaves all else to `accept`.
        # Not for transactions.
        self.lane: Any = None
        if native is not None and self.txn is None:
            try:  # a slot LANE_SLOTS names that is none fails here, the IO thread stopped
                self.lane = native.ProduceLane(
                    self.state,
                    self._sticky.topics if self._keyless_sticky else None,
                    None if self._keyed is None else self._keyed.maps,
                    KEY_HASH_NONE if self._keyed is None else self._keyed.key_hash,
                    self._legal_topics,
                    self.client.metadata,
                    self.sender.wake,
                    self.lock,
                    self._now,
                    conf.on_delivery,
                    _Stick,
                    *LANE_SLOTS["_Stick"],
                    *LANE_SLOTS["ClusterView"],
                    self._max_record_bytes,
                    conf.batch_size,
                    conf.batch_num_messages,
                    self.acc.room,
                )
            except BaseException:
                self.close()
                raise
        # As librdkafka: the cluster is contacted at once (the brokers' metadata, or the producer id
        # when idempotent), so the first record does not wait for it and an unreachable cluster is
        # reported through error_cb before anything is produced.
        self.sender.wake()

    # --- admission -------------------------------------------------------------------------------

    def accept(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        timestamp: int,
        headers: Any,
        callback: Callable[..., Any] | None,
        future: Future[RecordMetadata] | None,
    ) -> None:
        """Check and convert one record's fields, then `admit` it. The common case (bytes, no headers,
        default partition and timestamp, a topic seen before) skips the checks, which would all pass."""
        if self.failed_for_good():
            raise KafkaException(KafkaError(KafkaError._FATAL, "Unable to produce message: Local: Fatal error"))
        if self.txn is not None:
            self.txn.state.require(Call.PRODUCE)
        if topic not in self._legal_topics:
            check_topic(topic)
            if len(self._legal_topics) < 10_000:
                self._legal_topics.add(topic)
        if (
            partition.__class__ is not int
            or timestamp.__class__ is not int
            or not -1 <= partition <= INT32_MAX
            or not 0 <= timestamp <= INT64_MAX
        ):
            check_fields(partition, timestamp, callback)
        elif callback is not None and not callable(callback):
            raise TypeError("on_delivery/callback must be callable")
        key_b = key if key is None or key.__class__ is bytes else to_bytes(key, "key")
        value_b = value if value is None or value.__class__ is bytes else to_bytes(value, "value")
        hdrs = None if headers is None else to_headers(headers)
        now = self._now()
        msg = PendingMessage(topic, partition, key_b, value_b, hdrs, timestamp, callback, future, now)
        with self.lock:
            wake = self.admit(msg, self.client.metadata.partition_counts.get(topic, 0), now)
            # The path that served it (core/lane_state.py SERVED_PATHS): a plain record the C lane left, or not.
            if hdrs is None and key_b is key and value_b is value:
                self.state.twin_served += 1
            else:
                self.state.slow_served += 1
        if wake:
            self.sender.wake()

    def admit(self, msg: PendingMessage, count: int, now: float, runs: dict[int, list[Pending]] | None = None) -> bool:
        """The one admission path (under ``lock``): take buffer room, pick the partition among
        ``count`` (0: metadata unknown, the sender waits for it) and queue the record: in the
        accumulator, or with ``runs`` (the bulk paths) in its partition's run, handed over in one
        `Accumulator.extend` per partition. Raises `KafkaException` (too large, no such partition)
        or `BufferError` (full, after ``max.block.ms``), holding no room then. True: sender, look."""
        size, most, headers = msg.size, self._max_record_bytes, msg.headers or ()
        if (
            size > most - WIDEST_GAP - HEADER_GAP * len(headers)
            and (wide := record_size_widest(msg.key, msg.value, headers)) > most
        ):
            raise KafkaException(_too_large(wide, most))  # librdkafka's measure, as confluent-kafka refuses
        value = msg.value
        charge = 0 if value is None else len(value)  # buffer_charge(value), inline: it runs per record
        if not self.state.take_room(charge):
            # What was admitted before must be on its way while this waits, or no report frees
            # room: the bulk paths' gathered runs handed over, the sender woken now, not after.
            if runs:
                self._hand_over(msg.topic, runs, now)
            self.sender.wake()
            self._wait_for_room(charge)
        if not count:
            return self.sender.await_metadata(msg)
        partition = msg.partition
        if partition == -1:
            key = msg.key
            if key is None and self._keyless_sticky:
                partition = self._sticky.partition(msg.topic, count, None, size, now)
            else:
                partition = self._partition_for(msg.topic, key, count, size)
            if not 0 <= partition < count:
                self.release(1, charge)
                raise KafkaException(
                    KafkaError(KafkaError._UNKNOWN_PARTITION, f"partitioner chose {partition} of {count}")
                )
            msg.partition = partition
        elif not 0 <= partition < count:
            self.release(1, charge)
            raise KafkaException(
                KafkaError(KafkaError._UNKNOWN_PARTITION, f"{msg.topic} has {count} partitions, not {partition}")
            )
        if runs is None:
            return self.acc.append(msg, now)
        run = runs.get(partition)
        if run is None:
            runs[partition] = [msg]
        else:
            run.append(msg)
        return False

    def queue_checked(
        self, topic: str, prepared: list[Prepared], refused: list[tuple[Any, KafkaError]], wait: bool
    ) -> None:
        """Queue checked records of one topic (the bulk paths), in slices under one lock hold each
        (one clock read and metadata lookup per slice) so the sender keeps sending between them.
        A record `admit` refuses is added to ``refused`` as (handle, error), and so is every record
        left when the producer fails for good. When the buffer is full: with ``wait``, serve
        reports (frees room) and go on; without, refuse that record with ``_QUEUE_FULL``."""
        index = 0
        while index < len(prepared):
            try:
                if self.failed_for_good():
                    raise KafkaException(KafkaError(KafkaError._FATAL))
                if self.txn is not None:
                    self.txn.state.require(Call.PRODUCE)
            except KafkaException as exc:
                refused.extend((p[0], exc.args[0]) for p in prepared[index:])
                return
            index, full = self._queue_slice(topic, prepared, index, min(index + _SLICE, len(prepared)), refused, wait)
            if full:
                self.room.wait(None)

    def queue_messages(
        self, topic: str, messages: list[Any], partition: Any, callback: Any, refused: list[tuple[int, KafkaError]]
    ) -> int | None:
        """`produce_batch`'s messages on the lane when every one is plain (`native.pending_from_dicts`:
        bytes/str/None, no headers, the common partition and timestamp values); None, nothing
        queued, when not: the caller checks them the usual way. Else the index from which every
        record was refused for want of room (`len(messages)`: none was), and the other refusals
        as (index, error) in ``refused``."""
        if self.lane is None or native is None:
            return None
        records = native.pending_from_dicts(messages, topic, partition, callback, self._now())
        if records is None:
            return None
        return self._queue_records(
            topic, len(records), partial(native.lane_queue, self.lane, records), records.__getitem__, refused, False
        )

    def queue_columns(
        self, topic: str, rows: int, columns: tuple[Any, ...], callback: Any, refused: list[tuple[int, KafkaError]]
    ) -> bool:
        """The Arrow writer's rows on the lane, read from the columns' buffers in C: with value and
        key columns only, as row numbers into them (`native.arrow_columns`: no object per row);
        else as PendingMessages (`native.pending_from_columns`: value, key, partitions,
        timestamps, headers). False, nothing queued, when a row needs the per-row path. Waits for
        room; refusals as (row, error)."""
        if self.lane is None or native is None:
            return False
        value, key, partitions, timestamps, headers = columns
        if partitions is None and timestamps is None and headers is None:
            # Value and key only: the rows are queued as row numbers into the columns (ArrowRows
            # entries, native_c/arrow_rows.c), read from the buffers when encoded and reported.
            table = native.arrow_columns(topic, rows, value, key, callback, self._now())
            self._queue_records(
                topic, rows, partial(native.lane_queue_rows, self.lane, table), table.pending, refused, True
            )
            return True
        records = native.pending_from_columns(topic, rows, *columns, callback, self._now())
        if records is None:
            return False
        self._queue_records(
            topic, len(records), partial(native.lane_queue, self.lane, records), records.__getitem__, refused, True
        )
        return True

    def _queue_records(
        self,
        topic: str,
        total: int,
        lane_run: Callable[[int, int, int, float], tuple[int, int]],
        record: Callable[[int], PendingMessage],
        refused: list[tuple[int, KafkaError]],
        wait: bool,
    ) -> int:
        """`queue_checked` for ``total`` records made in C: in slices under one lock hold each, the
        lane's C loop (``lane_run(start, stop, count, now)``, ``now`` for the sticky timer: `native.lane_queue` over PendingMessages,
        `native.lane_queue_rows` over an Arrow batch's columns) appending the runs it can take as
        `admit` would, and `admit` deciding each ``record(index)`` it leaves (a new batch or sticky
        partition, a full buffer, a refusal). Returns where a full buffer refused the rest
        (``total``: it did not), left to the caller to mark: a caller offering the same records
        again after each poll meets that refusal many times a record."""
        index = 0
        while index < total:
            if self.failed_for_good():
                refused.extend((i, KafkaError(KafkaError._FATAL)) for i in range(index, total))
                return total
            stop = min(index + _SLICE, total)
            now = self._now()
            wake = full = False
            rest = total
            with self.lock:
                count = self.client.metadata.partition_counts.get(topic, 0)
                while index < stop:
                    index, filled = lane_run(index, stop, count, now)
                    wake = wake or bool(filled)
                    if index == stop:
                        break
                    msg = record(index)
                    try:
                        wake = self.admit(msg, count, now) or wake
                        self._served(msg.headers)
                    except KafkaException as exc:
                        refused.append((index, exc.args[0]))
                    except BufferError:
                        if wait:
                            full = True
                            break
                        rest = index
                        break
                    index += 1
            if wake:
                self.sender.wake()
            if rest < total:
                return rest
            if full:
                self.room.wait(None)
        return total

    def _queue_slice(
        self,
        topic: str,
        prepared: list[Prepared],
        start: int,
        stop: int,
        refused: list[tuple[Any, KafkaError]],
        wait: bool,
    ) -> tuple[int, bool]:
        """`admit` ``prepared[start:stop]``: (the index of the next record, whether the buffer was full)."""
        now = self._now()
        wake = False
        index = start
        runs: dict[int, list[Pending]] = {}  # per partition, in order
        admit = self.admit
        with self.lock:
            count = self.client.metadata.partition_counts.get(topic, 0)
            while index < stop:
                handle, value, key, part, timestamp, headers, cb = prepared[index]
                msg = PendingMessage(topic, part, key, value, headers, timestamp, cb, None, now)
                try:
                    wake = admit(msg, count, now, runs) or wake
                    self._served(headers)
                except KafkaException as exc:
                    refused.append((handle, exc.args[0]))
                except BufferError:
                    if not wait:
                        refuse_rest(refused, [p[0] for p in prepared[index:]])
                        index = stop = len(prepared)
                    break
                index += 1
            wake = self._hand_over(topic, runs, now) or wake
        if wake:
            self.sender.wake()
        return index, index < stop

    def _served(self, headers: Any) -> None:
        """Count a record the bulk paths' Python admission queued (under ``lock``): plain (the C
        loop's twin) when it has no headers, its values being bytes by now."""
        if headers is None:
            self.state.twin_served += 1
        else:
            self.state.slow_served += 1

    def _hand_over(self, topic: str, runs: dict[int, list[Pending]], now: float) -> bool:
        """Move the records `admit` gathered in ``runs`` into the accumulator (under ``lock``);
        True when the sender should look now."""
        wake = False
        for partition, run in runs.items():
            wake = self.acc.extend(topic, partition, run, now) or wake
        runs.clear()
        return wake

    def _wait_for_room(self, charge: int) -> None:
        """Take buffer room for a record when the fast check found none (under ``lock``): wait up to
        ``max.block.ms`` (`Room.take`), else `BufferError`."""
        self.room.take(self.state, charge, self.conf.max_block_ms / 1000)

    def reported(self) -> bool:
        """Every record produced so far has been reported (what flush() and close() wait for)."""
        return self.state.outstanding == 0

    def release(self, count: int, charge: int) -> None:
        """Free the room of ``count`` reported records (any thread)."""
        with self.lock:
            self.state.outstanding -= count
            self.state.buffered_bytes -= charge
            waiting = self.room.freed()
        if waiting or self.state.outstanding == 0:
            self.executor.notify()

    # --- partitions ------------------------------------------------------------------------------

    def assign_partition(self, msg: Pending, count: int) -> int:
        """The partition of a record that waited for its topic's metadata: the one the caller named
        (the sender fails it with _UNKNOWN_PARTITION when out of range), else the partitioner's,
        as librdkafka's before the leaders serve the partitions (a keyless record's is redrawn)."""
        if msg.partition != -1:
            return msg.partition
        return self._choose_partition(msg.topic, msg.key, count, msg.size, served=False)

    def _partition_for(self, topic: str, key: bytes | None, count: int, size: int) -> int:
        """`_choose_partition`, with a built-in partitioner's answer for a key remembered."""
        if key is not None and self._keyed is not None:
            chosen = self._keyed.partition(topic, key, count)
            if chosen >= 0:
                return chosen
        return self._choose_partition(topic, key, count, size)

    def _choose_partition(self, topic: str, key: bytes | None, count: int, size: int, served: bool = True) -> int:
        """The partitioner's choice, or -1 when user code answered nonsense or raised."""
        try:
            now = self._now()
            return choose_partition(self._partitioner, self._sticky, topic, key, count, None, size, now, served=served)
        except Exception:
            self._log.exception("the partitioner failed for topic %s", topic)
            return -1

    # --- the rest of the records' life -----------------------------------------------------------

    def failed_for_good(self) -> bool:
        """A fatal error happened (the sender's, or the transaction's: fenced): as librdkafka, a record
        produced after it is refused with ``_FATAL``, the cause having gone to ``error_cb``."""
        return self.sender.fatal is not None or (self.txn is not None and self.txn.state.state is TxnState.FATAL_ERROR)

    def flush(self, timeout: float | None, serve: Callable[[float | None, Callable[[], bool]], None]) -> int:
        """Send everything now (linger is off while any flush runs) and wait until every record is
        reported or ``timeout`` s passed (None or negative: no limit); returns how many are left.

        In poll mode the reports are served meanwhile by ``serve(seconds, until)``, the face's (it
        decides what a callback's exception means), what is queued at once even with ``timeout=0``; with a
        report thread they are waited for. Either wait ends as the last record is reported
        (`release` notifies), callback or not. On the report thread itself a flush only sends: the running
        callback's own record cannot be reported until it returns."""
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        executor = self.executor
        debug = self.client.debug
        if debug.queue:
            queue_log.flushing(debug, self.state.outstanding)
        with self.lock:
            self.acc.flush_started()
        self.sender.wake()
        done = self.reported
        background = executor.background
        # On the report thread or the IO thread (an interceptor's on_acknowledgement) a flush
        # only sends: the records wait for that very thread, busy with the caller.
        waits = not executor.on_report_thread and not self.client.engine.in_io_thread
        try:
            if not background and executor.waiting:  # (an empty queue: nothing to serve at once)
                serve(0, done)
            while waits and not done():
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                if background:
                    executor.wait_idle(done, remaining)
                else:
                    serve(remaining, done)
        finally:
            with self.lock:
                self.acc.flush_ended()
        if debug.queue:
            queue_log.flushed(debug, self.state.outstanding)
        return self.state.outstanding

    def purge(self, in_queue: bool, in_flight: bool, blocking: bool) -> None:
        if self.client.debug.queue:
            queue_log.purging(self.client.debug, in_queue, in_flight, blocking, self.state.outstanding)
        if self.client.engine.in_io_thread:  # from on_acknowledgement: purge here, nothing to wait for
            self.sender.purge(in_queue, in_flight)
            return
        done = self.client.engine.run(lambda: self.sender.purge(in_queue, in_flight))
        if blocking:
            done.result()

    def metrics(self) -> dict[str, float]:
        """The producer's own client metrics (KIP-714) over the push interval, on the IO thread."""
        avg, peak = self.sender.queue_time.take()
        return {"record.queue.time.avg": avg, "record.queue.time.max": peak}

    def close(self) -> None:
        self.telemetry.close()
        self.client.close()


__all__ = ["ProducerEngine", "refuse_rest"]
