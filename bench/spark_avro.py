"""Spark Avro encoding: kafkawire.spark.functions.to_avro (an Arrow UDF, whole batches) against a
Python UDF calling fastavro once per row, the way PySpark users without spark-avro do it today.

``python -m bench.spark_avro [--rows 200000] [--rounds 3]``: local[2], a 10-field struct, each
side timed on ``df.select(encoded).write.format("noop")`` (the encoding job alone, no broker),
best of the rounds, after one warm-up round each. Prints rows/s and the ratio.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from typing import Any


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from kafkawire.spark.avro_types import schema_json
    from kafkawire.spark.functions import to_avro

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = (
        spark.range(args.rows, numPartitions=2)
        .selectExpr(
            "id",
            "cast(id % 1000 as int) AS qty",
            "id * 1.5 AS price",
            "concat('customer-', id % 977) AS customer",
            "concat('sku-', id % 131) AS sku",
            "id % 2 = 0 AS paid",
            "cast(id % 7 as int) AS region",
            "if(id % 5 = 0, null, concat('note ', id)) AS note",
            "id * 3 AS ts_ms",
            "cast(id / 3 as double) AS score",
        )
        .cache()
    )
    df.count()
    row = F.struct(*df.columns)
    schema = schema_json(df.schema)

    def per_row_udf() -> Any:
        parsed: list[Any] = []

        def encode(r: Any) -> bytes:
            from fastavro import parse_schema, schemaless_writer

            if not parsed:
                import json

                parsed.append(parse_schema(json.loads(schema)))
            buf = io.BytesIO()
            schemaless_writer(buf, parsed[0], r.asDict())
            return buf.getvalue()

        return F.udf(encode, "binary")

    sides = {"python-udf-fastavro": lambda: per_row_udf()(row), "kafkawire-to_avro": lambda: to_avro(row)}
    best: dict[str, float] = {}
    for name, column in sides.items():
        times = []
        for _ in range(args.rounds + 1):
            start = time.perf_counter()
            df.select(column().alias("v")).write.format("noop").mode("overwrite").save()
            times.append(time.perf_counter() - start)
        best[name] = min(times[1:])
        print(
            f"{name:22s} {args.rows / best[name]:>10,.0f} rows/s  (rounds: {', '.join(f'{t:.2f}s' for t in times[1:])})"
        )
    print(f"ratio to_avro / per-row UDF: {best['python-udf-fastavro'] / best['kafkawire-to_avro']:.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
