"""OffsetCommit (key 8): store a group's consumed positions at its coordinator.

The generation (classic) or member epoch (KIP-848) and member id let the coordinator refuse
commits from members that no longer own the partitions. Irregular: v10 names topics by id.
"""

from ..schema import api, array, f

OFFSET_COMMIT = api(
    8,
    "OffsetCommit",
    versions="2-10",
    flexible="8+",
    request=[
        f("group_id", "string"),
        f("generation_id_or_member_epoch", "int32", "1+", default=-1, ignorable=True),
        f("member_id", "string", "1+", ignorable=True),
        f("group_instance_id", "string", "7+", nullable="7+", default=None),
        f("retention_time_ms", "int64", "2-4", default=-1, ignorable=True),
        f(
            "topics",
            array(
                f("name", "string", "0-9", ignorable=True),
                f("topic_id", "uuid", "10+", ignorable=True),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("committed_offset", "int64"),
                        f("committed_leader_epoch", "int32", "6+", default=-1, ignorable=True),
                        f("commit_timestamp", "int64", "1", default=-1),
                        f("committed_metadata", "string", nullable="0+"),
                    ),
                ),
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", "int32", "3+", ignorable=True),
        f(
            "topics",
            array(
                f("name", "string", "0-9", ignorable=True),
                f("topic_id", "uuid", "10+", ignorable=True),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("error_code", "int16"),
                    ),
                ),
            ),
        ),
    ],
)
