"""pipeline/checkpoint.py: a streaming checkpoint's offset and commit logs read through Spark."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from kafkawire.pipeline.badrow import failed_batch_range
from kafkawire.pipeline.checkpoint import committed_batches, planned_offsets


def _entry(path: Path, *lines: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def test_offset_and_commit_logs_are_read_entry_by_entry(spark: SparkSession, tmp_path: Path) -> None:
    """Each log entry is one file of several lines (Spark's offset log: version, metadata, the
    sources' offsets); the entry's third line names the batch's end offsets."""
    for batch, ends in ((0, '{"t":{"0":40,"1":7}}'), (1, '{"t":{"0":60,"1":9}}')):
        _entry(tmp_path / "offsets" / str(batch), "v1", '{"batchWatermarkMs":0}', ends)
    _entry(tmp_path / "commits" / "0", "v1", '{"nextBatchWatermarkMs":0}')
    assert planned_offsets(spark, str(tmp_path), "t") == {0: {0: 40, 1: 7}, 1: {0: 60, 1: 9}}
    assert committed_batches(spark, str(tmp_path)) == {0}
    assert failed_batch_range(spark, str(tmp_path), "t") == ({0: 40, 1: 7}, {0: 60, 1: 9})


def test_a_checkpoint_with_no_batch_yet_plans_nothing(spark: SparkSession, tmp_path: Path) -> None:
    assert planned_offsets(spark, str(tmp_path / "absent"), "t") == {}
    assert failed_batch_range(spark, str(tmp_path / "absent"), "t") is None
