"""AddPartitionsToTxn (key 24): register partitions with the ongoing transaction before producing to them.

Irregular: v4 made the request a batch over several transactions, meant for broker-to-broker
verification; a client sends v3 or lower and fills the ``v3_and_below_*`` fields, which exist only
there. The topic shapes both layouts share are declared once below.
"""

from ..schema import api, array, f

ADD_PARTITIONS_TO_TXN_TOPIC = [
    f("name", "string"),
    f("partitions", array("int32")),
]

ADD_PARTITIONS_TO_TXN_PARTITION_RESULT = [
    f("partition_index", "int32"),
    f("partition_error_code", "int16"),
]

ADD_PARTITIONS_TO_TXN_TOPIC_RESULT = [
    f("name", "string"),
    f("results_by_partition", array(ADD_PARTITIONS_TO_TXN_PARTITION_RESULT)),
]

ADD_PARTITIONS_TO_TXN = api(
    24,
    "AddPartitionsToTxn",
    versions="0-5",
    flexible="3+",
    request=[
        f(
            "transactions",
            array(
                f("transactional_id", "string", "4+"),
                f("producer_id", "int64", "4+"),
                f("producer_epoch", "int16", "4+"),
                f("verify_only", "bool", "4+"),
                f("topics", array(ADD_PARTITIONS_TO_TXN_TOPIC), "4+"),
            ),
            "4+",
        ),
        f("v3_and_below_transactional_id", "string", "0-3"),
        f("v3_and_below_producer_id", "int64", "0-3"),
        f("v3_and_below_producer_epoch", "int16", "0-3"),
        f("v3_and_below_topics", array(ADD_PARTITIONS_TO_TXN_TOPIC), "0-3"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16", "4+", ignorable=True),
        f(
            "results_by_transaction",
            array(
                f("transactional_id", "string", "4+"),
                f("topic_results", array(ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "4+"),
            ),
            "4+",
        ),
        f("results_by_topic_v3_and_below", array(ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "0-3"),
    ],
)
