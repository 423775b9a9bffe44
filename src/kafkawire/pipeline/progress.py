"""A progress bar for the write job, and the task counts of its summary.

Spark's listeners live in the JVM. In a classic session ``sparkContext.statusTracker()`` answers
the same facts from Python: the jobs of a job group, their stages, and each stage's total,
completed and failed tasks; the pipeline runs its write in its own job group (`GroupTracker`).
A Spark Connect session has no sparkContext: the server streams each operation's stages (total
and completed tasks, no failed ones) to the progress handlers the session registers, and the
write runs under a job tag (`TagTracker`). A thread polls the tracker a few times a second. On a
terminal it redraws one line on stderr (``\\r``); otherwise (a log, CI, a pipe) it prints a plain
line whenever the completed task count moves, at most every ``plain_interval`` seconds, and a
last one at the end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

BAR_WIDTH = 28


@dataclass
class TaskCounts:
    total: int = 0
    done: int = 0
    active: int = 0
    failed: int | None = 0  # None: not reported (Spark Connect)


def task_counts(sc: SparkContext, group: str) -> TaskCounts:
    """Tasks of every stage of every job in ``group`` (stages Spark skipped count as done)."""
    tracker = sc.statusTracker()
    counts = TaskCounts()
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        if job is None:
            continue
        for stage_id in job.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is None:
                continue
            counts.total += stage.numTasks
            counts.done += stage.numCompletedTasks
            counts.active += stage.numActiveTasks
            counts.failed = (counts.failed or 0) + stage.numFailedTasks
    return counts


class GroupTracker:
    """A classic session's job group, polled through the status tracker."""

    def __init__(self, sc: SparkContext, group: str) -> None:
        self._sc = sc
        self._group = group

    def counts(self) -> TaskCounts:
        return task_counts(self._sc, self._group)


class TagTracker:
    """A Spark Connect session's progress handler: the latest stages of each operation reported
    while it is registered (`track_job` registers it around the tagged job only)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stages: dict[tuple[str, int], Any] = {}  # (operation, stage id) -> the latest StageInfo
        self._inflight: dict[str, int] = {}

    def __call__(self, stages: Iterable[Any] | None, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
        operation = operation_id or ""
        with self._lock:
            for stage in stages or ():
                self._stages[(operation, stage.stage_id)] = stage
            self._inflight[operation] = 0 if done else inflight_tasks

    def counts(self) -> TaskCounts:
        with self._lock:
            stages = list(self._stages.values())
            active = sum(self._inflight.values())
        return TaskCounts(
            total=sum(s.num_tasks for s in stages),
            done=sum(s.num_completed_tasks for s in stages),
            active=active,
            failed=None,
        )


@contextmanager
def track_job(spark: SparkSession, name: str, description: str) -> Iterator[GroupTracker | TagTracker]:
    """Run the block's Spark jobs under ``name`` (a job group, or a job tag over Spark Connect)
    and count their tasks."""
    from kafkawire.pipeline.session import is_connect

    if is_connect(spark):
        tracker = TagTracker()
        spark.addTag(name)
        spark.registerProgressHandler(tracker)  # type: ignore[arg-type]  # a handler by its call's shape
        try:
            yield tracker
        finally:
            spark.removeProgressHandler(tracker)  # type: ignore[arg-type]
            spark.removeTag(name)
        return
    sc = spark.sparkContext
    sc.setJobGroup(name, description)
    try:
        yield GroupTracker(sc, name)
    finally:
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            sc.setLocalProperty(key, None)  # type: ignore[arg-type]  # None removes the property


def render(counts: TaskCounts, elapsed: float, width: int = BAR_WIDTH) -> str:
    """``[#########-------] 3/6 tasks  4.2 s`` (the bar is empty until tasks are known)."""
    fraction = counts.done / counts.total if counts.total else 0.0
    filled = min(width, int(fraction * width))
    bar = "#" * filled + "-" * (width - filled)
    failed = f"  {counts.failed} failed" if counts.failed else ""
    tasks = f"{counts.done}/{counts.total} tasks" if counts.total else "starting"
    running = f", {counts.active} running" if counts.active else ""
    return f"[{bar}] {tasks}{running}  {elapsed:.1f} s{failed}"


class ProgressBar:
    """Polls ``counts`` (a tracker's) from a daemon thread until :meth:`stop`; use as a context manager."""

    def __init__(
        self,
        counts: Callable[[], TaskCounts],
        stream: IO[str],
        *,
        interval: float = 0.25,
        plain_interval: float = 2.0,
        tty: bool | None = None,
    ) -> None:
        self._counts = counts
        self._stream = stream
        self._interval = interval
        self._plain_interval = plain_interval
        self._tty = stream.isatty() if tty is None else tty
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kafkawire-progress", daemon=True)
        self._started = 0.0
        self.last = TaskCounts()
        self._drawn = 0
        self._printed: tuple[int, int | None] | None = None  # plain mode: (done, failed) of the last line

    def __enter__(self) -> ProgressBar:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        self._poll()
        self._draw(final=True)

    def _poll(self) -> None:
        try:
            self.last = self._counts()
        except Exception:  # the session may be stopping; the bar is cosmetic
            pass

    def _run(self) -> None:
        last_plain = (-1, 0.0)
        while not self._stop.wait(self._interval):
            self._poll()
            now = time.monotonic()
            if self._tty:
                self._draw()
            elif self.last.done != last_plain[0] and now - last_plain[1] >= self._plain_interval:
                last_plain = (self.last.done, now)
                self._draw()

    def _draw(self, final: bool = False) -> None:
        line = render(self.last, time.monotonic() - self._started)
        try:
            if self._tty:
                pad = " " * max(0, self._drawn - len(line))
                self._stream.write(f"\r{line}{pad}" + ("\n" if final else ""))
                self._drawn = len(line)
            else:
                state = (self.last.done, self.last.failed)
                if final and state == self._printed:
                    return
                self._printed = state
                self._stream.write(line + "\n")
            self._stream.flush()
        except (OSError, ValueError):  # a closed stream
            pass
