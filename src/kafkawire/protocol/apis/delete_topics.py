"""DeleteTopics (key 20): ask the controller to delete topics.

Irregular: up to v5 the request names topics in a bare string array ``topic_names``; v6 replaced it
with ``topics``, entries that carry a name or a topic id (the other left null/zero). Responses
likewise gain ``topic_id`` in v6, when ``name`` becomes nullable.
Kafka 4 removed v0 from its specs; we start at v1 like it does.
"""

from ..schema import api, array, f

DELETE_TOPICS = api(
    20,
    "DeleteTopics",
    versions="1-6",
    flexible="4+",
    request=[
        f(
            "topics",
            array(
                f("name", "string", "6+", nullable="6+", default=None),
                f("topic_id", "uuid", "6+"),
            ),
            "6+",
        ),
        f("topic_names", array("string"), "0-5", ignorable=True),
        f("timeout_ms", "int32"),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f(
            "responses",
            array(
                f("name", "string", nullable="6+"),
                f("topic_id", "uuid", "6+", ignorable=True),
                f("error_code", "int16"),
                f("error_message", "string", "5+", nullable="5+", default=None, ignorable=True),
            ),
        ),
    ],
)
