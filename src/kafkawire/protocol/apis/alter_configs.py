"""AlterConfigs (key 33): replace the whole dynamic configuration of resources (legacy).

Every dynamic key not listed is reset to its default, which makes it easy to lose settings;
IncrementalAlterConfigs (Kafka 2.3+) changes single keys and is the safer choice where available.
"""

from ..schema import api, array, f

ALTER_CONFIGS = api(
    33,
    "AlterConfigs",
    versions="0-2",
    flexible="2+",
    request=[
        f(
            "resources",
            array(
                f("resource_type", "int8"),
                f("resource_name", "string"),
                f(
                    "configs",
                    array(
                        f("name", "string"),
                        f("value", "string", nullable="0+"),
                    ),
                ),
            ),
        ),
        f("validate_only", "bool"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "responses",
            array(
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+"),
                f("resource_type", "int8"),
                f("resource_name", "string"),
            ),
        ),
    ],
)
