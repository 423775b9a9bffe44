"""The streaming pipeline: a topic read with Structured Streaming through the kafkawire data source,
decoded (``decode.py``), transformed by a Spark SQL SELECT over the view ``source``, and written to
a topic (the data source's writer, transactional with ``--exactly-once``) or to files (Spark's file
sink, exactly once through its metadata log).

    run_stream(StreamOptions("orders", topic="orders-eur", transform="SELECT ... FROM source"))

Order of work: the options and, when the value schema is known without the broker, the SQL are
checked first (a wrong SQL fails with Spark's message before any broker work); then the broker
(the given cluster or an embedded Tansu), the source's offsets (a JSON schema inferred from its
first records when none is given), the output topic, the query with its checkpoint, one line per
micro-batch under ``--progress``, and the summary (``stream_summary.py``): rows and bytes in and
out, rows/s over the micro-batches and over those after the first (which also starts the query),
lag per source partition, and for a topic sink the read_committed read-back of what the run
appended. A failed query has its failing record looked for (``badrow.py``) and named by
topic/partition/offset.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kafkawire.pipeline.checkpoint import planned_offsets, temporary_checkpoint
from kafkawire.pipeline.decode import DECODE_FORMATS, SOURCE_VIEW, DecodeError, decode, infer_json_schema, parse_schema
from kafkawire.pipeline.job import reason
from kafkawire.pipeline.session import PipelineError, is_connect, open_session, server_path
from kafkawire.pipeline.stream_summary import (
    IN_METRICS,
    OUT_METRICS,
    BatchStats,
    StreamSummary,
    batch_line,
    batch_stats,
    print_stream_summary,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

FILE_FORMATS = ("parquet", "json", "csv")
OUTPUT_MODES = ("append", "update", "complete")
WRITER_COLUMNS = ("key", "value", "headers", "partition")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h)", re.IGNORECASE)
_UNITS = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours"}


@dataclass
class StreamOptions:
    from_topic: str
    topic: str | None = None  # a Kafka sink ...
    to: str | None = None  # ... or a folder for the file sink
    file_format: str = "parquet"
    transform: str | None = None  # a Spark SQL SELECT over the view ``source``
    value_format: str = "json"  # how source values are decoded and, for a topic sink, output rows encoded
    value_schema: str | None = None  # DDL of json values (None: inferred from the first records)
    schema_registry: str | None = None  # avro values: their registry; a topic sink's avro values registered there
    key_column: str | None = None  # the output column that keys each record (topic sink)
    bootstrap_servers: str | None = None  # None: an embedded Tansu broker for the run
    checkpoint: str | None = None  # None: a temporary folder (the run cannot be resumed)
    trigger: str = "available-now"  # or processing-time=10s
    output_mode: str = "append"
    exactly_once: bool = False
    transactional_id_prefix: str | None = None
    starting_offsets: str = "earliest"  # for a new checkpoint; a resumed query goes on from its own
    max_offsets_per_trigger: int | None = None
    partitions: int | None = None  # of an output topic the run creates (None: as many as the source)
    replication_factor: int | None = None
    kafka_options: dict[str, str] = field(default_factory=dict)  # producer options of the topic sink
    master: str | None = None
    remote: str | None = None  # a Spark Connect server (sc://host:port); None: SPARK_REMOTE, else classic Spark
    verify: bool = True
    progress: bool = False
    timeout: float = 30.0


def parse_trigger(text: str) -> dict[str, Any]:
    """``available-now`` or ``processing-time=10s`` (ms, s, m, h) as ``DataStreamWriter.trigger`` keywords."""
    if text == "available-now":
        return {"availableNow": True}
    name, _, every = text.partition("=")
    match = _DURATION.fullmatch(every.strip())
    if name != "processing-time" or match is None:
        raise PipelineError(f"--trigger {text!r}: use available-now or processing-time=<n>ms|s|m|h")
    return {"processingTime": f"{match.group(1)} {_UNITS[match.group(2).lower()]}"}


def check_stream_options(opts: StreamOptions) -> None:
    if not opts.from_topic:
        raise PipelineError("--from-topic must not be empty")
    if (opts.topic is None) == (opts.to is None):
        raise PipelineError("give one sink: --topic TOPIC or --to PATH")
    if opts.value_format not in DECODE_FORMATS:
        raise PipelineError(f"--from-topic decodes values as {' or '.join(DECODE_FORMATS)}, not {opts.value_format!r}")
    if opts.value_schema is not None and opts.value_format != "json":
        raise PipelineError("--value-schema is for --value-format json")
    if (opts.schema_registry is not None) != (opts.value_format == "avro"):
        raise PipelineError("--from-topic with --value-format avro needs --schema-registry, and only avro takes it")
    if opts.to is not None:
        if opts.file_format not in FILE_FORMATS:
            raise PipelineError(f"unknown file format {opts.file_format!r}; choose one of {', '.join(FILE_FORMATS)}")
        if opts.exactly_once:
            raise PipelineError(
                "--exactly-once is for topic sinks: the file sink is exactly-once through its metadata log"
            )
        if opts.key_column or opts.kafka_options:
            raise PipelineError("--key-column and --kafka-option are for topic sinks")
    if opts.output_mode not in OUTPUT_MODES:
        raise PipelineError(f"unknown output mode {opts.output_mode!r}; choose one of {', '.join(OUTPUT_MODES)}")
    if opts.transform is not None and not re.match(r"\s*(select|with)\b", opts.transform, re.IGNORECASE):
        raise PipelineError("--transform must be a SELECT query (over the view 'source')")
    if opts.max_offsets_per_trigger is not None and opts.max_offsets_per_trigger < 1:
        raise PipelineError("--max-offsets-per-trigger must be at least 1")
    if opts.timeout <= 0:
        raise PipelineError("--timeout must be positive")
    parse_trigger(opts.trigger)


def _spark_message(exc: BaseException) -> str:
    """Spark's own message (its first line), without the plan and JVM stack it appends."""
    return str(exc).strip().splitlines()[0][:1000] if str(exc).strip() else type(exc).__name__


