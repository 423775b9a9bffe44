"""Produce (key 0): write record batches to partition leaders.

Versions 0-2 carry legacy message sets (magic 0/1); Kafka 4 dropped them but older brokers and
librdkafka's mock cluster still speak them. Version 3 brought RecordBatch v2 and transactions.
"""

from ..schema import api, array, f

PRODUCE = api(
    0,
    "Produce",
    versions="0-13",
    flexible="9+",
    request=[
        f("transactional_id", "string", "3+", nullable="3+", default=None),
        f("acks", "int16"),
        f("timeout_ms", "int32"),
        f(
            "topic_data",
            array(
                f("name", "string", "0-12", ignorable=True),
                f("topic_id", "uuid", "13+", ignorable=True),
                f(
                    "partition_data",
                    array(
                        f("index", "int32"),
                        f("records", "records", nullable="0+"),
                    ),
                ),
            ),
        ),
    ],
    response=[
        f(
            "responses",
            array(
                f("name", "string", "0-12", ignorable=True),
                f("topic_id", "uuid", "13+", ignorable=True),
                f(
                    "partition_responses",
                    array(
                        f("index", "int32"),
                        f("error_code", "int16"),
                        f("base_offset", "int64"),
                        f("log_append_time_ms", "int64", "2+", default=-1, ignorable=True),
                        f("log_start_offset", "int64", "5+", default=-1, ignorable=True),
                        f(
                            "record_errors",
                            array(
                                f("batch_index", "int32", "8+"),
                                f("batch_index_error_message", "string", "8+", nullable="8+", default=None),
                            ),
                            "8+",
                            ignorable=True,
                        ),
                        f("error_message", "string", "8+", nullable="8+", default=None, ignorable=True),
                        f(
                            "current_leader",
                            [
                                f("leader_id", "int32", "10+", default=-1),
                                f("leader_epoch", "int32", "10+", default=-1),
                            ],
                            "10+",
                            tag=0,
                        ),
                    ),
                ),
            ),
        ),
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f(
            "node_endpoints",
            array(
                f("node_id", "int32", "10+"),
                f("host", "string", "10+"),
                f("port", "int32", "10+"),
                f("rack", "string", "10+", nullable="10+", default=None),
            ),
            "10+",
            tag=0,
        ),
    ],
)
