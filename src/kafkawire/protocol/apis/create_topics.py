"""CreateTopics (key 19): ask the controller to create topics, with explicit or computed placement.

A topic gives either ``num_partitions``/``replication_factor`` (``-1`` = broker default) or explicit
``assignments``, never both. With ``validate_only`` the broker checks the request and creates
nothing. From v5 the response echoes the resulting partition count, replication factor and configs.
Kafka 4 removed v0-1 from its specs; we start at v2 like it does.
"""

from ..schema import api, array, f

CREATE_TOPICS = api(
    19,
    "CreateTopics",
    versions="2-7",
    flexible="5+",
    request=[
        f(
            "topics",
            array(
                f("name", "string"),
                f("num_partitions", "int32"),
                f("replication_factor", "int16"),
                f(
                    "assignments",
                    array(
                        f("partition_index", "int32"),
                        f("broker_ids", array("int32")),
                    ),
                ),
                f(
                    "configs",
                    array(
                        f("name", "string"),
                        f("value", "string", nullable="0+"),
                    ),
                ),
            ),
        ),
        f("timeout_ms", "int32", default=60000),
        f("validate_only", "bool", "1+", default=False),
    ],
    response=[
        f("throttle_time_ms", "int32", "2+", ignorable=True),
        f(
            "topics",
            array(
                f("name", "string"),
                f("topic_id", "uuid", "7+", ignorable=True),
                f("error_code", "int16"),
                f("error_message", "string", "1+", nullable="0+", ignorable=True),
                f("topic_config_error_code", "int16", "5+", tag=0, ignorable=True),
                f("num_partitions", "int32", "5+", default=-1, ignorable=True),
                f("replication_factor", "int16", "5+", default=-1, ignorable=True),
                f(
                    "configs",
                    array(
                        f("name", "string", "5+"),
                        f("value", "string", "5+", nullable="5+"),
                        f("read_only", "bool", "5+"),
                        f("config_source", "int8", "5+", default=-1, ignorable=True),
                        f("is_sensitive", "bool", "5+"),
                    ),
                    "5+",
                    nullable="5+",
                    ignorable=True,
                ),
            ),
        ),
    ],
)
