"""Where a Spark job's CPU goes, per row: ``python -m bench.spark_cpu [spark|spark-read] [rows] [broker] [linger]``.

The Spark scenarios' wall time is set by every process on the two cores: Spark's JVM (the cached
DataFrame scanned and turned into Arrow batches for a write, Arrow batches turned into rows for a
read), the Python workers it starts (`produce_arrow` or `fetch_range` and the Arrow hand-off) and
the broker. This runs the scenario's two workers (`bench.worker.kafkawire_spark` and its
baseline ``kafkawire_batch_warmed``, or ``kafkawire_spark_read`` and ``kafkawire_fetch``) one
after the other in this process against a fresh broker, each on its own topic, and reads the CPU
of every process below this one (their own, plus that of their children already reaped) just
before and after each worker's timed job, the last of its jobs; the JVMs' threads are grouped by
name. This process's own CPU is the baseline's client.

``spark-worker`` and ``spark-read-worker`` take the Python workers' side alone, in this process:
the function a write task runs (`_KafkaWrite.write_task`) fed an Arrow IPC stream of the batches
Spark sends (struct-wrapped, 10,000 rows), flattened as PySpark's worker does, fed as fast as it
takes them and at a task's pace (`PACE`), against ``produce_batch()``, with the rows per produced
batch each run left in its topic; and a read task's `read_range` with its batches wrapped and written to an
Arrow IPC stream as PySpark's worker sends them, against the read path alone (`fetch_range` into
Arrow columns). Three rounds each, alternating; CPU us per row of this process (all threads)
and of the broker. ``linger`` is the Spark writer's ``kafka.linger.ms`` (``default``: unset, the
data source's own), to hold a write against the benchmark's 5 ms.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench import worker
from bench.run import BROKERS, broker, create_topic
from bench.scenarios import parse_scenario

TICK = os.sysconf("SC_CLK_TCK")
KINDS = ("spark", "spark-read", "spark-worker", "spark-read-worker")
PACE = 0.05  # seconds between a paced write task's Arrow batches: a Spark task's pace on a loaded host


def _fields(path: str) -> tuple[str, list[str]]:
    text = Path(path).read_text()
    return text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()


def _role(pid: int) -> str:
    """What a process is, from its command line."""
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    if "kafka.Kafka" in cmd:
        return "broker: Kafka 2.3"
    if "zookeeper" in cmd.lower():
        return "broker: ZooKeeper"
    if "tansu" in cmd.lower():
        return "broker: Tansu"
    if "java" in cmd.split(" ", 1)[0] or "SparkSubmit" in cmd:
        return "Spark JVM"
    if "pyspark.daemon" in cmd or "pyspark/daemon" in cmd:
        return "Python workers (daemon and forks)"
    if "pyspark" in cmd or "worker" in cmd:
        return "Python workers (others)"
    return "other: " + cmd[:60]


def _descendants(root: int) -> list[int]:
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                todo.extend(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
            except OSError:
                continue
        if pid != root:
            out.append(pid)
    return out


def snapshot() -> dict[str, float]:
    """CPU seconds per role (and per JVM thread name), reaped children counted with their parent."""
    out: dict[str, float] = defaultdict(float)
    for pid in _descendants(os.getpid()):
        try:
            role = _role(pid)
            _, f = _fields(f"/proc/{pid}/stat")
            out[role] += sum(int(x) for x in f[11:15]) / TICK
            out[f"{role} [pid {pid}]"] += sum(int(x) for x in f[11:13]) / TICK
            if role == "Spark JVM":
                for tid in os.listdir(f"/proc/{pid}/task"):
                    name, tf = _fields(f"/proc/{pid}/task/{tid}/stat")
                    out[f"  {role} thread: {re.sub(r'[0-9]+', 'N', name)}"] += (int(tf[11]) + int(tf[12])) / TICK
        except OSError:
            continue
    return out


def _ipc_of(w: worker.Workload) -> bytes:
    """The write's rows as the JVM hands them to a Python worker: an Arrow IPC stream of batches of
    10,000 rows, the columns wrapped in one struct column."""
    import pyarrow as pa

    nv, out = len(w.values), io.BytesIO()
    writer = None
    for start in range(0, w.records, 10_000):
        column = pa.array([w.values[i % nv] for i in range(start, min(start + 10_000, w.records))], pa.binary())
        batch = pa.RecordBatch.from_arrays([pa.StructArray.from_arrays([column], ["value"])], ["_0"])
        writer = writer or pa.ipc.new_stream(out, batch.schema)
        writer.write_batch(batch)
    assert writer is not None
    writer.close()
    return out.getvalue()


def _write_side(bootstrap: str, topic: str, w: worker.Workload, ipc: bytes, pace: float) -> Callable[[], None]:
    """A write task's function over ``ipc``, its Arrow batches handed over ``pace`` seconds apart
    (0: as fast as it takes them)."""
    import pyarrow as pa
    from pyspark.sql.conversion import ArrowBatchTransformer
    from pyspark.sql.types import BinaryType, StructField, StructType

    from kafkawire.spark.writer import _KafkaWrite

    options = {**worker.spark_write_options(), "kafka.bootstrap.servers": bootstrap, "topic": topic}
    write = _KafkaWrite(StructType([StructField("value", BinaryType())]), options, False, False)

    def paced(batches: Iterator[Any]) -> Iterator[Any]:
        for i, batch in enumerate(batches):
            if i and pace:
                time.sleep(pace)
            yield batch

    def work() -> None:
        batches = map(ArrowBatchTransformer.flatten_struct, pa.ipc.open_stream(io.BytesIO(ipc)))
        assert write.write_task(paced(batches)).rows == w.records

    return work


def _read_side(bootstrap: str, topic: str, w: worker.Workload) -> tuple[Callable[[], None], Callable[[], None]]:
    """(a read task's Python side over the whole topic, the read path alone)."""
    import pyarrow as pa
    from pyspark.sql.conversion import ArrowBatchTransformer

    from kafkawire.client.network_client import Client
    from kafkawire.consumer.arrow import columns_of
    from kafkawire.range_reader import FetchSettings, fetch_range, high_watermarks, partitions_for
    from kafkawire.spark.reader import batch_reader, read_schema

    worker.fill(bootstrap, topic, w)
    client = Client({"bootstrap.servers": bootstrap})
    partitions = partitions_for(client, [topic], timeout=30)[topic]
    ends = high_watermarks(client, topic, partitions, 30)
    options = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
    options["endingOffsets"] = json.dumps({topic: {str(p): end for p, end in ends.items()}})
    reader = batch_reader(read_schema(options), options)
    ranges = reader.partitions()

    def task_side() -> None:
        rows = 0
        for part in ranges:
            out, writer = io.BytesIO(), None
            for batch in reader.read(part):
                rows += batch.num_rows
                wrapped = ArrowBatchTransformer.wrap_struct(batch)
                writer = writer or pa.ipc.new_stream(out, wrapped.schema)
                writer.write_batch(wrapped)
            if writer is not None:
                writer.close()
        assert rows == w.records, rows

    def alone() -> None:
        rows = 0
        for p in partitions:

            def records_of(batch: Any, start: int, end: int, p: int = p) -> Any:
                return columns_of(batch, start, topic, p)

            for _batch, columns in fetch_range(client, topic, p, 0, None, FetchSettings(), records_of=records_of):
                rows += len(columns)
        assert rows == w.records, rows

    return task_side, alone


def _python_side(kind: str, rows: int, broker_kind: str) -> None:
    scenario = parse_scenario("spark" if kind == "spark-worker" else "spark-read", False)
    w = worker.Workload(scenario, rows)
    writes = kind == "spark-worker"
    with broker(None, False, broker_kind) as target:
        base = f"bench-spark-cpu-{os.getpid()}"
        bootstrap = target.bootstrap
        sides: dict[str, Callable[[str], dict[str, Any]]]
        if writes:  # each run on a fresh topic, whose batches are then counted
            ipc = _ipc_of(w)
            sides = {
                "write task (Python side), fed fast": lambda t: worker.measure(_write_side(bootstrap, t, w, ipc, 0)),
                f"write task (Python side), an Arrow batch every {PACE * 1000:.0f} ms": lambda t: worker.measure(
                    _write_side(bootstrap, t, w, ipc, PACE)
                ),
                "produce_batch()": lambda t: worker.kafkawire_batch(scenario, bootstrap, t, w),
            }
        else:
            create_topic(bootstrap, base, 4)
            task, alone = _read_side(bootstrap, base, w)
            sides = {
                "read task (Python side)": lambda t: worker.measure(task),
                "read path alone": lambda t: worker.measure(alone),
            }
        for n in range(3):
            for i, (name, side) in enumerate(sides.items()):
                topic = f"{base}-{n}-{i}" if writes else base
                if writes:
                    create_topic(bootstrap, topic, 4)
                before = snapshot()
                result = side(topic)
                after = snapshot()
                brokers = sum(
                    v - before.get(k, 0.0) for k, v in after.items() if k.startswith("broker: ") and "[" not in k
                )
                per_batch = f", {rows / batches_in(bootstrap, topic):,.0f} rows per produced batch" if writes else ""
                print(
                    f"{name}: {result['cpu'] * 1e6 / rows:.3f} CPU us/row, broker {brokers * 1e6 / rows:.3f}, "
                    f"{rows / result['seconds']:,.0f} rows/s{per_batch}",
                    flush=True,
                )


def batches_in(bootstrap: str, topic: str) -> int:
    """The record batches the topic holds: what the writes produced, as the broker took them."""
    from kafkawire.client.network_client import Client
    from kafkawire.range_reader import FetchSettings, fetch_range, partitions_for

    with Client({"bootstrap.servers": bootstrap}) as client:
        partitions = partitions_for(client, [topic], timeout=30)[topic]
        return sum(
            1
            for p in partitions
            for _ in fetch_range(client, topic, p, 0, None, FetchSettings(), records_of=lambda b, s, e: True)
        )


def _report(name: str, rows: int, result: dict[str, Any], before: dict[str, float], after: dict[str, float]) -> None:
    seconds = result["seconds"]
    print(f"{name}, {rows:,} rows, last job {seconds:.2f} s, {rows / seconds:,.0f} rows/s")
    print(f"  {'CPU us/row':>10} {'cores':>6}  process")
    for key in sorted(after, key=lambda n: (n.startswith("  "), -(after[n] - before.get(n, 0.0)))):
        used = after[key] - before.get(key, 0.0)
        if used > 0.005:
            print(f"  {used * 1e6 / rows:10.3f} {used / seconds:6.2f}  {key}")
    if result.get("cpu") is not None:
        print(f"  {result['cpu'] * 1e6 / rows:10.3f} {result['cpu'] / seconds:6.2f}  this process (the client)")


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "spark"
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    broker_kind = sys.argv[3] if len(sys.argv) > 3 else "tansu"
    linger = sys.argv[4] if len(sys.argv) > 4 else "default"
    if kind not in KINDS or broker_kind not in BROKERS or not (linger == "default" or linger.isdigit()):
        raise SystemExit(
            f"usage: python -m bench.spark_cpu [{'|'.join(KINDS)}] [rows] [{'|'.join(BROKERS)}] [linger-ms|default]"
        )
    worker.SPARK_LINGER_MS = None if linger == "default" else int(linger)
    if kind.endswith("-worker"):
        _python_side(kind, rows, broker_kind)
        return
    taken: list[dict[str, float]] = []
    measure = worker.measure

    def measured(work: Any) -> dict[str, float]:
        before = snapshot()
        result = measure(work)
        taken[:] = [before, snapshot()]
        return result

    worker.measure = measured  # the name the worker functions call
    if kind == "spark":
        jobs = {"kafkawire-spark": worker.kafkawire_spark, "kafkawire-batch": worker.kafkawire_batch_warmed}
    else:
        jobs = {"kafkawire-spark-read": worker.kafkawire_spark_read, "kafkawire-fetch": worker.kafkawire_fetch}
    scenario = parse_scenario(kind, False)
    rates = {}
    with broker(None, False, broker_kind) as target:
        for name, job in jobs.items():
            topic = f"bench-spark-cpu-{os.getpid()}-{name}"
            create_topic(target.bootstrap, topic, 4)
            result = job(scenario, target.bootstrap, topic, worker.Workload(scenario, rows))
            _report(name, rows, result, *taken)
            if kind == "spark":
                print(f"  {rows / batches_in(target.bootstrap, topic):,.0f} rows per produced batch")
            rates[name] = rows / result["seconds"]
    spark, baseline = rates.values()
    print(f"ratio {spark / baseline:.2f}x")


if __name__ == "__main__":
    main()
