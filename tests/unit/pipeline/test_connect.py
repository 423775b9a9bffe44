"""The pipeline's Spark Connect parts that need no server: the URL (--remote or SPARK_REMOTE),
paths refused as the client's, metrics in Connect's observed-row form, and task counts from the
session's progress reports."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from kafkawire.pipeline.progress import TagTracker, TaskCounts, render
from kafkawire.pipeline.session import PipelineError, open_session, remote_url, server_path
from kafkawire.pipeline.stream_summary import observed


def test_remote_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert remote_url(None) is None
    assert remote_url("sc://h:15002") == "sc://h:15002"
    monkeypatch.setenv("SPARK_REMOTE", "sc://env:15002")
    assert remote_url(None) == "sc://env:15002"
    assert remote_url("sc://given:1") == "sc://given:1"  # the option wins
    with pytest.raises(PipelineError, match="starts with sc://"):
        remote_url("spark://h:7077")


def test_master_and_remote_are_exclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_REMOTE", "sc://env:15002")
    with ExitStack() as stack, pytest.raises(PipelineError, match="--master or --remote"):
        open_session(None, "local[2]", stack)
    with ExitStack() as stack, pytest.raises(PipelineError, match="goes to --remote"):
        open_session(None, "sc://h:15002", stack)


class ConnectLike:
    """The one fact `server_path` asks of a session: its class's module (pyspark.sql.connect.*)."""


ConnectLike.__module__ = "pyspark.sql.connect.session"


def test_server_path_refuses_a_relative_path_over_connect() -> None:
    spark = ConnectLike()
    for fine in ("/data/ckpt", "file:/data/ckpt", "s3a://bucket/ckpt", "dbfs:/ckpt"):
        assert server_path(spark, fine, "--checkpoint") == fine  # type: ignore[arg-type]
    with pytest.raises(PipelineError, match="--checkpoint 'ckpt': over Spark Connect the server reads"):
        server_path(spark, "ckpt", "--checkpoint")  # type: ignore[arg-type]
    classic = SimpleNamespace()
    assert server_path(classic, "ckpt", "--checkpoint") == "ckpt"  # type: ignore[arg-type]


def test_observed_metrics_in_both_forms() -> None:
    from pyspark.sql import Row

    classic = Row(rows=7, bytes=120)
    assert observed(classic, "rows") == 7 and observed(classic, "bytes") == 120
    schema = {"type": "struct", "fields": [{"name": "rows", "type": "long"}, {"name": "bytes", "type": "long"}]}
    connect = Row(values=[7, 120], schema=schema)  # how a Connect client receives them
    assert observed(connect, "rows") == 7 and observed(connect, "bytes") == 120
    assert observed(Row(rows=3), "bytes") == 0 and observed(None, "rows") == 0
    assert observed(Row(rows=None), "rows") == 0  # sum over no rows


@dataclass
class Stage:  # the fields of pyspark.sql.connect.shell.progress.StageInfo the tracker reads
    stage_id: int
    num_tasks: int
    num_completed_tasks: int


def test_tag_tracker_counts_each_operations_latest_stages() -> None:
    tracker = TagTracker()
    assert tracker.counts() == TaskCounts(failed=None)
    tracker(stages=[Stage(0, 4, 1)], inflight_tasks=2, operation_id="a", done=False)
    tracker(stages=[Stage(0, 4, 3), Stage(1, 2, 0)], inflight_tasks=1, operation_id="a", done=False)
    tracker(stages=[Stage(0, 1, 1)], inflight_tasks=0, operation_id="b", done=True)
    assert tracker.counts() == TaskCounts(total=7, done=4, active=1, failed=None)
    tracker(stages=[Stage(0, 4, 4), Stage(1, 2, 2)], inflight_tasks=0, operation_id="a", done=True)
    counts = tracker.counts()
    assert counts == TaskCounts(total=7, done=7, active=0, failed=None)
    assert render(counts, 1.0, width=7) == "[#######] 7/7 tasks  1.0 s"
