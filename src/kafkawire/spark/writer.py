"""Writing to Kafka from Spark: ``df.write`` / ``df.writeStream`` ``.format("kafkawire")``.

The driver builds the writer once per write (batch job or streaming query): it checks the schema
with the messages of Spark's connector (``KafkaWriter.validateQuery``), the options and the producer
config, so mistakes fail before any task runs. Spark then pickles the writer to the Python workers.

In a worker, ``write()`` gets the task's Arrow record batches and hands each whole batch to
`kafkawire.producer.arrow.produce_arrow`. Producers are cached per worker process by their
config, reused across tasks and micro-batches, and closed at exit. ``write()`` flushes before it
returns and raises the first failed delivery, so a task succeeds only once every one of its rows
is acknowledged; it returns a `KafkaWriteCommitMessage` with its counts.

With ``exactlyOnce=true`` each task writes in one Kafka transaction (see
`kafkawire.spark.exactly_once`): a fresh transactional producer per task, because
``init_transactions()`` per attempt is what fences the attempts before it.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DoubleType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ..core.kafka_error import KafkaError, KafkaException
from ..producer.arrow import DeliveryTracker, check_arrow_schema, produce_arrow
from . import exactly_once as eo
from .cache import ProcessCache
from .formats import avro_fields, encode_batch, write_formats
from .options import (
    STREAM_WRITE_OPTIONS,
    WRITE_OPTIONS,
    bool_option,
    check_option_names,
    producer_params,
    source_option,
)

# The Arrow writers where this PySpark has them (DataSourceStreamArrowWriter is 4.1+), else Row writers.
_datasource = importlib.import_module("pyspark.sql.datasource")
_BatchBase: Any = getattr(_datasource, "DataSourceArrowWriter", DataSourceWriter)
_StreamBase: Any = getattr(_datasource, "DataSourceStreamArrowWriter", DataSourceStreamWriter)

if TYPE_CHECKING:
    from pyspark.sql.types import Row

    from ..producer.producer import Producer

log = logging.getLogger("kafkawire.spark")
RecordBatch = Any  # pyarrow ships no type information

HEADERS_TYPE = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())]), containsNull=True
)
OVERWRITE_MESSAGE = (
    "Kafka topics are append-only: the kafkawire data source cannot overwrite. "
    'Use .mode("append") (or, for a stream, the append output mode).'
)
# Test hook (contributing/README.md): attempt 0 of every task produces this many rows of its first
# batch, flushes them (inside its transaction with exactlyOnce) and then kills its Python worker,
# as a lost executor would; Spark retries the task. Not for production use.
TEST_FAIL_OPTION = "testFailFirstAttemptAfterRows"
QUERY_ID_PROPERTY = "sql.streaming.queryId"
BATCH_ID_PROPERTY = "streaming.sql.batchId"


# --- schema checks (driver) ----------------------------------------------------------------------


def _same_type(a: DataType, b: DataType) -> bool:
    """Spark's ``sameType``: equal ignoring nullability."""
    return a.simpleString() == b.simpleString()


def validate_schema(schema: StructType, topic: str | None, encoded: Sequence[str] = ()) -> None:
    """Refuse a schema as Spark's connector does, with its messages (``KafkaWriter.validateQuery``),
    plus the timestamp column, which the connector only checks when the first row is written.
    The ``encoded`` columns (keyFormat/valueFormat avro) may have any type."""
    by_name = {f.name: f.dataType for f in schema.fields}

    def check(name: str, desired: Sequence[DataType]) -> None:
        if name not in by_name or name in encoded:
            return
        actual = by_name[name]
        if not any(_same_type(actual, d) for d in desired):
            wanted = " or ".join(d.simpleString() for d in desired)
            raise ValueError(f"{name} attribute unsupported type {actual.simpleString()}. {name} must be a(n) {wanted}")

    if topic is None:
        if "topic" not in by_name:
            raise ValueError(
                "topic option required when no 'topic' attribute is present. Use the topic option for setting a topic."
            )
        check("topic", [StringType()])
    check("key", [StringType(), BinaryType()])
    if "value" not in by_name:
        raise ValueError("Required attribute 'value' not found")
    check("value", [StringType(), BinaryType()])
    check("headers", [HEADERS_TYPE])
    check("partition", [IntegerType()])
    check("timestamp", [DoubleType(), TimestampType()])


