"""What a streaming run did: per micro-batch (from Spark's query progress and the metrics the job
observes on its input and output) and in total, and how both are printed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import IO, Any

from kafkawire.pipeline.summary import size_text

IN_METRICS = "kafkawire_in"
OUT_METRICS = "kafkawire_out"


@dataclass
class BatchStats:
    batch_id: int
    rows_in: int
    bytes_in: int  # keys and values read
    rows_out: int
    seconds: float  # the micro-batch, planning to commit
    end: dict[int, int]  # the source topic's next offset per partition after this batch
    latest: dict[int, int]  # the source topic's end offsets when the batch was planned
    bytes_out: int = 0  # keys and values handed to a topic sink (observed; 0 for files)

    @property
    def lag(self) -> int:
        return sum(max(0, self.latest.get(p, off) - off) for p, off in self.end.items())


def offsets_of(text: str | None, topic: str) -> dict[int, int]:
    """A partition -> offset map out of the source's offset JSON (``{"topic": {"0": 42}}``)."""
    if not text:
        return {}
    data = json.loads(text)
    return {int(p): int(off) for p, off in data.get(topic, {}).items()} if isinstance(data, dict) else {}


def observed(row: Any, name: str) -> int:
    """A metric of an observed row: a Row of the metrics in a classic session; over Spark Connect
    a ``Row(values=[...], schema={...})`` that names them in its schema's fields."""
    if row is None:
        return 0
    fields = row.asDict() if hasattr(row, "asDict") else {}
    if set(fields) == {"values", "schema"} and isinstance(fields["schema"], dict):
        names = [f["name"] for f in fields["schema"].get("fields", [])]
        fields = dict(zip(names, fields["values"], strict=False))
    return int(fields.get(name) or 0)


def batch_stats(progress: Any, topic: str) -> BatchStats:
    """One StreamingQueryProgress as BatchStats."""
    metrics = progress.observedMetrics or {}
    seen_in = metrics.get(IN_METRICS)
    seen_out = metrics.get(OUT_METRICS)
    source = progress.sources[0] if progress.sources else None
    return BatchStats(
        batch_id=progress.batchId,
        rows_in=int(progress.numInputRows),
        bytes_in=observed(seen_in, "bytes"),
        rows_out=observed(seen_out, "rows"),
        seconds=(progress.durationMs or {}).get("triggerExecution", 0) / 1000,
        end=offsets_of(source.endOffset if source is not None else None, topic),
        latest=offsets_of(source.latestOffset if source is not None else None, topic),
        bytes_out=observed(seen_out, "bytes"),
    )


def batch_line(b: BatchStats) -> str:
    rate = b.rows_in / b.seconds if b.seconds > 0 else 0.0
    return (
        f"batch {b.batch_id}: {b.rows_in:,} rows in ({size_text(b.bytes_in)}), {b.rows_out:,} out, "
        f"{b.seconds:.2f} s ({rate:,.0f} rows/s), lag {b.lag:,}"
    )


@dataclass
class StreamSummary:
    source_topic: str
    sink: str  # "topic T" or "parquet files in PATH"
    bootstrap: str
    value_format: str
    transform: str | None
    trigger: str
    checkpoint: str
    exactly_once: bool
    batches: list[BatchStats] = field(default_factory=list)
    bytes_out: int = 0  # keys, values and headers written (Kafka sink) or file bytes added (file sink)
    written: int | None = None  # rows the Kafka sink committed (skipped replays count 0)
    skipped_tasks: int = 0  # exactly-once tasks that found their batch already committed
    lag: dict[int, int] = field(default_factory=dict)  # source partition -> records behind at the end
    read_back: int | None = None  # committed records the run appended to the output topic / rows in the files
    error: str | None = None
    bad_row: str | None = None  # "topic/partition@offset" of the first record the transform fails on

    @property
    def rows_in(self) -> int:
        return sum(b.rows_in for b in self.batches)

    @property
    def rows_out(self) -> int:
        return sum(b.rows_out for b in self.batches)

    @property
    def bytes_in(self) -> int:
        return sum(b.bytes_in for b in self.batches)

    @property
    def seconds(self) -> float:
        return sum(b.seconds for b in self.batches)

    @property
    def ok(self) -> bool:
        if self.error is not None:
            return False
        return self.read_back is None or self.written is None or self.read_back == self.written


def print_stream_summary(s: StreamSummary, out: IO[str]) -> None:
    rate = s.rows_in / s.seconds if s.seconds > 0 else 0.0
    guarantee = "exactly-once (transactions + commit markers)" if s.exactly_once else "at-least-once"
    out.write("\n")
    out.write(f"Streaming pipeline topic {s.source_topic} -> {s.sink} on {s.bootstrap}\n")
    out.write(f"  values      {s.value_format}; trigger {s.trigger}; {guarantee}\n")
    if s.transform:
        out.write(f"  transform   {' '.join(s.transform.split())}\n")
    out.write(f"  checkpoint  {s.checkpoint}\n")
    out.write(f"  batches     {len(s.batches)}\n")
    out.write(
        f"  rows        {s.rows_in:,} in ({size_text(s.bytes_in)}), {s.rows_out:,} out ({size_text(s.bytes_out)})\n"
    )
    steady = ""
    later_seconds = sum(b.seconds for b in s.batches[1:])
    if later_seconds > 0:  # the first batch also starts the query (workers, compiling)
        steady = f"; {(s.rows_in - s.batches[0].rows_in) / later_seconds:,.0f} after the first batch"
    out.write(f"  time        {s.seconds:.2f} s of micro-batches ({rate:,.0f} rows/s in{steady})\n")
    lag = ", ".join(f"{p}:{n:,}" for p, n in sorted(s.lag.items()))
    out.write(f"  lag         {sum(s.lag.values()):,} records behind at the end ({lag or 'no partitions'})\n")
    if s.written is not None:
        replay = f", {s.skipped_tasks} replayed task(s) found committed and skipped" if s.skipped_tasks else ""
        out.write(f"  written     {s.written:,} records to the topic{replay}\n")
    if s.read_back is not None:
        if s.written is not None:
            verdict = "OK" if s.read_back == s.written else "MISMATCH"
            out.write(f"  read back   {s.read_back:,} committed records (read_committed): {verdict}\n")
        else:
            out.write(f"  read back   the files hold {s.read_back:,} rows (through the sink's metadata log)\n")
    if s.bad_row is not None:
        out.write(f"  bad record  {s.bad_row}\n")
    out.write(f"  failures    {'the run failed: ' + s.error if s.error else 'none'}\n")
