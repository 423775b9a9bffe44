"""ShareAcknowledge (key 79): acknowledgements alone, in the member's share session on that broker.

The same acknowledgement batches ShareFetch carries, without fetching; it never opens a session
(epoch 0 is refused) and epoch -1 acknowledges and closes it, releasing what is still acquired.
v1 is the first stable version.
"""

from ..schema import api, array, f
from .share_fetch import ACKNOWLEDGEMENT_BATCH, LEADER_ID_AND_EPOCH, NODE_ENDPOINT

SHARE_ACKNOWLEDGE = api(
    79,
    "ShareAcknowledge",
    versions="1",
    flexible="0+",
    request=[
        f("group_id", "string", nullable="0+", default=None),
        f("member_id", "string", nullable="0+"),
        f("share_session_epoch", "int32"),
        f(
            "topics",
            array(
                f("topic_id", "uuid"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("acknowledgement_batches", array(*ACKNOWLEDGEMENT_BATCH)),
                    ),
                ),
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
        f(
            "responses",
            array(
                f("topic_id", "uuid"),
                f(
                    "partitions",
                    array(
                        f("partition_index", "int32"),
                        f("error_code", "int16"),
                        f("error_message", "string", nullable="0+", default=None),
                        f("current_leader", LEADER_ID_AND_EPOCH),
                    ),
                ),
            ),
        ),
        f("node_endpoints", array(*NODE_ENDPOINT)),
    ],
)
