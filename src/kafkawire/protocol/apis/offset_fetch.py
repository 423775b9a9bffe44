"""OffsetFetch (key 9): read a group's committed positions from its coordinator.

Irregular: v8 batches several groups (``groups``) where v1-7 asked for one; v10 names topics by id.
``require_stable`` (v7+) makes the coordinator answer UNSTABLE_OFFSET_COMMIT while a transaction
holds uncommitted offsets for a partition, instead of an older offset.
"""

from ..schema import api, array, f

OFFSET_FETCH = api(
    9,
    "OffsetFetch",
    versions="1-10",
    flexible="6+",
    request=[
        f("group_id", "string", "0-7"),
        f(
            "topics",
            array(
                f("name", "string", "0-7"),
                f("partition_indexes", array("int32"), "0-7"),
            ),
            "0-7",
            nullable="2-7",
        ),
        f(
            "groups",
            array(
                f("group_id", "string", "8+"),
                f("member_id", "string", "9+", nullable="9+", default=None, ignorable=True),
                f("member_epoch", "int32", "9+", default=-1, ignorable=True),
                f(
                    "topics",
                    array(
                        f("name", "string", "8-9", ignorable=True),
                        f("topic_id", "uuid", "10+", ignorable=True),
                        f("partition_indexes", array("int32"), "8+"),
                    ),
                    "8+",
                    nullable="8+",
                ),
            ),
            "8+",
        ),
        f("require_stable", "bool", "7+"),
    ],
    response=[
        f("throttle_time_ms", "int32", "3+", ignorable=True),
        f(
            "topics",
            array(
                f("name", "string", "0-7"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32", "0-7"),
                        f("committed_offset", "int64", "0-7"),
                        f("committed_leader_epoch", "int32", "5-7", default=-1, ignorable=True),
                        f("metadata", "string", "0-7", nullable="0-7"),
                        f("error_code", "int16", "0-7"),
                    ),
                    "0-7",
                ),
            ),
            "0-7",
        ),
        f("error_code", "int16", "2-7", ignorable=True),
        f(
            "groups",
            array(
                f("group_id", "string", "8+"),
                f(
                    "topics",
                    array(
                        f("name", "string", "8-9", ignorable=True),
                        f("topic_id", "uuid", "10+", ignorable=True),
                        f(
                            "partitions",
                            array(
                                f("partition_index", "int32", "8+"),
                                f("committed_offset", "int64", "8+"),
                                f("committed_leader_epoch", "int32", "8+", default=-1, ignorable=True),
                                f("metadata", "string", "8+", nullable="8+"),
                                f("error_code", "int16", "8+"),
                            ),
                            "8+",
                        ),
                    ),
                    "8+",
                ),
                f("error_code", "int16", "8+"),
            ),
            "8+",
        ),
    ],
)
