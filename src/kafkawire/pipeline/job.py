"""The pipeline job: read a dataset with Spark, turn each row into a record, write the records to a
Kafka topic through the kafkawire data source, and report what reached the broker.

    run(PipelineOptions(input="orders.jsonl", topic="orders", key_column="customer_id"))

Order of work: a broker (the given cluster, or an embedded Tansu started for the run), the topic
(created with kafkawire's AdminClient when missing), each partition's end offset, the input read
and serialized (``serialize.py``), the write in its own Spark job group with a progress bar
(``progress.py``), the end offsets again, the read-back (``verify.py``) and the summary
(``summary.py``). ``run`` takes an existing SparkSession (tests, notebooks, spark-submit) or
builds one, and stops only a session it built.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kafkawire.pipeline.serialize import VALUE_FORMATS, SerializeError, serialize
from kafkawire.pipeline.summary import PipelineSummary, print_summary

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

INPUT_FORMATS = ("json", "csv", "parquet")
DEFAULT_PARTITIONS = 6
_EXTENSIONS = {".json": "json", ".jsonl": "json", ".ndjson": "json", ".csv": "csv", ".parquet": "parquet"}
_COMPRESSED = (".gz", ".bz2", ".zst", ".lz4", ".snappy", ".deflate")


class PipelineError(Exception):
    """The run could not start: a bad input, option or column. The message says what to change."""


@dataclass
class PipelineOptions:
    input: str
    topic: str
    bootstrap_servers: str | None = None  # None: start an embedded Tansu broker for the run
    key_column: str | None = None
    input_format: str | None = None  # None: from the file extension, else json
    value_format: str = "json"
    master: str | None = None  # None: spark-submit's --master, else local[*]
    exactly_once: bool = False
    transactional_id_prefix: str | None = None  # None: kafkawire-pipeline-<topic>
    partitions: int = DEFAULT_PARTITIONS  # for a topic the run creates
    replication_factor: int | None = None  # None: 1 on the embedded broker, else the broker's default
    kafka_options: Mapping[str, str] = field(default_factory=dict)  # kafka.* options of the data source
    spark_partitions: int | None = None  # repartition the input into this many write tasks
    verify: bool = True  # read the topic back after the write
    progress: bool = True
    timeout: float = 30.0


def input_format(path: str, given: str | None) -> str:
    """``given``, else the format the file name says (``orders.csv.gz`` is csv), else json."""
    if given is not None:
        if given not in INPUT_FORMATS:
            raise PipelineError(f"unknown input format {given!r}; choose one of {', '.join(INPUT_FORMATS)}")
        return given
    name = path.rstrip("/").lower()
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    fmt = _EXTENSIONS.get(os.path.splitext(name)[1])
    if fmt is None and os.path.isdir(path):
        names = os.listdir(path)
        fmt = next((f for ext, f in _EXTENSIONS.items() for n in names if n.endswith(ext) or f"{ext}." in n), None)
    return fmt or "json"


def check_options(opts: PipelineOptions) -> None:
    """Everything that can be checked before Spark or a broker starts."""
    if not opts.topic:
        raise PipelineError("--topic must not be empty")
    if opts.value_format not in VALUE_FORMATS:
        raise PipelineError(f"unknown value format {opts.value_format!r}; choose one of {', '.join(VALUE_FORMATS)}")
    if "://" not in opts.input and not Path(opts.input).exists():
        raise PipelineError(f"input {opts.input!r} does not exist")
    input_format(opts.input, opts.input_format)
    if opts.partitions < 1:
        raise PipelineError(f"--partitions must be at least 1, not {opts.partitions}")
    if opts.spark_partitions is not None and opts.spark_partitions < 1:
        raise PipelineError(f"--spark-partitions must be at least 1, not {opts.spark_partitions}")
    if opts.timeout <= 0:
        raise PipelineError("--timeout must be positive")
    for key in opts.kafka_options:
        if key.lower() == "bootstrap.servers":
            raise PipelineError("give the cluster with --bootstrap-servers, not as a kafka option")
        if opts.exactly_once and key.lower() == "transactional.id":
            raise PipelineError("--exactly-once makes one transactional.id per task; use --transactional-id-prefix")


JAVA_HELP = "Debian/Ubuntu: apt-get install openjdk-17-jre-headless; elsewhere install a JDK 17+ and set JAVA_HOME"


def check_java() -> None:
    """Spark's JVM needs Java 17+: say so plainly instead of PySpark's JAVA_GATEWAY_EXITED."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={java_home} has no bin/java" if java_home else "no 'java' on PATH"
        raise PipelineError(f"Spark needs Java 17 or newer ({where}). {JAVA_HELP}")


