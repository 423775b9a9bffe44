"""DescribeCluster (key 60): the cluster id, the controller and the live brokers, without Metadata's topics.

Flexible from v0. ``endpoint_type`` (v1+) chooses between broker endpoints (1) and, sent to a
KRaft controller, controller endpoints (2). ``cluster_authorized_operations`` is a bit field,
``-2147483648`` when not requested.
"""

from ..schema import api, array, f

DESCRIBE_CLUSTER = api(
    60,
    "DescribeCluster",
    versions="0-2",
    flexible="0+",
    request=[
        f("include_cluster_authorized_operations", "bool"),
        f("endpoint_type", "int8", "1+", default=1),
        f("include_fenced_brokers", "bool", "2+"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
        f("endpoint_type", "int8", "1+", default=1),
        f("cluster_id", "string"),
        f("controller_id", "int32", default=-1),
        f(
            "brokers",
            array(
                f("broker_id", "int32"),
                f("host", "string"),
                f("port", "int32"),
                f("rack", "string", nullable="0+", default=None),
                f("is_fenced", "bool", "2+"),
            ),
        ),
        f("cluster_authorized_operations", "int32", default=-2147483648),
    ],
)
