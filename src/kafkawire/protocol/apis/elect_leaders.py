"""ElectLeaders (key 43): move partitions' leadership, sent to the controller.

v0 is Kafka 2.2/2.3's ElectPreferredLeaders (preferred elections only); ``election_type``
(0 preferred, 1 unclean) and the top-level error code come with v1 (Kafka 2.4, KIP-460).
Null ``topic_partitions`` means every partition.
"""

from ..schema import api, array, f

ELECT_LEADERS = api(
    43,
    "ElectLeaders",
    versions="0-2",
    flexible="2+",
    request=[
        f("election_type", "int8", "1+"),
        f(
            "topic_partitions",
            array(
                f("topic", "string"),
                f("partitions", array("int32")),
            ),
            nullable="0+",
        ),
        f("timeout_ms", "int32", default=60000),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16", "1+"),
        f(
            "replica_election_results",
            array(
                f("topic", "string"),
                f(
                    "partition_result",
                    array(
                        f("partition_id", "int32"),
                        f("error_code", "int16"),
                        f("error_message", "string", nullable="0+"),
                    ),
                ),
            ),
        ),
    ],
)
