"""ShareGroupHeartbeat (key 76): KIP-932's share group membership, one request for everything.

The member makes up its own member id (a UUID), joins with epoch 0, heartbeats with its current
epoch and leaves with -1. The coordinator assigns partitions by topic id; unlike a consumer group,
several members may be given the same partition, and nothing is revoked or reconciled: the
assignment is simply where the member fetches from. v0 (Kafka 4.0's early access) is gone from
Kafka 4.1; v1 is the first stable version. Irregular: ``assignment`` is a nullable struct (null:
no change since the last answer).
"""

from ..schema import api, array, f

SHARE_GROUP_HEARTBEAT = api(
    76,
    "ShareGroupHeartbeat",
    versions="1",
    flexible="0+",
    request=[
        f("group_id", "string"),
        f("member_id", "string"),
        f("member_epoch", "int32"),
        f("rack_id", "string", nullable="0+", default=None),
        f("subscribed_topic_names", array("string"), nullable="0+", default=None),
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
                f(
                    "topic_partitions",
                    array(
                        f("topic_id", "uuid"),
                        f("partitions", array("int32")),
                    ),
                ),
            ],
            nullable="0+",
            default=None,
        ),
    ],
)
