"""Reading Kafka into Spark: batch (`DataSourceReader`) and streaming (`DataSourceStreamReader`).

The driver resolves where each Kafka partition's read starts and ends (ListOffsets through
`kafkawire.consumer`); each range becomes one Spark input partition, and large ranges are split
(``maxRecordsPerPartition``, default 1,000,000 offsets; ``minPartitions`` splits further). A task
reads its range with Fetch and hands Spark Arrow record batches built column by column.

Streaming offsets are Spark's connector's JSON shape, ``{"topic": {"0": 42}}``: the next offset to
read per partition. ``maxOffsetsPerTrigger`` caps each micro-batch, spread over the partitions in
proportion to their backlog as the connector does; ``Trigger.AvailableNow`` reads up to the
offsets seen when the query started. A partition that appears while a query runs is read from its
earliest offset.

Every Python worker process keeps one `Client` per Kafka config, reused across tasks and closed at
exit.
"""

from __future__ import annotations

import importlib
import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafkawire.client.driver import Tries
from kafkawire.client.network_client import Client
from kafkawire.core import TopicPartitionKey
from kafkawire.core.kafka_error import KafkaError
from kafkawire.range_reader import (
    EARLIEST,
    LATEST,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    FetchSettings,
    fetch_range,
    high_watermarks,
    list_offsets,
    partitions_for,
    topics_matching,
)
from kafkawire.records import RecordBatch
from kafkawire.spark.avro_codec import AvroRead
from kafkawire.spark.cache import ProcessCache
from kafkawire.spark.formats import column_type, read_formats
from kafkawire.spark.options import source_option
from kafkawire.spark.read_options import (
    OffsetLimit,
    ReadOptionError,
    ReadOptions,
    batch_options,
    stream_options,
    tp_name,
)

LOGGER = logging.getLogger("kafkawire.spark")

ARROW_BATCH_ROWS = 8192
ARROW_BATCH_BYTES = 64 << 20  # a Spark Arrow batch's keys and values (binary columns hold < 2 GiB)
METADATA_TIMEOUT = 30.0

