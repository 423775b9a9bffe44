"""DescribeUserScramCredentials (key 50, KIP-554, Kafka 2.7+): each user's SCRAM mechanisms and
iteration counts (never the salted passwords). Null ``users`` describes every user."""

from ..schema import api, array, f

DESCRIBE_USER_SCRAM_CREDENTIALS = api(
    50,
    "DescribeUserScramCredentials",
    versions="0",
    flexible="0+",
    request=[
        f(
            "users",
            array(
                f("name", "string"),
            ),
            nullable="0+",
        ),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+"),
        f(
            "results",
            array(
                f("user", "string"),
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+"),
                f(
                    "credential_infos",
                    array(
                        f("mechanism", "int8"),
                        f("iterations", "int32"),
                    ),
                ),
            ),
        ),
    ],
)
