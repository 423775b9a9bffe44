"""ShareFetch (key 78): records acquired for a share group member, with acknowledgements riding along.

Requests run in a share session per (group, member, broker): epoch 0 opens it with the partitions
to fetch, each later request carries the next epoch and only the partitions added (``topics``)
or dropped (``forgotten_topics_data``); -1 closes it (no records are acquired then). Each
partition may carry acknowledgement batches: a range of offsets with one type for all of them,
or one type per offset (0 gap, 1 accept, 2 release, 3 reject). The answer's records are whole
batches; only the offsets of ``acquired_records`` (with their delivery count) are this member's.
v0 (Kafka 4.0's early access) is gone; v1 is the first stable version.
"""

from ..schema import api, array, f

ACKNOWLEDGEMENT_BATCH = (
    f("first_offset", "int64"),
    f("last_offset", "int64"),
    f("acknowledge_types", array("int8")),
)

LEADER_ID_AND_EPOCH = [
    f("leader_id", "int32"),
    f("leader_epoch", "int32"),
]

NODE_ENDPOINT = (
    f("node_id", "int32"),
    f("host", "string"),
    f("port", "int32"),
    f("rack", "string", nullable="0+", default=None),
)

SHARE_FETCH = api(
    78,
    "ShareFetch",
    versions="1",
    flexible="0+",
    request=[
        f("group_id", "string", nullable="0+", default=None),
        f("member_id", "string", nullable="0+"),
        f("share_session_epoch", "int32"),
        f("max_wait_ms", "int32"),
        f("min_bytes", "int32"),
        f("max_bytes", "int32", default=0x7FFFFFFF),
        f("max_records", "int32"),
        f("batch_size", "int32"),
        f(
            "topics",
            array(
                f("topic_id", "uuid"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("acknowledgement_batches", array(*ACKNOWLEDGEMENT_BATCH)),
                    ),
                ),
            ),
        ),
        f(
            "forgotten_topics_data",
            array(
                f("topic_id", "uuid"),
                f("partitions", array("int32")),
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
        f("acquisition_lock_timeout_ms", "int32"),
        f(
            "responses",
            array(
                f("topic_id", "uuid"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("error_code", "int16"),
                        f("error_message", "string", nullable="0+", default=None),
                        f("acknowledge_error_code", "int16"),
                        f("acknowledge_error_message", "string", nullable="0+", default=None),
                        f("current_leader", LEADER_ID_AND_EPOCH),
                        f("records", "records", nullable="0+"),
                        f(
                            "acquired_records",
                            array(
                                f("first_offset", "int64"),
                                f("last_offset", "int64"),
                                f("delivery_count", "int16"),
                            ),
                        ),
                    ),
                ),
            ),
        ),
        f("node_endpoints", array(*NODE_ENDPOINT)),
    ],
)
