"""SyncGroup (key 14): the leader hands out the assignments; every member receives its own.

Assignments are opaque here: the consumer protocol's assignment, in core/consumer_protocol.py.
"""

from ..schema import api, array, f

SYNC_GROUP = api(
    14,
    "SyncGroup",
    versions="0-5",
    flexible="4+",
    request=[
        f("group_id", "string"),
        f("generation_id", "int32"),
        f("member_id", "string"),
        f("group_instance_id", "string", "3+", nullable="3+", default=None),
        f("protocol_type", "string", "5+", nullable="5+", default=None, ignorable=True),
        f("protocol_name", "string", "5+", nullable="5+", default=None, ignorable=True),
        f(
            "assignments",
            array(
                f("member_id", "string"),
                f("assignment", "bytes"),
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f("error_code", "int16"),
        f("protocol_type", "string", "5+", nullable="5+", default=None, ignorable=True),
        f("protocol_name", "string", "5+", nullable="5+", default=None, ignorable=True),
        f("assignment", "bytes"),
    ],
)
