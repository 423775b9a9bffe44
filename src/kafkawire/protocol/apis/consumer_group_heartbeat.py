"""ConsumerGroupHeartbeat (key 68): KIP-848's consumer group protocol, one request for everything.

The member joins (epoch 0), heartbeats, reports what it owns and leaves (epoch -1; -2 for a static
member that will come back) with this one call; the coordinator runs the assignor and answers the
member's target assignment, by topic id. Most request fields are null when unchanged since the
last heartbeat. v1 (KIP-1082) lets the member make up its own member id and adds the regex.
Irregular: ``assignment`` is a nullable struct (null: no change).
"""

from ..schema import api, array, f

_TOPIC_PARTITIONS = (
    f("topic_id", "uuid"),
    f("partitions", array("int32")),
)

CONSUMER_GROUP_HEARTBEAT = api(
    68,
    "ConsumerGroupHeartbeat",
    versions="0-1",
    flexible="0+",
    request=[
        f("group_id", "string"),
        f("member_id", "string"),
        f("member_epoch", "int32"),
        f("instance_id", "string", nullable="0+", default=None),
        f("rack_id", "string", nullable="0+", default=None),
        f("rebalance_timeout_ms", "int32", default=-1),
        f("subscribed_topic_names", array("string"), nullable="0+", default=None),
        f("subscribed_topic_regex", "string", "1+", nullable="1+", default=None),
        f("server_assignor", "string", nullable="0+", default=None),
        f("topic_partitions", array(*_TOPIC_PARTITIONS), nullable="0+", default=None),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
        f("member_id", "string", nullable="0+", default=None),
        f("member_epoch", "int32"),
        f("heartbeat_interval_ms", "int32"),
        f(
            "assignment",
            [
                f("topic_partitions", array(*_TOPIC_PARTITIONS)),
            ],
            nullable="0+",
            default=None,
        ),
    ],
)
