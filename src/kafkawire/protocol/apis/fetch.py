"""Fetch (key 1): read record batches from partition leaders, optionally through an incremental fetch session.

Versions below 4 (legacy message sets only) are gone from Kafka 4 and not declared. v13+ names
topics by id instead of by name; the replica-only fields (``replica_id``, ``replica_state``) stay at
their defaults in a client.
"""

from ..schema import api, array, f

FETCH = api(
    1,
    "Fetch",
    versions="4-18",
    flexible="12+",
    request=[
        f("cluster_id", "string", "12+", nullable="12+", tag=0, default=None, ignorable=True),
        f("replica_id", "int32", "0-14", default=-1),
        f(
            "replica_state",
            [
                f("replica_id", "int32", "15+", default=-1),
                f("replica_epoch", "int64", "15+", default=-1),
            ],
            "15+",
            tag=1,
        ),
        f("max_wait_ms", "int32"),
        f("min_bytes", "int32"),
        f("max_bytes", "int32", "3+", default=0x7FFFFFFF, ignorable=True),
        f("isolation_level", "int8", "4+", ignorable=True),
        f("session_id", "int32", "7+", ignorable=True),
        f("session_epoch", "int32", "7+", default=-1, ignorable=True),
        f(
            "topics",
            array(
                f("topic", "string", "0-12", ignorable=True),
                f("topic_id", "uuid", "13+", ignorable=True),
                f(
                    "partitions",
                    array(
                        f("partition", "int32"),
                        f("current_leader_epoch", "int32", "9+", default=-1, ignorable=True),
                        f("fetch_offset", "int64"),
                        f("last_fetched_epoch", "int32", "12+", default=-1),
                        f("log_start_offset", "int64", "5+", default=-1, ignorable=True),
                        f("partition_max_bytes", "int32"),
                        f("replica_directory_id", "uuid", "17+", tag=0, ignorable=True),
                        f("high_watermark", "int64", "18+", tag=1, default=2**63 - 1, ignorable=True),
                    ),
                ),
            ),
        ),
        f(
            "forgotten_topics_data",
            array(
                f("topic", "string", "7-12", ignorable=True),
                f("topic_id", "uuid", "13+", ignorable=True),
                f("partitions", array("int32"), "7+"),
            ),
            "7+",
        ),
        f("rack_id", "string", "11+", ignorable=True),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f("error_code", "int16", "7+", ignorable=True),
        f("session_id", "int32", "7+"),
        f(
            "responses",
            array(
                f("topic", "string", "0-12", ignorable=True),
                f("topic_id", "uuid", "13+", ignorable=True),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("error_code", "int16"),
                        f("high_watermark", "int64"),
                        f("last_stable_offset", "int64", "4+", default=-1, ignorable=True),
                        f("log_start_offset", "int64", "5+", default=-1, ignorable=True),
                        f(
                            "diverging_epoch",
                            [
                                f("epoch", "int32", "12+", default=-1),
                                f("end_offset", "int64", "12+", default=-1),
                            ],
                            "12+",
                            tag=0,
                        ),
                        f(
                            "current_leader",
                            [
                                f("leader_id", "int32", "12+", default=-1),
                                f("leader_epoch", "int32", "12+", default=-1),
                            ],
                            "12+",
                            tag=1,
                        ),
                        f(
                            "snapshot_id",
                            [
                                f("end_offset", "int64", default=-1),
                                f("epoch", "int32", default=-1),
                            ],
                            "12+",
                            tag=2,
                        ),
                        f(
                            "aborted_transactions",
                            array(
                                f("producer_id", "int64", "4+"),
                                f("first_offset", "int64", "4+"),
                            ),
                            "4+",
                            nullable="4+",
                            ignorable=True,
                        ),
                        f("preferred_read_replica", "int32", "11+", default=-1),
                        f("records", "records", nullable="0+"),
                    ),
                ),
            ),
        ),
        f(
            "node_endpoints",
            array(
                f("node_id", "int32", "16+"),
                f("host", "string", "16+"),
                f("port", "int32", "16+"),
                f("rack", "string", "16+", nullable="16+", default=None),
            ),
            "16+",
            tag=0,
        ),
    ],
)
