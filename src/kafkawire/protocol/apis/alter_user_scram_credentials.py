"""AlterUserScramCredentials (key 51, KIP-554, Kafka 2.7+): delete or set users' SCRAM credentials.

The client sends the salt and the salted password (PBKDF2 over the password), never the password.
"""

from ..schema import api, array, f

ALTER_USER_SCRAM_CREDENTIALS = api(
    51,
    "AlterUserScramCredentials",
    versions="0",
    flexible="0+",
    request=[
        f(
            "deletions",
            array(
                f("name", "string"),
                f("mechanism", "int8"),
            ),
        ),
        f(
            "upsertions",
            array(
                f("name", "string"),
                f("mechanism", "int8"),
                f("iterations", "int32"),
                f("salt", "bytes"),
                f("salted_password", "bytes"),
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "results",
            array(
                f("user", "string"),
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+"),
            ),
        ),
    ],
)
