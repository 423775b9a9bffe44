"""ConsumerGroupDescribe (key 69): KIP-848's DescribeGroups, for groups of the consumer protocol.

An admin call (the coordinator of each group answers). Each member comes with what it owns
(``assignment``) and what the coordinator wants it to own (``target_assignment``), topics by id
and name. A group the broker does not run with the consumer protocol (a classic group, or none)
is answered GROUP_ID_NOT_FOUND. v1 (KIP-1099) adds each member's type.
"""

from ..schema import api, array, f

_ASSIGNMENT = [
    f(
        "topic_partitions",
        array(
            f("topic_id", "uuid"),
            f("topic_name", "string"),
            f("partitions", array("int32")),
        ),
    ),
]

CONSUMER_GROUP_DESCRIBE = api(
    69,
    "ConsumerGroupDescribe",
    versions="0-1",
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
                        f("instance_id", "string", nullable="0+", default=None),
                        f("rack_id", "string", nullable="0+", default=None),
                        f("member_epoch", "int32"),
                        f("client_id", "string"),
                        f("client_host", "string"),
                        f("subscribed_topic_names", array("string")),
                        f("subscribed_topic_regex", "string", nullable="0+", default=None),
                        f("assignment", _ASSIGNMENT),
                        f("target_assignment", _ASSIGNMENT),
                        f("member_type", "int8", "1+", ignorable=True, default=-1),
                    ),
                ),
                f("authorized_operations", "int32", default=-2147483648),
            ),
        ),
    ],
)
