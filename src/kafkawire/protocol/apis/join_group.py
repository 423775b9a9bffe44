"""JoinGroup (key 11): a member asks the group coordinator to (re)join a classic group.

The coordinator answers once every known member has rejoined (or the rebalance timeout passed);
the leader's answer carries every member's protocol metadata, the others' an empty member list.
Protocol metadata is opaque here: the consumer protocol's subscription, in core/consumer_protocol.py.
"""

from ..schema import api, array, f

JOIN_GROUP = api(
    11,
    "JoinGroup",
    versions="0-9",
    flexible="6+",
    request=[
        f("group_id", "string"),
        f("session_timeout_ms", "int32"),
        f("rebalance_timeout_ms", "int32", "1+", default=-1, ignorable=True),
        f("member_id", "string"),
        f("group_instance_id", "string", "5+", nullable="5+", default=None),
        f("protocol_type", "string"),
        f(
            "protocols",
            array(
                f("name", "string"),
                f("metadata", "bytes"),
            ),
        ),
        f("reason", "string", "8+", nullable="8+", default=None, ignorable=True),
    ],
    response=[
        f("throttle_time_ms", "int32", "2+", ignorable=True),
        f("error_code", "int16"),
        f("generation_id", "int32", default=-1),
        f("protocol_type", "string", "7+", nullable="7+", default=None, ignorable=True),
        f("protocol_name", "string", nullable="7+"),
        f("leader", "string"),
        f("skip_assignment", "bool", "9+"),
        f("member_id", "string"),
        f(
            "members",
            array(
                f("member_id", "string"),
                f("group_instance_id", "string", "5+", nullable="5+", default=None, ignorable=True),
                f("metadata", "bytes"),
            ),
        ),
    ],
)