# --- the per-process producer cache (workers) ----------------------------------------------------


def _new_producer(params: dict[str, str]) -> Producer:
    from ..producer import Producer

    return Producer(params)


# Closed at exit, or after a failed task so that the next task starts clean.
producers: ProcessCache[Producer] = ProcessCache(_new_producer, lambda producer: producer.close(10))


# --- commit messages -----------------------------------------------------------------------------


@dataclass
class KafkaWriteCommitMessage(WriterCommitMessage):
    """What one task wrote: its rows and bytes (key + value + headers), the (topic, partition)s
    its records went to, and, for streaming, the micro-batch id. ``skipped`` is True when an
    exactly-once task found its batch already committed (a replay) and wrote nothing.
    ``first_row_at`` and ``done_at`` (wall clock, ``time.time()``) bound the task's writing: its
    first row reaching the writer, its last record acknowledged (or its transaction committed)."""

    partition_id: int
    attempt: int
    rows: int = 0
    bytes: int = 0
    partitions: list[tuple[str, int]] = field(default_factory=list)
    batch_id: int | None = None
    transactional_id: str | None = None
    skipped: bool = False
    first_row_at: float | None = None
    done_at: float | None = None


def summarize(messages: Sequence[WriterCommitMessage | None], batch_id: int | None = None) -> dict[str, Any]:
    """Totals over the tasks' commit messages (a failed task's message is None)."""
    done = [m for m in messages if isinstance(m, KafkaWriteCommitMessage)]
    partitions = sorted({tuple(p) for m in done for p in m.partitions})
    return {
        "batch_id": batch_id,
        "tasks": len(messages),
        "failed_tasks": sum(1 for m in messages if m is None),
        "skipped_tasks": sum(1 for m in done if m.skipped),
        "rows": sum(m.rows for m in done),
        "bytes": sum(m.bytes for m in done),
        "partitions": [list(p) for p in partitions],
        "writing_seconds": writing_seconds(done),
        "task_messages": [asdict(m) for m in done],
    }


def writing_seconds(done: Sequence[KafkaWriteCommitMessage]) -> float | None:
    """From the first row any task received to the last task done: the write without Spark
    starting the job (Python workers, planning, the JIT's first pass before rows flow). Hosts'
    wall clocks: one clock in local mode. None when no task wrote a row."""
    spans = [(m.first_row_at, m.done_at) for m in done if m.first_row_at is not None and m.done_at is not None]
    if not spans:
        return None
    return max(end for _, end in spans) - min(start for start, _ in spans)


# --- the writer ----------------------------------------------------------------------------------


