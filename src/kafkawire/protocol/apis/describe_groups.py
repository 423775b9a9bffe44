"""DescribeGroups (key 15): state, protocol and members of groups, sent to their coordinator.

Member metadata and assignments travel as opaque bytes in the group protocol's own format
(the consumer protocol for consumer groups), decoded elsewhere.
"""

from ..schema import api, array, f

DESCRIBE_GROUPS = api(
    15,
    "DescribeGroups",
    versions="0-6",
    flexible="5+",
    request=[
        f("groups", array("string")),
        f("include_authorized_operations", "bool", "3+"),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f(
            "groups",
            array(
                f("error_code", "int16"),
                f("error_message", "string", "6+", nullable="6+", default=None),
                f("group_id", "string"),
                f("group_state", "string"),
                f("protocol_type", "string"),
                f("protocol_data", "string"),
                f(
                    "members",
                    array(
                        f("member_id", "string"),
                        f("group_instance_id", "string", "4+", nullable="4+", default=None, ignorable=True),
                        f("client_id", "string"),
                        f("client_host", "string"),
                        f("member_metadata", "bytes"),
                        f("member_assignment", "bytes"),
                    ),
                ),
                f("authorized_operations", "int32", "3+", default=-2147483648),
            ),
        ),
    ],
)
