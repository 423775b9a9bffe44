"""A streaming query's checkpoint, read through Spark.

Spark writes it where its driver runs: this machine for a classic session, the server's disk (or
storage it reaches) over Spark Connect. Reading it as text with Spark lets the driver read its own
files in both cases, so nothing here opens a local path. Its offset and commit logs are folders of
files named by batch id (``0``, ``1``, ...); an offset log entry's third line is the source's
offsets as JSON. (A file sink's ``_spark_metadata`` log cannot be read so: Spark skips every path
with a component starting with ``_``.)
"""

from __future__ import annotations

import re
import tempfile
import uuid
from contextlib import ExitStack
from typing import TYPE_CHECKING

from kafkawire.pipeline.session import PipelineError, is_connect
from kafkawire.pipeline.stream_summary import offsets_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_ENTRY = re.compile(r"/(\d+)$")


def temporary_checkpoint(spark: SparkSession, stack: ExitStack) -> tuple[str, str]:
    """(a new checkpoint folder, how the summary names it) for a run given none: a temporary
    folder of this machine that ``stack`` removes, or over Spark Connect one under the server's
    own temporary folder (the server keeps it: a client cannot remove the server's files)."""
    if not is_connect(spark):
        return stack.enter_context(tempfile.TemporaryDirectory(prefix="kafkawire-checkpoint-")), "(temporary)"
    try:
        row = spark.sql("SELECT reflect('java.lang.System', 'getProperty', 'java.io.tmpdir') AS tmp").first()
    except Exception as exc:
        raise PipelineError(
            "over Spark Connect give --checkpoint: a folder the server can write (the server did not tell "
            f"its temporary folder: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        ) from None
    if row is None or not row["tmp"]:
        raise PipelineError("over Spark Connect give --checkpoint: a folder the server can write")
    path = f"{row['tmp'].rstrip('/')}/kafkawire-checkpoint-{uuid.uuid4().hex[:12]}"
    return path, f"{path} (temporary, on the Spark Connect server)"


def log_entries(spark: SparkSession, folder: str) -> dict[int, list[str]]:
    """Batch id -> the lines of its entry in the log ``folder``; empty when there is no such folder."""
    from pyspark.sql import functions as F

    try:
        rows = (
            spark.read.text(folder, wholetext=True)  # text()'s own wholetext=False overrides an option()
            .select(F.input_file_name().alias("file"), "value")
            .collect()
        )
    except Exception:  # no folder yet (no batch planned): Spark's PATH_NOT_FOUND
        return {}
    entries: dict[int, list[str]] = {}
    for row in rows:
        match = _ENTRY.search(row["file"])
        if match is not None:
            entries[int(match.group(1))] = row["value"].splitlines()
    return entries


def planned_offsets(spark: SparkSession, checkpoint: str, topic: str) -> dict[int, dict[int, int]]:
    """Batch id -> the source offsets its entry in the checkpoint's offset log ends at."""
    logs = log_entries(spark, f"{checkpoint.rstrip('/')}/offsets")
    return {batch: offsets_of(lines[2], topic) for batch, lines in logs.items() if len(lines) >= 3}


def committed_batches(spark: SparkSession, checkpoint: str) -> set[int]:
    return set(log_entries(spark, f"{checkpoint.rstrip('/')}/commits"))