def build_session(master: str | None, app_name: str = "kafkawire-pipeline") -> SparkSession:
    """A SparkSession for the command line. Python workers run this interpreter (unless
    PYSPARK_PYTHON says otherwise), so they import the same kafkawire; in local mode the driver
    binds to 127.0.0.1 only and starts no web UI."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).config("spark.ui.showConsoleProgress", "false")
    if master is not None:
        builder = builder.master(master)
    launching_jvm = SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ
    if launching_jvm:
        check_java()
    effective = master or (os.environ.get("MASTER") if launching_jvm else None) or "local[*]"
    if not launching_jvm:  # spark-submit started the JVM: its --master counts
        effective = master or SparkConf().get("spark.master", "local[*]")
    if launching_jvm and "log4j2.configurationFile" not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
        log_conf = Path(__file__).with_name("log4j2.properties")
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_conf.as_uri()}")
    if effective.startswith("local"):
        if launching_jvm:
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (
            builder.config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.ui.enabled", "false")
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def read_input(spark: SparkSession, path: str, fmt: str) -> DataFrame:
    reader = spark.read
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    try:
        return reader.format(fmt).load(path)
    except Exception as exc:
        raise PipelineError(f"cannot read {path!r} as {fmt}: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    """The line of a (possibly JVM- or worker-wrapped) exception that says what went wrong."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        named = head.endswith(("Error", "Exception")) or head.startswith("[")
        if ":" in line and named and not head.startswith(("File ", "at ", "During")):
            return line[:500]
    return (lines[0] if lines else type(exc).__name__)[:500]


def _writer_report(path: Path) -> dict[str, Any] | None:
    """The data source's totals for the write (its last line), or None when it wrote none."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        with suppress(ValueError):
            data = json.loads(line)
            if isinstance(data, dict) and "rows" in data and "bytes" in data:
                return data
    return None


@contextmanager
def _job_group(spark: SparkSession, group: str, description: str) -> Iterator[None]:
    sc = spark.sparkContext
    sc.setJobGroup(group, description)
    try:
        yield
    finally:
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            sc.setLocalProperty(key, None)  # type: ignore[arg-type]  # None removes the property


def _write(opts: PipelineOptions, frame: DataFrame, bootstrap: str, report: Path) -> None:
    """The write through the data source; its driver side appends a line of totals (rows, bytes of
    keys, values and headers, tasks) to ``report`` when the job commits or aborts."""
    writer = (
        frame.write.format("kafkawire")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", opts.topic)
        .option("summaryPath", str(report))
    )
    for key, value in opts.kafka_options.items():
        writer = writer.option(f"kafka.{key}", value)
    if opts.exactly_once:
        prefix = opts.transactional_id_prefix or f"kafkawire-pipeline-{opts.topic}"
        writer = writer.option("exactlyOnce", "true").option("transactionalIdPrefix", prefix)
    writer.save()


def run(
    opts: PipelineOptions,
    spark: SparkSession | None = None,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
) -> PipelineSummary:
    """Run the pipeline and print its summary on ``out`` (progress on ``err``). A failed write is
    reported in the summary (``error``, ``ok`` False); a bad input or option raises PipelineError."""
    out = out or sys.stdout
    err = err or sys.stderr
    check_options(opts)
    fmt = input_format(opts.input, opts.input_format)
    from kafkawire.local_broker import TansuBroker
    from kafkawire.pipeline import verify

    # Two stacks: the broker's closes last, so Spark's Python workers (and the producers they
    # cache) end before the embedded broker does.
    with ExitStack() as broker_stack, ExitStack() as stack:
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()  # a notebook's or a test's: the caller stops it
            if spark is None:
                spark = build_session(opts.master)
                stack.callback(spark.stop)
            elif opts.master is not None and opts.master != spark.sparkContext.master:
                raise PipelineError(f"--master {opts.master}: this process already runs Spark on {spark.sparkContext.master}")
        from kafkawire.spark import register

        register(spark)
        # The input and its records first: a wrong path, column or type fails before any broker work.
        df = read_input(spark, opts.input, fmt)
        if opts.spark_partitions is not None:
            df = df.repartition(opts.spark_partitions)
        try:
            serialized = serialize(df, opts.value_format, opts.key_column)
        except SerializeError as exc:
            raise PipelineError(str(exc)) from None

        bootstrap = opts.bootstrap_servers
        embedded = bootstrap is None
        if bootstrap is None:
            broker = broker_stack.enter_context(TansuBroker())
            bootstrap = broker.bootstrap
            out.write(
                f"No --bootstrap-servers: started an embedded Tansu broker on {bootstrap} for this run "
                "(memory only, stopped at the end).\n"
                "To write to a real cluster: kafkawire pipeline ... --bootstrap-servers host:9092\n"
            )
        summary = PipelineSummary(
            input=opts.input, input_format=fmt, topic=opts.topic, bootstrap=bootstrap,
            value_format=opts.value_format, key_column=opts.key_column, exactly_once=opts.exactly_once,
            embedded_broker=embedded, avro_schema=serialized.avro_schema, master=spark.sparkContext.master or "",
        )  # fmt: skip
        replication = opts.replication_factor if opts.replication_factor is not None else (1 if embedded else -1)
        summary.topic_created = verify.ensure_topic(bootstrap, opts.topic, opts.partitions, replication, opts.timeout)
        client = stack.enter_context(verify.connect(bootstrap, opts.topic, opts.timeout))
        before = verify.end_offsets(client, opts.topic, opts.timeout)
        out.write(
            f"{'Created' if summary.topic_created else 'Using existing'} topic {opts.topic} "
            f"({len(before)} partitions); writing {opts.input} ({fmt}) as {opts.value_format} values\n"
        )
        out.flush()

        group = f"kafkawire-pipeline-{uuid.uuid4().hex[:12]}"
        report = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkawire-pipeline-"))) / "write.jsonl"
        started = time.monotonic()
        with _job_group(spark, group, f"kafkawire pipeline -> {opts.topic}"):
            bar = None
            if opts.progress:
                from kafkawire.pipeline.progress import ProgressBar

                bar = stack.enter_context(ProgressBar(spark.sparkContext, group, err))
            try:
                _write(opts, serialized.frame, bootstrap, report)
            except Exception as exc:
                summary.error = _reason(exc)
            finally:
                summary.seconds = time.monotonic() - started
                if bar is not None:
                    bar.stop()
        from kafkawire.pipeline.progress import task_counts

        counts = task_counts(spark.sparkContext, group)
        summary.tasks, summary.failed_tasks = counts.total, counts.failed
        written = _writer_report(report)
        if written is not None:
            summary.rows, summary.bytes = int(written["rows"]), int(written["bytes"])

        after = verify.end_offsets(client, opts.topic, opts.timeout)
        summary.appended = {p: after.get(p, 0) - before.get(p, 0) for p in sorted(after)}
        if opts.verify:
            got = verify.read_back(client, opts.topic, before, opts.timeout)
            summary.read_back = {p: got.records.get(p, 0) for p in sorted(after)}
            summary.read_back_bytes = got.key_bytes + got.value_bytes
            if written is None:  # a writer without the report: count what reached the topic
                summary.rows, summary.bytes = got.total, summary.read_back_bytes
        print_summary(summary, out)
        if embedded and summary.ok:
            out.write("The embedded broker stops now, and its topic with it.\n")
        out.flush()
        return summary
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions
