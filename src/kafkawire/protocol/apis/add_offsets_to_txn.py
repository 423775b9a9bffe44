"""AddOffsetsToTxn (key 25): tie a consumer group to the ongoing transaction (send-offsets-to-transaction)."""

from ..schema import api, f

ADD_OFFSETS_TO_TXN = api(
    25,
    "AddOffsetsToTxn",
    versions="0-4",
    flexible="3+",
    request=[
        f("transactional_id", "string"),
        f("producer_id", "int64"),
        f("producer_epoch", "int16"),
        f("group_id", "string"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
    ],
)
