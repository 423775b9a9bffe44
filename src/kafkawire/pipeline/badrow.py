"""Naming the record a failed streaming run could not process: its topic, partition and offset.

Spark reports a failing expression (a cast, ``assert_true``, a JSON value ``FAILFAST`` cannot
parse) but not which input row it failed on. So after a failed query the failed micro-batch's
offset range (Spark's offset log in the checkpoint: the batch that has no commit; read through
Spark, which reads its own disk, a Connect server's too) is read again as
a batch DataFrame, cached, and run through the same plan; when it fails there too, each partition's
range is halved until one record is left that fails on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkawire.pipeline.checkpoint import committed_batches, planned_offsets

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

MAX_JOBS = 64  # Spark jobs the search may run (about log2 of the batch's size per failing partition)


def failed_batch_range(
    spark: SparkSession, checkpoint: str, topic: str
) -> tuple[dict[int, int] | None, dict[int, int]] | None:
    """(start offsets or None for the query's starting offsets, end offsets) of the last planned
    micro-batch when it has not committed; None when every planned batch committed."""
    planned = planned_offsets(spark, checkpoint, topic)
    if not planned:
        return None
    last = max(planned)
    if last in committed_batches(spark, checkpoint):
        return None
    return planned.get(last - 1), planned[last]


def _fails(frame: DataFrame) -> str | None:
    """Spark's message when evaluating every row of ``frame`` fails, else None."""
    from kafkawire.pipeline.job import reason

    try:
        frame.write.format("noop").mode("overwrite").save()
    except Exception as exc:
        return reason(exc)
    return None


def find_bad_record(
    spark: SparkSession,
    opts: Any,
    bootstrap: str,
    schema: StructType | None,
    checkpoint: str,
    plan: Callable[[SparkSession, DataFrame, Any, StructType | None], DataFrame],
) -> str | None:
    """``topic/partition@offset: why`` of the first record of the failed batch the plan fails on,
    or None when the failure does not come from one record (a broker or sink failure)."""
    from pyspark.sql import functions as F

    found = failed_batch_range(spark, checkpoint, opts.from_topic)
    if found is None:
        return None
    start, end = found
    topic = opts.from_topic
    reader = (
        spark.read.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option(
            "startingOffsets",
            json.dumps({topic: {str(p): o for p, o in start.items()}}) if start else opts.starting_offsets,
        )
        .option("endingOffsets", json.dumps({topic: {str(p): o for p, o in end.items()}}))
    )
    try:
        source = reader.load().cache()
        bounds = {
            r["partition"]: (r["lo"], r["hi"] + 1)
            for r in source.groupBy("partition").agg(F.min("offset").alias("lo"), F.max("offset").alias("hi")).collect()
        }
    except Exception:
        return None  # the range cannot be read again (a broker failure): nothing to name
    jobs = 0
    try:
        for partition in sorted(bounds):
            lo, hi = bounds[partition]

            def attempt(a: int, b: int, p: int = partition) -> str | None:
                part = source.filter((F.col("partition") == p) & (F.col("offset") >= a) & (F.col("offset") < b))
                return _fails(plan(spark, part, opts, schema))

            why = attempt(lo, hi)
            jobs += 1
            if why is None:
                continue
            while hi - lo > 1 and jobs < MAX_JOBS:
                mid = (lo + hi) // 2
                first = attempt(lo, mid)
                jobs += 1
                if first is not None:
                    hi, why = mid, first
                else:
                    lo = mid
            where = f"{topic}/{partition}@{lo}" if hi - lo == 1 else f"{topic}/{partition}@{lo}..{hi - 1}"
            return f"{where}: {why}"
    finally:
        source.unpersist()
    return None