class _KafkaWrite:
    """Everything a write needs, decided on the driver and pickled to the workers."""

    def __init__(self, schema: StructType, options: dict[str, str], overwrite: bool, streaming: bool) -> None:
        if overwrite:
            raise ValueError(OVERWRITE_MESSAGE)
        check_option_names(options, STREAM_WRITE_OPTIONS if streaming else WRITE_OPTIONS, "write")
        self.topic = source_option(options, "topic")
        validate_schema(schema, self.topic, avro_fields(options))
        self.formats = write_formats(options, schema, self.topic)
        self.params = producer_params(options)
        from ..producer.producer_config import parse_producer_config

        parse_producer_config(self.params)  # unknown or invalid producer options fail here, on the driver
        self.streaming = streaming
        self.exactly_once = bool_option(options, "exactlyOnce")
        self.summary_path = source_option(options, "summaryPath")
        fail_after = source_option(options, TEST_FAIL_OPTION)
        self.fail_first_attempt_after = int(fail_after) if fail_after is not None else None
        self.job_id = uuid.uuid4().hex[:16]  # the scope of a batch write's transactional ids
        self.prefix: str | None = None
        self.control_topic = eo.DEFAULT_CONTROL_TOPIC
        self.txn_timeout = 60.0
        if self.exactly_once:
            self.prefix = source_option(options, "transactionalIdPrefix")
            if not self.prefix:
                raise ValueError("exactlyOnce=true needs the option 'transactionalIdPrefix'")
            if "transactional.id" in self.params:
                raise ValueError(
                    "with exactlyOnce=true the data source sets each task's transactional.id "
                    "(transactionalIdPrefix-<query or job id>-<partition>): do not set kafka.transactional.id"
                )
            self.control_topic = source_option(options, "exactlyOnceControlTopic") or eo.DEFAULT_CONTROL_TOPIC
            self.txn_timeout = int(self.params.get("transaction.timeout.ms", "60000")) / 1000
            eo.ensure_control_topic(self.params, self.control_topic)
        elif "transactional.id" in self.params:
            raise ValueError(
                "kafka.transactional.id would make every task share one transaction: "
                "use exactlyOnce=true with transactionalIdPrefix instead"
            )

    # --- worker side ---

    def write_task(self, batches: Iterator[RecordBatch]) -> KafkaWriteCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition_id = ctx.partitionId() if ctx is not None else 0
        attempt = ctx.attemptNumber() if ctx is not None else 0
        batch_id: int | None = None
        scope = self.job_id
        if self.streaming and ctx is not None:
            raw_batch = ctx.getLocalProperty(BATCH_ID_PROPERTY)
            batch_id = int(raw_batch) if raw_batch is not None else None
            scope = ctx.getLocalProperty(QUERY_ID_PROPERTY) or scope
        message = KafkaWriteCommitMessage(partition_id, attempt, batch_id=batch_id)
        batches = (encode_batch(b, self.formats, f"task {partition_id}'s batch") for b in batches)
        inject = self.fail_first_attempt_after if attempt == 0 else None
        if self.exactly_once:
            self._write_in_transaction(batches, message, scope, inject)
        else:
            self._write_plain(batches, message, inject)
        message.done_at = time.time()
        return message

    def _produce_all(
        self,
        producer: Producer,
        batches: Iterator[RecordBatch],
        tracker: DeliveryTracker,
        message: KafkaWriteCommitMessage,
        inject: int | None,
    ) -> None:
        for batch in batches:
            if message.first_row_at is None:
                message.first_row_at = time.time()
            if inject is not None:  # the test hook: part of the rows, flushed, then the worker dies
                part = batch.slice(0, min(inject, batch.num_rows))
                produce_arrow(producer, part, self.topic, on_delivery=tracker, check_schema=False)
                producer.flush(30)
                log.warning("test hook %s: killing this Python worker after %d rows", TEST_FAIL_OPTION, part.num_rows)
                os._exit(17)
            counts = produce_arrow(producer, batch, self.topic, on_delivery=tracker, check_schema=False)
            message.rows += counts.rows
            message.bytes += counts.bytes
            if tracker.first_error is not None:
                break  # fail fast: the first failed delivery fails the task

    def _raise_delivery_error(self, tracker: DeliveryTracker, message: KafkaWriteCommitMessage) -> None:
        error = tracker.first_error
        if error is None:
            return
        raise KafkaException(
            KafkaError(
                error.code(),
                f"kafkawire: writing to Kafka failed: {error.str()} "
                f"({tracker.failed} of {message.rows} record(s) of task {message.partition_id} not delivered)",
            )
        )

    def _write_plain(
        self, batches: Iterator[RecordBatch], message: KafkaWriteCommitMessage, inject: int | None
    ) -> None:
        tracker = DeliveryTracker()
        producer = producers.get(self.params)
        try:
            self._produce_all(producer, batches, tracker, message, inject)
            producer.flush()
            self._raise_delivery_error(tracker, message)
        except BaseException:
            producers.close(self.params)
            raise
        message.partitions = sorted(tracker.partitions)

    def _write_in_transaction(
        self, batches: Iterator[RecordBatch], message: KafkaWriteCommitMessage, scope: str, inject: int | None
    ) -> None:
        from ..producer import Producer

        assert self.prefix is not None
        batch_id = message.batch_id if message.batch_id is not None else 0
        tid = eo.transactional_id(self.prefix, scope, message.partition_id)
        key = eo.marker_key(scope, message.partition_id)
        message.transactional_id = tid
        producer = Producer({**self.params, "transactional.id": tid})
        in_transaction = False
        try:
            # Fences every earlier attempt of this task and finishes its open transaction.
            producer.init_transactions(self.txn_timeout)
            marker = eo.committed_marker(self.params, self.control_topic, key)
            if marker.batch_id is not None and marker.batch_id >= batch_id:
                for _ in batches:  # already committed by an earlier attempt: write nothing
                    pass
                message.skipped = True
                return
            tracker = DeliveryTracker()
            producer.begin_transaction()
            in_transaction = True
            self._produce_all(producer, batches, tracker, message, inject)
            producer.produce(
                self.control_topic,
                eo.marker_value(batch_id, message.rows, message.attempt),
                key,
                partition=marker.partition,
                on_delivery=tracker,
            )
            producer.flush(self.txn_timeout)
            self._raise_delivery_error(tracker, message)
            producer.commit_transaction(self.txn_timeout)
            in_transaction = False
            tracker.partitions.discard((self.control_topic, marker.partition))
            message.partitions = sorted(tracker.partitions)
        except BaseException:
            if in_transaction:
                try:
                    producer.abort_transaction(10)
                except Exception:  # fenced or broken: the coordinator aborts it (next attempt or timeout)
                    log.debug("abort after a failed task", exc_info=True)
            raise
        finally:
            try:
                producer.close(10)
            except Exception:
                log.debug("closing the transactional producer", exc_info=True)

    # --- driver side ---

    def record(self, messages: Sequence[WriterCommitMessage | None], batch_id: int | None, outcome: str) -> None:
        summary = {"outcome": outcome, "time": time.time(), **summarize(messages, batch_id)}
        log.info(
            "kafkawire write %s: %d rows, %d bytes, %d partitions, batch %s",
            outcome,
            summary["rows"],
            summary["bytes"],
            len(summary["partitions"]),
            batch_id,
        )
        if self.summary_path:
            with open(self.summary_path, "a", encoding="utf-8") as out:
                out.write(json.dumps(summary) + "\n")


