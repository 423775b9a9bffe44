"""DeleteRecords (key 21): advance partitions' log start offset, sent to each partition's leader.

``offset`` -1 means the high watermark (delete everything); the response gives the new low watermark.
"""

from ..schema import api, array, f

DELETE_RECORDS = api(
    21,
    "DeleteRecords",
    versions="0-2",
    flexible="2+",
    request=[
        f(
            "topics",
            array(
                f("name", "string"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("offset", "int64"),
                    ),
                ),
            ),
        ),
        f("timeout_ms", "int32"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "topics",
            array(
                f("name", "string"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("low_watermark", "int64"),
                        f("error_code", "int16"),
                    ),
                ),
            ),
        ),
    ],
)
