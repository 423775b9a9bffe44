"""LeaveGroup (key 13): members leave a classic group so that their partitions move at once.

Irregular: v3 replaced the single ``member_id`` with a batch of member identities (KIP-345), each
answered with its own error code.
"""

from ..schema import api, array, f

LEAVE_GROUP = api(
    13,
    "LeaveGroup",
    versions="0-5",
    flexible="4+",
    request=[
        f("group_id", "string"),
        f("member_id", "string", "0-2"),
        f(
            "members",
            array(
                f("member_id", "string", "3+"),
                f("group_instance_id", "string", "3+", nullable="3+", default=None),
                f("reason", "string", "5+", nullable="5+", default=None, ignorable=True),
            ),
            "3+",
        ),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f("error_code", "int16"),
        f(
            "members",
            array(
                f("member_id", "string", "3+"),
                f("group_instance_id", "string", "3+", nullable="3+"),
                f("error_code", "int16", "3+"),
            ),
            "3+",
        ),
    ],
)
