"""IncrementalAlterConfigs (key 44): change individual config keys of resources (Kafka 2.3+).

Each entry carries a ``config_operation``: 0 set, 1 delete (back to default), 2 append and
3 subtract (for list-valued keys). Keys not mentioned are left alone, unlike AlterConfigs.
"""

from ..schema import api, array, f

INCREMENTAL_ALTER_CONFIGS = api(
    44,
    "IncrementalAlterConfigs",
    versions="0-1",
    flexible="1+",
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
                        f("config_operation", "int8"),
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
