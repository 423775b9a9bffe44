"""ShareGroupDescribe (key 77): a share group's state, epochs and members with their assignments.

An admin call (the coordinator of each group answers). Topics in the members' assignments come
with both id and name.
"""

from ..schema import api, array, f

SHARE_GROUP_DESCRIBE = api(
    77,
    "ShareGroupDescribe",
    versions="1",
    flexible="0+",
    request=[
        f("group_ids", array("string")),
        f("include_authorized_operations", "bool"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "groups",
            array(
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+", default=None),
                f("group_id", "string"),
                f("group_state", "string"),
                f("group_epoch", "int32"),
                f("assignment_epoch", "int32"),
                f("assignor_name", "string"),
                f(
                    "members",
                    array(
                        f("member_id", "string"),
                        f("rack_id", "string", nullable="0+", default=None),
                        f("member_epoch", "int32"),
                        f("client_id", "string"),
                        f("client_host", "string"),
                        f("subscribed_topic_names", array("string")),
                        f(
                            "assignment",
                            [
                                f(
                                    "topic_partitions",
                                    array(
                                        f("topic_id", "uuid"),
                                        f("topic_name", "string"),
                                        f("partitions", array("int32")),
                                    ),
                                ),
                            ],
                        ),
                    ),
                ),
                f("authorized_operations", "int32", default=-2147483648),
            ),
        ),
    ],
)
