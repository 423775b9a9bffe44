"""CreateAcls (key 30): add access-control entries, sent to any broker (it forwards to the authorizer).

Types, operations and permissions use Kafka's numbering, which librdkafka's enums share; the
pattern type (LITERAL 3, PREFIXED 4) exists from v1 (KIP-290).
"""

from ..schema import api, array, f

CREATE_ACLS = api(
    30,
    "CreateAcls",
    versions="1-3",
    flexible="2+",
    request=[
        f(
            "creations",
            array(
                f("resource_type", "int8"),
                f("resource_name", "string"),
                f("resource_pattern_type", "int8", "1+", default=3),
                f("principal", "string"),
                f("host", "string"),
                f("operation", "int8"),
                f("permission_type", "int8"),
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "results",
            array(
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+"),
            ),
        ),
    ],
)
