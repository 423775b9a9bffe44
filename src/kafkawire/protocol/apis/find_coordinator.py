"""FindCoordinator (key 10): locate the broker that coordinates a consumer group or a transactional id.

Irregular: v4 switched from one key and one flat answer to batches (``coordinator_keys`` in, a
``coordinators`` array out); the flat fields of v0-3 are kept for older brokers.
"""

from ..schema import api, array, f

FIND_COORDINATOR = api(
    10,
    "FindCoordinator",
    versions="0-6",
    flexible="3+",
    request=[
        f("key", "string", "0-3"),
        f("key_type", "int8", "1+"),
        f("coordinator_keys", array("string"), "4+"),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f("error_code", "int16", "0-3"),
        f("error_message", "string", "1-3", nullable="1-3", ignorable=True),
        f("node_id", "int32", "0-3"),
        f("host", "string", "0-3"),
        f("port", "int32", "0-3"),
        f(
            "coordinators",
            array(
                f("key", "string", "4+"),
                f("node_id", "int32", "4+"),
                f("host", "string", "4+"),
                f("port", "int32", "4+"),
                f("error_code", "int16", "4+"),
                f("error_message", "string", "4+", nullable="4+", ignorable=True),
            ),
            "4+",
        ),
    ],
)
