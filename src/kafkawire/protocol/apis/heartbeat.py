"""Heartbeat (key 12): a classic group member says it is alive; the answer says whether to rejoin."""

from ..schema import api, f

HEARTBEAT = api(
    12,
    "Heartbeat",
    versions="0-4",
    flexible="4+",
    request=[
        f("group_id", "string"),
        f("generation_id", "int32"),
        f("member_id", "string"),
        f("group_instance_id", "string", "3+", nullable="3+", default=None),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f("error_code", "int16"),
    ],
)