def plan(spark: SparkSession, source: DataFrame, opts: StreamOptions, schema: StructType | None) -> DataFrame:
    """The frame the sink writes: ``source`` observed, decoded, transformed, shaped for the sink."""
    from pyspark.sql import functions as F

    from kafkawire.pipeline.serialize import SerializeError, serialize
    from kafkawire.spark.writer import validate_schema

    record_bytes = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    observed = source.observe(IN_METRICS, F.count(F.lit(1)).alias("rows"), F.sum(record_bytes).alias("bytes"))
    try:
        decoded = decode(observed, opts.value_format, schema, opts.schema_registry, opts.from_topic)
    except DecodeError as exc:
        raise PipelineError(str(exc)) from None
    result = decoded
    if opts.transform is not None:
        decoded.createOrReplaceTempView(SOURCE_VIEW)
        try:
            result = spark.sql(opts.transform)
        except Exception as exc:
            raise PipelineError(f"--transform: {_spark_message(exc)}") from None
    if opts.topic is not None:
        value = next((f for f in result.schema.fields if f.name == "value"), None)
        if value is not None and value.dataType.typeName() in ("string", "binary") and opts.key_column is None:
            result = result.select(*[c for c in WRITER_COLUMNS if c in result.columns])
        else:
            try:
                result = serialize(result, opts.value_format, opts.key_column, opts.schema_registry, opts.topic).frame
            except SerializeError as exc:
                raise PipelineError(str(exc)) from None
        try:
            validate_schema(result.schema, opts.topic)
        except ValueError as exc:
            raise PipelineError(f"the transform's output cannot be written to a topic: {exc}") from None
    out = [F.count(F.lit(1)).alias("rows")]
    sizes = [
        F.coalesce(F.octet_length(c), F.lit(0))
        for c in ("key", "value")
        if opts.topic is not None and c in result.columns
    ]
    if sizes:
        out.append(F.sum(sum(sizes[1:], sizes[0])).alias("bytes"))
    return result.observe(OUT_METRICS, *out)


def _check_plan(spark: SparkSession, opts: StreamOptions, schema: StructType | None) -> None:
    """The transform analysed over an empty frame of the source's columns: no broker involved."""
    from kafkawire.spark.reader import read_schema

    plan(spark, spark.createDataFrame([], read_schema({})), opts, schema)


def _file_bytes(spark: SparkSession, path: str) -> int:
    """Bytes of the data files under ``path`` (Spark lists them, skipping ``_spark_metadata``)."""
    from pyspark.sql import functions as F

    try:
        row = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load(path)
            .select(F.sum("length").alias("n"))
            .first()
        )
    except Exception:  # no such folder yet
        return 0
    return int(row["n"] or 0) if row is not None else 0


