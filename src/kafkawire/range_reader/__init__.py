"""The read side: where to read (partitions, ListOffsets) and reading a range (Fetch).

The foundation a consumer builds on; the Spark reader (`kafkawire.spark.reader`) uses it today.
"""

from kafkawire.range_reader.offsets import (
    EARLIEST,
    LATEST,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    OffsetAnswer,
    list_offsets,
    partitions_for,
    topics_matching,
)
from kafkawire.range_reader.range_fetch import DataLossError, FetchSettings, fetch_range, high_watermarks

__all__ = [
    "EARLIEST",
    "LATEST",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "DataLossError",
    "FetchSettings",
    "OffsetAnswer",
    "fetch_range",
    "high_watermarks",
    "list_offsets",
    "partitions_for",
    "topics_matching",
]
