"""InitProducerId (key 22): get a producer id and epoch, for idempotent or transactional producing.

A null transactional id asks for an idempotent-only producer. From v3 a producer passes its current
id and epoch so the coordinator can bump the epoch instead of fencing it; v6 adds two-phase-commit
fields that kafkawire leaves at their defaults.
"""

from ..schema import api, f

INIT_PRODUCER_ID = api(
    22,
    "InitProducerId",
    versions="0-6",
    flexible="2+",
    request=[
        f("transactional_id", "string", nullable="0+"),
        f("transaction_timeout_ms", "int32"),
        f("producer_id", "int64", "3+", default=-1),
        f("producer_epoch", "int16", "3+", default=-1),
        f("enable2_pc", "bool", "6+"),
        f("keep_prepared_txn", "bool", "6+"),
    ],
    response=[
        f("throttle_time_ms", "int32", ignorable=True),
        f("error_code", "int16"),
        f("producer_id", "int64", default=-1),
        f("producer_epoch", "int16"),
        f("ongoing_txn_producer_id", "int64", "6+", default=-1),
        f("ongoing_txn_producer_epoch", "int16", "6+", default=-1),
    ],
)