def _writer_totals(path: Path) -> tuple[int, int, int]:
    """(rows, bytes, skipped tasks) the topic sink committed, from its summary lines."""
    rows = size = skipped = 0
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            data = json.loads(line)
            if data.get("outcome") == "committed":
                rows, size, skipped = rows + data["rows"], size + data["bytes"], skipped + data["skipped_tasks"]
    return rows, size, skipped


class _Progress:
    """The query's micro-batches, collected from its progress updates (printed under --progress)."""

    def __init__(self, topic: str, err: IO[str] | None) -> None:
        self.topic = topic
        self.err = err
        self.batches: dict[int, BatchStats] = {}

    def poll(self, query: Any) -> None:
        for progress in query.recentProgress:
            if progress.batchId in self.batches or "addBatch" not in (progress.durationMs or {}):
                continue
            stats = batch_stats(progress, self.topic)
            self.batches[stats.batch_id] = stats
            if self.err is not None:
                self.err.write(batch_line(stats) + "\n")
                self.err.flush()


def _start_query(
    spark: SparkSession,
    opts: StreamOptions,
    bootstrap: str,
    schema: StructType | None,
    checkpoint: str,
    report: Path | None,
) -> Any:
    reader = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", opts.from_topic)
        .option("startingOffsets", opts.starting_offsets)
    )
    if opts.max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(opts.max_offsets_per_trigger))
    frame = plan(spark, reader.load(), opts, schema)
    writer = frame.writeStream.outputMode(opts.output_mode).option("checkpointLocation", checkpoint)
    writer = writer.queryName(f"kafkawire_pipeline_{re.sub(r'[^A-Za-z0-9_]', '_', opts.from_topic)}")
    writer = writer.trigger(**parse_trigger(opts.trigger))
    if opts.topic is not None:
        writer = writer.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option("topic", opts.topic)
        if report is not None:
            writer = writer.option("summaryPath", str(report))
        for key, value in opts.kafka_options.items():
            writer = writer.option(f"kafka.{key}", value)
        if opts.exactly_once:
            prefix = opts.transactional_id_prefix or f"kafkawire-pipeline-{opts.topic}"
            writer = writer.option("exactlyOnce", "true").option("transactionalIdPrefix", prefix)
    else:
        assert opts.to is not None
        writer = writer.format(opts.file_format).option("path", opts.to)
        if opts.file_format == "csv":
            writer = writer.option("header", "true")
    try:
        return writer.start()
    except Exception as exc:
        raise PipelineError(f"the streaming query cannot start: {_spark_message(exc)}") from None


