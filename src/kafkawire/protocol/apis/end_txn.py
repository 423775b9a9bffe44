"""EndTxn (key 26): commit or abort the ongoing transaction; v5 answers with the bumped producer epoch."""

from ..schema import api, f

END_TXN = api(
    26,
    "EndTxn",
    versions="0-5",
    flexible="3+",
    request=[
        f("transactional_id", "string"),
        f("producer_id", "int64"),
        f("producer_epoch", "int16"),
        f("committed", "bool"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("producer_id", "int64", "5+", default=-1, ignorable=True),
        f("producer_epoch", "int16", "5+", default=-1, ignorable=True),
    ],
)