class KafkaBatchWriter(_BatchBase):  # type: ignore[misc]
    """``df.write.format("kafkawire")``: Arrow record batches in, one commit message per task."""

    def __init__(self, write: _KafkaWrite) -> None:
        self._write = write

    def write(self, iterator: Iterator[Any]) -> KafkaWriteCommitMessage:
        return self._write.write_task(_as_batches(iterator))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self._write.record(messages, None, "committed")

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self._write.record(messages, None, "aborted")


class KafkaStreamWriter(_StreamBase):  # type: ignore[misc]
    """``df.writeStream.format("kafkawire")``: each micro-batch's tasks write; commit messages carry the batch id."""

    def __init__(self, write: _KafkaWrite) -> None:
        self._write = write

    def write(self, iterator: Iterator[Any]) -> KafkaWriteCommitMessage:
        return self._write.write_task(_as_batches(iterator))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._write.record(messages, batchId, "committed")

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._write.record(messages, batchId, "aborted")


def _as_batches(iterator: Iterator[Any]) -> Iterator[RecordBatch]:
    """Arrow writers get record batches; the Row writers of an older PySpark get Rows, batched here."""
    pa = importlib.import_module("pyarrow")
    pending: list[Row] = []
    for item in iterator:
        if isinstance(item, pa.RecordBatch):
            yield item
            continue
        pending.append(item)
        if len(pending) >= 10_000:
            yield pa.RecordBatch.from_pylist([r.asDict(recursive=True) for r in pending])
            pending = []
    if pending:
        yield pa.RecordBatch.from_pylist([r.asDict(recursive=True) for r in pending])


def batch_writer(schema: StructType, options: Mapping[str, str], overwrite: bool) -> DataSourceWriter:
    return KafkaBatchWriter(_KafkaWrite(schema, dict(options), overwrite, streaming=False))


def stream_writer(schema: StructType, options: Mapping[str, str], overwrite: bool) -> DataSourceStreamWriter:
    return KafkaStreamWriter(_KafkaWrite(schema, dict(options), overwrite, streaming=True))


__all__ = [
    "KafkaBatchWriter",
    "KafkaStreamWriter",
    "KafkaWriteCommitMessage",
    "batch_writer",
    "check_arrow_schema",
    "stream_writer",
    "summarize",
    "validate_schema",
]