HEADER_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def read_schema(options: Mapping[str, str], formats: Mapping[str, AvroRead] | None = None) -> StructType:
    """Spark's Kafka connector's columns; ``headers`` with ``includeHeaders=true``; key and value
    decoded into their Avro schema's type with keyFormat/valueFormat avro (see `formats`)."""
    if formats is None:
        formats = read_formats(options)
    fields = [
        StructField("key", column_type(formats, "key", BinaryType())),
        StructField("value", column_type(formats, "value", BinaryType())),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if (source_option(options, "includeHeaders") or "false").strip().lower() == "true":
        fields.append(StructField("headers", HEADER_TYPE))
    return StructType(fields)


def _check_schema(schema: StructType, options: Mapping[str, str]) -> dict[str, AvroRead]:
    formats = read_formats(options)
    if schema != read_schema(options, formats):
        raise ReadOptionError("Kafka source has a fixed schema and cannot be set with a custom one")
    return formats


def batch_reader(schema: StructType, options: Mapping[str, str]) -> KafkaBatchReader:
    opts = batch_options(options)
    return KafkaBatchReader(schema, opts, _check_schema(schema, options))


def stream_reader(schema: StructType, options: Mapping[str, str]) -> KafkaStreamReader:
    opts = stream_options(options)
    return KafkaStreamReader(schema, opts, _check_schema(schema, options))


# --- clients, one per config per process ----------------------------------------------------

clients: ProcessCache[Client] = ProcessCache(Client, lambda client: client.close())


def look_up_tries(opts: ReadOptions) -> Tries:
    """A driver-side look-up (partitions, offsets) is made ``fetchOffset.numRetries`` times in all,
    ``fetchOffset.retryIntervalMs`` apart, as the connector does (the request driver's `Tries`);
    the last failure is raised."""
    count = opts.offset_fetch_attempts

    def failed(attempt: int, error: KafkaError) -> None:
        LOGGER.warning("Kafka look-up failed (attempt %d of %d), retrying: %s", attempt, count, error)

    return Tries(count, opts.offset_retry_interval, failed)


def assigned_partitions(client: Client, opts: ReadOptions) -> list[TopicPartitionKey]:
    if opts.strategy == "assign":
        return sorted(set(opts.assigned))
    if opts.strategy == "subscribe":
        found = partitions_for(client, opts.topics, timeout=METADATA_TIMEOUT, tries=look_up_tries(opts))
    else:
        pattern = opts.pattern
        assert pattern is not None
        found = topics_matching(client, pattern, timeout=METADATA_TIMEOUT, tries=look_up_tries(opts))
    return sorted((topic, p) for topic, parts in found.items() for p in parts)


def _isolation(opts: ReadOptions) -> int:
    return READ_COMMITTED if opts.read_committed else READ_UNCOMMITTED


def _ask(client: Client, opts: ReadOptions, queries: Mapping[TopicPartitionKey, int]) -> dict[TopicPartitionKey, int]:
    if not queries:
        return {}
    answers = list_offsets(
        client, queries, isolation_level=_isolation(opts), timeout=METADATA_TIMEOUT, tries=look_up_tries(opts)
    )
    return {tp: answer.offset for tp, answer in answers.items()}


def resolve(
    client: Client, opts: ReadOptions, limit: OffsetLimit, tps: list[TopicPartitionKey], *, starting: bool
) -> dict[TopicPartitionKey, int]:
    """Offsets for ``limit`` on every partition in ``tps`` (the next offset to read, or the end)."""
    if limit.kind == "earliest":
        return _ask(client, opts, dict.fromkeys(tps, EARLIEST))
    if limit.kind == "latest":
        return _ask(client, opts, dict.fromkeys(tps, LATEST))
    if limit.kind in ("offsets", "timestamps") and set(limit.per_partition) != set(tps):
        option = ("starting" if starting else "ending") + (
            "Offsets" if limit.kind == "offsets" else "OffsetsByTimestamp"
        )
        raise ReadOptionError(
            f"If {option} contains specific offsets, you must specify all TopicPartitions.\n"
            "Use -1 for latest, -2 for earliest.\n"
            f"Specified: {{{', '.join(sorted(map(tp_name, limit.per_partition)))}}} "
            f"Assigned: {{{', '.join(sorted(map(tp_name, tps)))}}}"
        )
    if limit.kind == "offsets":
        out = {tp: off for tp, off in limit.per_partition.items() if off >= 0}
        out.update(_ask(client, opts, {tp: off for tp, off in limit.per_partition.items() if off < 0}))
        return out
    if limit.kind == "timestamp":
        assert limit.timestamp is not None
        stamps = dict.fromkeys(tps, limit.timestamp)
    else:
        stamps = dict(limit.per_partition)
    found = _ask(client, opts, stamps)
    unmatched = [tp for tp, off in found.items() if off < 0]
    if unmatched and starting and not opts.latest_on_no_timestamp_match:
        tp = unmatched[0]
        raise ReadOptionError(
            f"No offset matched from request of topic-partition {tp_name(tp)} and timestamp {stamps[tp]}."
        )
    found.update(_ask(client, opts, dict.fromkeys(unmatched, LATEST)))
    return found


@dataclass(frozen=True)
class OffsetRange:
    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


class KafkaInputPartition(InputPartition):
    """One Spark task's work: offsets ``[start, end)`` of one Kafka partition."""

    def __init__(self, value: OffsetRange) -> None:
        super().__init__(value)
        self.value: OffsetRange = value


def plan_ranges(
    starts: Mapping[TopicPartitionKey, int],
    ends: Mapping[TopicPartitionKey, int],
    max_records: int,
    min_partitions: int | None = None,
) -> list[OffsetRange]:
    """Non-empty ranges, split so none holds more than ``max_records`` offsets and, with
    ``min_partitions``, so there are at least that many (larger ranges split into more pieces)."""
    whole = [OffsetRange(t, p, starts[(t, p)], end) for (t, p), end in sorted(ends.items()) if end > starts[(t, p)]]
    total = sum(r.size for r in whole)
    out: list[OffsetRange] = []
    for r in whole:
        pieces = math.ceil(r.size / max_records)
        if min_partitions and total and len(whole) < min_partitions:
            pieces = max(pieces, math.ceil(r.size * min_partitions / total))
        pieces = min(pieces, r.size)
        for i in range(pieces):
            lo = r.start + r.size * i // pieces
            hi = r.start + r.size * (i + 1) // pieces
            out.append(OffsetRange(r.topic, r.partition, lo, hi))
    return out


# --- a task's side: one range into Arrow record batches ---------------------------------------


def read_range(
    schema: StructType, opts: ReadOptions, r: OffsetRange, formats: Mapping[str, AvroRead] | None = None
) -> Iterator[Any]:
    """One range as Arrow record batches of about ``ARROW_BATCH_ROWS`` rows (or ``ARROW_BATCH_BYTES``
    of keys and values). Each Kafka batch is decoded straight into Arrow columns by the consumer's
    columnar decoder (`kafkawire.consumer.arrow`, the C extension where built), headers included:
    no Python object per record."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from kafkawire.consumer.arrow import SCHEMA, columns_of

    pa = importlib.import_module("pyarrow")  # typed as Any: pyarrow ships no type information
    pc = importlib.import_module("pyarrow.compute")

    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    stamp_type = arrow_schema.field("timestamp").type
    settings = FetchSettings(
        read_committed=opts.read_committed, fail_on_data_loss=opts.fail_on_data_loss, timeout=opts.fetch_timeout
    )
    client = clients.get(opts.kafka)
    headers_wanted = opts.include_headers
    pending: list[Any] = []  # record batches of consumer.arrow.SCHEMA
    rows = size = 0

    def records_of(batch: RecordBatch, start: int, end: int) -> Any:
        columns = columns_of(batch, start, r.topic, r.partition).batch
        if batch.next_offset > end:  # the range ends inside this batch
            columns = columns.slice(0, pc.sum(pc.less(columns.column(4), end)).as_py() or 0)
        return columns

    def flush() -> Any:
        table = pa.Table.from_batches(pending, schema=SCHEMA).combine_chunks()
        pending.clear()
        offsets = table.column(4)

        def where(field: str) -> Callable[[int], str]:
            return lambda i: f" ({field} of topic {r.topic!r}, partition {r.partition}, offset {offsets[i].as_py()})"

        columns = [
            _decoded(table.column(0).chunk(0), "key", where("key"), formats),
            _decoded(table.column(1).chunk(0), "value", where("value"), formats),
            *(table.column(i) for i in (2, 3, 4)),
            table.column(5).cast(stamp_type),
            table.column(6),
        ]
        if headers_wanted:  # null for a record without headers, as Spark's connector
            columns.append(table.column(7).cast(arrow_schema.field("headers").type))
        return pa.Table.from_arrays(columns, schema=arrow_schema).combine_chunks().to_batches()[0]

    def lost(message: str) -> None:
        LOGGER.warning(message)

    for _batch, columns in fetch_range(client, r.topic, r.partition, r.start, r.end, settings, lost, records_of):
        pending.append(columns)
        rows += columns.num_rows
        size += columns.column(0).nbytes + columns.column(1).nbytes
        if rows >= ARROW_BATCH_ROWS or size >= ARROW_BATCH_BYTES:
            yield flush()
            rows = size = 0
    if rows:
        yield flush()


def read_partition(
    schema: StructType, opts: ReadOptions, partition: InputPartition, formats: Mapping[str, AvroRead]
) -> Iterator[Any]:
    """A task's rows. When planning finds nothing to read, PySpark still runs one task, with a bare
    ``InputPartition(None)``: that task yields nothing, and the read is an empty DataFrame."""
    if not isinstance(partition, KafkaInputPartition):
        return iter(())
    return read_range(schema, opts, partition.value, formats)


def _decoded(column: Any, field: str, where: Callable[[int], str], formats: Mapping[str, AvroRead] | None) -> Any:
    """``column`` decoded from Avro with keyFormat/valueFormat avro; an undecodable record fails
    the task naming its topic, partition and offset."""
    plan = formats.get(field) if formats else None
    return column if plan is None else plan.decode(column, where)


# --- batch -------------------------------------------------------------------------------------


class KafkaBatchReader(DataSourceReader):
    def __init__(self, schema: StructType, opts: ReadOptions, formats: Mapping[str, AvroRead] | None = None) -> None:
        self.schema = schema
        self.formats = formats or {}
        self.opts = opts

    def partitions(self) -> list[KafkaInputPartition]:
        opts = self.opts
        client = clients.get(opts.kafka)
        tps = assigned_partitions(client, opts)
        starts = resolve(client, opts, opts.starting, tps, starting=True)
        ends = resolve(client, opts, opts.ending, tps, starting=False)
        for tp in tps:
            if ends[tp] < starts[tp]:
                raise ReadOptionError(
                    f"The starting offset ({starts[tp]}) of {tp_name(tp)} is greater than its ending offset "
                    f"({ends[tp]}) once resolved against the cluster."
                )
        ranges = plan_ranges(starts, ends, opts.max_records_per_partition, opts.min_partitions)
        return [KafkaInputPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_partition(self.schema, self.opts, partition, self.formats)


# --- streaming ---------------------------------------------------------------------------------


def offsets_to_json(offsets: Mapping[TopicPartitionKey, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def offsets_from_json(data: Mapping[str, Any]) -> dict[TopicPartitionKey, int]:
    return {(topic, int(p)): int(off) for topic, parts in data.items() for p, off in parts.items()}


def rate_limit(
    starts: Mapping[TopicPartitionKey, int], latest: Mapping[TopicPartitionKey, int], limit: int
) -> dict[TopicPartitionKey, int]:
    """At most about ``limit`` offsets in all, shared in proportion to each partition's backlog
    (a partition with any backlog moves at least one offset), as Spark's connector does."""
    backlog = {tp: end - starts.get(tp, end) for tp, end in latest.items() if end > starts.get(tp, end)}
    total = sum(backlog.values())
    if total <= limit:
        return dict(latest)
    out = dict(latest)
    for tp, size in backlog.items():
        share = limit * size / total
        step = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = min(latest[tp], starts[tp] + step)
    return out


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, schema: StructType, opts: ReadOptions, formats: Mapping[str, AvroRead] | None = None) -> None:
        self.schema = schema
        self.formats = formats or {}
        self.opts = opts
        self._target: dict[TopicPartitionKey, int] | None = None  # Trigger.AvailableNow's end
        self._last_trigger = time.monotonic()  # when the last micro-batch was planned (minOffsetsPerTrigger)

    def _client(self) -> Client:
        return clients.get(self.opts.kafka)

    def initialOffset(self) -> dict[str, Any]:
        client = self._client()
        tps = assigned_partitions(client, self.opts)
        return offsets_to_json(resolve(client, self.opts, self.opts.starting, tps, starting=True))

    def _latest(self) -> dict[TopicPartitionKey, int]:
        """Where the log ends now: the last stable offset (ListOffsets) under read_committed, else
        each partition's high watermark as Fetch reports it (`consumer.high_watermarks`: the same
        number as ListOffsets on Kafka, and right on an embedded Tansu too, contributing/judges.md)."""
        client = self._client()
        tps = assigned_partitions(client, self.opts)
        if self.opts.read_committed:
            return resolve(client, self.opts, OffsetLimit("latest"), tps, starting=False)
        by_topic: dict[str, list[int]] = {}
        for topic, partition in tps:
            by_topic.setdefault(topic, []).append(partition)
        ends: dict[TopicPartitionKey, int] = {}
        for topic, partitions in by_topic.items():
            found = high_watermarks(client, topic, partitions, METADATA_TIMEOUT, look_up_tries(self.opts))
            for partition, end in found.items():
                ends[(topic, partition)] = end
        return ends

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest()

    def getDefaultReadLimit(self) -> ReadLimit:
        n = self.opts.max_offsets_per_trigger
        return ReadAllAvailable() if n is None else ReadMaxRows(n)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        starts = offsets_from_json(start)
        latest = dict(self._target) if self._target is not None else self._latest()
        new = [tp for tp in latest if tp not in starts]
        if new:
            starts.update(_ask(self._client(), self.opts, dict.fromkeys(new, EARLIEST)))
        for tp, end in list(latest.items()):
            if end < starts[tp]:
                message = (
                    f"{tp_name(tp)}'s offset went back from {starts[tp]} to {end}: some data may have been lost "
                    '(the topic may have been deleted and recreated). Set the source option "failOnDataLoss" '
                    'to "false" to go on from the new offsets.'
                )
                if self.opts.fail_on_data_loss:
                    raise ReadOptionError(message)
                LOGGER.warning(message)
                latest[tp] = starts[tp] = end
        for tp, offset in starts.items():
            latest.setdefault(tp, offset)  # a partition that left the subscription stays where it was
        if self._too_few(starts, latest):
            return offsets_to_json(starts)  # no micro-batch yet: wait for minOffsetsPerTrigger
        if isinstance(limit, ReadMaxRows):
            latest = rate_limit(starts, latest, limit.max_rows)
        self._last_trigger = time.monotonic()
        return offsets_to_json(latest)

    def _too_few(self, starts: Mapping[TopicPartitionKey, int], latest: Mapping[TopicPartitionKey, int]) -> bool:
        """minOffsetsPerTrigger as Spark's connector: fewer new offsets than asked, and the last
        micro-batch less than maxTriggerDelay ago (never under Trigger.AvailableNow, which must end)."""
        wanted = self.opts.min_offsets_per_trigger
        if wanted is None or self._target is not None:
            return False
        available = sum(max(0, latest[tp] - starts.get(tp, latest[tp])) for tp in latest)
        return available < wanted and time.monotonic() - self._last_trigger < self.opts.max_trigger_delay

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return offsets_to_json(self._latest())

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[KafkaInputPartition]:
        starts = offsets_from_json(start)
        ends = offsets_from_json(end)
        new = [tp for tp in ends if tp not in starts]
        if new:
            starts.update(_ask(self._client(), self.opts, dict.fromkeys(new, EARLIEST)))
        ranges = plan_ranges(starts, ends, self.opts.max_records_per_partition, self.opts.min_partitions)
        return [KafkaInputPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_partition(self.schema, self.opts, partition, self.formats)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: Spark's checkpoint holds the offsets; no group offsets are committed."""

    def stop(self) -> None:
        clients.close(self.opts.kafka)
