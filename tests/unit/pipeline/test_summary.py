"""The pipeline's printed rates: over the rows' own flow when the data source measured it (the
write's span from its first row to its last task done), else over the whole job; a stream's rate
after its first micro-batch, which also starts the query. Pure functions, no session, no broker."""

from __future__ import annotations

import io

from kafkawire.pipeline.stream_summary import BatchStats, StreamSummary, print_stream_summary
from kafkawire.pipeline.summary import time_line
from kafkawire.spark.writer import KafkaWriteCommitMessage, summarize, writing_seconds


def test_the_rate_is_over_the_writing_when_the_data_source_measured_it() -> None:
    line = time_line(250_000, 50 * 1024 * 1024, 10.0, 2.5, "write job")
    assert line == "2.50 s writing (100,000 rows/s, 20.0 MiB/s) in a 10.00 s write job"


def test_without_the_writers_span_the_rate_is_over_the_whole_job() -> None:
    assert time_line(5_000, 10 * 1024, 5.0, None, "write job") == "5.00 s write job (1,000 rows/s, 2.0 KiB/s)"
    assert time_line(0, 0, 0.0, None, "write job") == "0.00 s write job (0 rows/s, 0 B/s)"


def test_the_writing_span_runs_from_the_first_row_of_any_task_to_the_last_task_done() -> None:
    tasks = [
        KafkaWriteCommitMessage(0, 0, rows=10, first_row_at=100.0, done_at=103.0),
        KafkaWriteCommitMessage(1, 0, rows=10, first_row_at=101.5, done_at=104.25),
        KafkaWriteCommitMessage(2, 0, skipped=True),  # a replay found committed: it wrote no row
    ]
    assert writing_seconds(tasks) == 4.25
    assert summarize([*tasks, None])["writing_seconds"] == 4.25
    assert writing_seconds([KafkaWriteCommitMessage(0, 0, skipped=True)]) is None


def _stream(*batches: tuple[int, float]) -> str:
    s = StreamSummary("in", "topic out", "127.0.0.1:9092", "json", None, "available-now", "(temporary)", True)
    s.batches = [BatchStats(i, rows, 0, rows, seconds, {}, {}) for i, (rows, seconds) in enumerate(batches)]
    out = io.StringIO()
    print_stream_summary(s, out)
    return next(line for line in out.getvalue().splitlines() if line.startswith("  time"))


def test_a_streams_rate_after_its_first_batch_is_shown_beside_the_whole() -> None:
    assert _stream((1000, 8.0), (1000, 1.0), (1000, 1.0)) == (
        "  time        10.00 s of micro-batches (300 rows/s in; 1,000 after the first batch)"
    )
    assert _stream((1000, 8.0)) == "  time        8.00 s of micro-batches (125 rows/s in)"
