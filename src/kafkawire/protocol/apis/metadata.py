"""Metadata (key 3): brokers, controller and the partition leaders of the topics we ask about.

Asking for every topic differs by version: v0 sends an empty topic list, v1+ sends a null one (an
empty list then means "no topics", used to learn the brokers alone). v10+ may name topics by id.
"""

from ..schema import api, array, f

METADATA = api(
    3,
    "Metadata",
    versions="0-13",
    flexible="9+",
    request=[
        f(
            "topics",
            array(
                f("topic_id", "uuid", "10+", ignorable=True),
                f("name", "string", nullable="10+"),
            ),
            nullable="1+",
        ),
        f("allow_auto_topic_creation", "bool", "4+", default=True),
        f("include_cluster_authorized_operations", "bool", "8-10"),
        f("include_topic_authorized_operations", "bool", "8+"),
    ],
    response=[
        f("throttle_time_ms", "int32", "3+", ignorable=True),
        f(
            "brokers",
            array(
                f("node_id", "int32"),
                f("host", "string"),
                f("port", "int32"),
                f("rack", "string", "1+", nullable="1+", default=None, ignorable=True),
            ),
        ),
        f("cluster_id", "string", "2+", nullable="2+", default=None, ignorable=True),
        f("controller_id", "int32", "1+", default=-1, ignorable=True),
        f(
            "topics",
            array(
                f("error_code", "int16"),
                f("name", "string", nullable="12+"),
                f("topic_id", "uuid", "10+", ignorable=True),
                f("is_internal", "bool", "1+", ignorable=True),
                f(
                    "partitions",
                    array(
                        f("error_code", "int16"),
                        f("partition_index", "int32"),
                        f("leader_id", "int32"),
                        f("leader_epoch", "int32", "7+", default=-1, ignorable=True),
                        f("replica_nodes", array("int32")),
                        f("isr_nodes", array("int32")),
                        f("offline_replicas", array("int32"), "5+", ignorable=True),
                    ),
                ),
                f("topic_authorized_operations", "int32", "8+", default=-(2**31)),
            ),
        ),
        f("cluster_authorized_operations", "int32", "8-10", default=-(2**31)),
        f("error_code", "int16", "13+", ignorable=True),
    ],
)