def run_stream(
    opts: StreamOptions, spark: SparkSession | None = None, out: IO[str] | None = None, err: IO[str] | None = None
) -> StreamSummary:
    """Run the streaming pipeline and print its summary on ``out`` (micro-batches on ``err`` under
    ``progress``). A failed query is reported in the summary; a bad option or SQL raises PipelineError."""
    out = out or sys.stdout
    err = err or sys.stderr
    check_stream_options(opts)
    from kafkawire.local_broker import TansuBroker
    from kafkawire.pipeline import verify
    from kafkawire.range_reader import EARLIEST, list_offsets

    with ExitStack() as broker_stack, ExitStack() as stack:
        spark = open_session(spark, opts.master, stack, opts.remote)
        remote = is_connect(spark)
        for path, option in ((opts.to, "--to"), (opts.checkpoint, "--checkpoint")):
            if path is not None:
                server_path(spark, path, option)
        try:
            schema = parse_schema(opts.value_schema) if opts.value_schema is not None else None
        except DecodeError as exc:
            raise PipelineError(str(exc)) from None
        if schema is not None or opts.value_format != "json":
            _check_plan(spark, opts, schema)
        bootstrap = opts.bootstrap_servers
        if bootstrap is None:
            bootstrap = broker_stack.enter_context(TansuBroker()).bootstrap
            out.write(f"No --bootstrap-servers: started an embedded Tansu broker on {bootstrap} for this run.\n")
        client = stack.enter_context(verify.connect(bootstrap, opts.from_topic, opts.timeout))
        source_ends = verify.end_offsets(client, opts.from_topic, opts.timeout)
        if opts.value_format == "json" and schema is None:
            tps = {(opts.from_topic, p): EARLIEST for p in source_ends}
            earliest = {tp[1]: a.offset for tp, a in list_offsets(client, tps, timeout=opts.timeout).items()}
            try:
                schema = infer_json_schema(spark, bootstrap, opts.from_topic, earliest, source_ends)
            except DecodeError as exc:
                raise PipelineError(str(exc)) from None
            _check_plan(spark, opts, schema)
        out_client = None
        before: dict[int, int] = {}
        if opts.topic is not None:
            replication = (
                opts.replication_factor
                if opts.replication_factor is not None
                else (1 if opts.bootstrap_servers is None else -1)
            )
            partitions = opts.partitions or len(source_ends)
            verify.ensure_topic(bootstrap, opts.topic, partitions, replication, opts.timeout)
            out_client = stack.enter_context(verify.connect(bootstrap, opts.topic, opts.timeout))
            before = verify.end_offsets(out_client, opts.topic, opts.timeout)
        files_before = _file_bytes(spark, opts.to) if opts.to is not None else 0
        if opts.checkpoint is not None:
            checkpoint, checkpoint_label = opts.checkpoint, opts.checkpoint
        else:
            checkpoint, checkpoint_label = temporary_checkpoint(spark, stack)
        # The sink's own totals (the data source's driver side writes them) only where that side runs
        # on this machine; over Spark Connect the totals come from the query's observed metrics.
        report = (
            None
            if remote
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkawire-stream-"))) / "write.jsonl"
        )
        sink = f"topic {opts.topic}" if opts.topic is not None else f"{opts.file_format} files in {opts.to}"
        summary = StreamSummary(
            source_topic=opts.from_topic,
            sink=sink,
            bootstrap=bootstrap,
            value_format=opts.value_format,
            transform=opts.transform,
            trigger=opts.trigger,
            checkpoint=checkpoint_label,
            exactly_once=opts.exactly_once,
        )
        out.write(f"Streaming topic {opts.from_topic} ({len(source_ends)} partitions) -> {sink}\n")
        out.flush()

        query = _start_query(spark, opts, bootstrap, schema, checkpoint, report)
        progress = _Progress(opts.from_topic, err if opts.progress else None)
        try:
            while not query.awaitTermination(0.5):
                progress.poll(query)
        except KeyboardInterrupt:
            out.write("Interrupted: stopping the query (the checkpoint keeps its place).\n")
            query.stop()
        except Exception:  # the query failed: query.exception() below says why
            pass
        progress.poll(query)
        summary.batches = [progress.batches[b] for b in sorted(progress.batches)]
        failure = query.exception()
        if failure is not None:
            summary.error = reason(failure)
            from kafkawire.pipeline.badrow import find_bad_record

            summary.bad_row = find_bad_record(spark, opts, bootstrap, schema, checkpoint, plan)

        if summary.batches:
            ends = summary.batches[-1].end
        else:  # nothing new this run: where the checkpoint's last planned batch ends
            planned = planned_offsets(spark, checkpoint, opts.from_topic)
            ends = planned[max(planned)] if planned else {}
        latest = verify.end_offsets(client, opts.from_topic, opts.timeout)
        summary.lag = {p: max(0, latest[p] - ends.get(p, 0)) for p in sorted(latest)}
        if opts.topic is not None and out_client is not None:
            if report is not None:
                summary.written, summary.bytes_out, summary.skipped_tasks = _writer_totals(report)
            else:
                summary.written = summary.rows_out
                summary.bytes_out = sum(b.bytes_out for b in summary.batches)
            if opts.verify:
                summary.read_back = verify.read_back(out_client, opts.topic, before, opts.timeout).total
        elif opts.to is not None:
            summary.bytes_out = _file_bytes(spark, opts.to) - files_before
            if opts.verify:
                summary.read_back = _committed_rows(spark, opts)
        print_stream_summary(summary, out)
        out.flush()
        return summary
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions


def _committed_rows(spark: SparkSession, opts: StreamOptions) -> int:
    """Rows the file sink committed, as Spark reads them back through its ``_spark_metadata`` log;
    0 when it committed none (Spark cannot infer a schema from no files)."""
    from pyspark.errors import AnalysisException

    try:
        return _read_files(spark, opts).count()
    except AnalysisException:
        return 0


def _read_files(spark: SparkSession, opts: StreamOptions) -> DataFrame:
    """What the file sink committed: Spark reads the folder through its ``_spark_metadata`` log."""
    assert opts.to is not None
    reader = spark.read.format(opts.file_format)
    if opts.file_format == "csv":
        reader = reader.option("header", "true")
    return reader.load(opts.to)


__all__ = ["StreamOptions", "check_stream_options", "parse_trigger", "run_stream"]
