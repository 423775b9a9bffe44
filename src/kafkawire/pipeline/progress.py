"""A progress bar for the write job, drawn from Spark's status tracker by a polling thread.

Spark's listeners live in the JVM; ``sparkContext.statusTracker()`` answers the same facts from
Python: the jobs of a job group, their stages, and each stage's total, completed and failed tasks.
The pipeline runs its write in its own job group and this thread polls that group a few times a
second. On a terminal it redraws one line on stderr (``\\r``); otherwise (a log, CI, a pipe) it
prints a plain line whenever the completed task count moves, at most every ``plain_interval``
seconds, and a last one at the end.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark import SparkContext

BAR_WIDTH = 28


@dataclass
class TaskCounts:
    total: int = 0
    done: int = 0
    active: int = 0
    failed: int = 0


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
            counts.failed += stage.numFailedTasks
    return counts


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
    """Polls ``group``'s tasks from a daemon thread until :meth:`stop`; use as a context manager."""

    def __init__(
        self,
        sc: SparkContext,
        group: str,
        stream: IO[str],
        *,
        interval: float = 0.25,
        plain_interval: float = 2.0,
        tty: bool | None = None,
    ) -> None:
        self._sc = sc
        self._group = group
        self._stream = stream
        self._interval = interval
        self._plain_interval = plain_interval
        self._tty = stream.isatty() if tty is None else tty
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kafkawire-progress", daemon=True)
        self._started = 0.0
        self.last = TaskCounts()
        self._drawn = 0
        self._printed: tuple[int, int] | None = None  # plain mode: (done, failed) of the last line

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
            self.last = task_counts(self._sc, self._group)
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
