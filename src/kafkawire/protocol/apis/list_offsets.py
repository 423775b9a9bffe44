"""ListOffsets (key 2): look up a partition's offset by timestamp (earliest, latest, or a point in time).

Irregular: Kafka 4 removed v0, which returned a list of old-style offsets; its two v0-only fields
stay declared (with versions "0") so the layout matches Kafka's spec, but no version we speak uses them.
"""

from ..schema import api, array, f

LIST_OFFSETS = api(
    2,
    "ListOffsets",
    versions="1-11",
    flexible="6+",
    request=[
        f("replica_id", "int32"),
        f("isolation_level", "int8", "2+"),
        f(
            "topics",
            array(
                f("name", "string"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("current_leader_epoch", "int32", "4+", default=-1, ignorable=True),
                        f("timestamp", "int64"),
                        f("max_num_offsets", "int32", "0", default=1),
                    ),
                ),
            ),
        ),
        f("timeout_ms", "int32", "10+", ignorable=True),
    ],
    response=[
        f("throttle_time_ms", "int32", "2+", ignorable=True),
        f(
            "topics",
            array(
                f("name", "string"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("error_code", "int16"),
                        f("old_style_offsets", array("int64"), "0"),
                        f("timestamp", "int64", "1+", default=-1),
                        f("offset", "int64", "1+", default=-1),
                        f("leader_epoch", "int32", "4+", default=-1),
                    ),
                ),
            ),
        ),
    ],
)
