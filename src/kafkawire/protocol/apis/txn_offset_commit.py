"""TxnOffsetCommit (key 28): commit consumer offsets to the group coordinator as part of a transaction.

From v3 the request carries the consumer's group generation and member ids, so a zombie consumer's
offsets are rejected.
"""

from ..schema import api, array, f

TXN_OFFSET_COMMIT = api(
    28,
    "TxnOffsetCommit",
    versions="0-5",
    flexible="3+",
    request=[
        f("transactional_id", "string"),
        f("group_id", "string"),
        f("producer_id", "int64"),
        f("producer_epoch", "int16"),
        f("generation_id", "int32", "3+", default=-1),
        f("member_id", "string", "3+"),
        f("group_instance_id", "string", "3+", nullable="3+", default=None),
        f(
            "topics",
            array(
                f("name", "string"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("committed_offset", "int64"),
                        f("committed_leader_epoch", "int32", "2+", default=-1, ignorable=True),
                        f("committed_metadata", "string", nullable="0+"),
                    ),
                ),
            ),
        ),
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
                        f("error_code", "int16"),
                    ),
                ),
            ),
        ),
    ],
)
