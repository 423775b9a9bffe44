"""DeleteAcls (key 31): remove the access-control entries matching each filter, at any broker.

Each filter's answer lists the entries it removed (each with its own error code).
"""

from ..schema import api, array, f

DELETE_ACLS = api(
    31,
    "DeleteAcls",
    versions="1-3",
    flexible="2+",
    request=[
        f(
            "filters",
            array(
                f("resource_type_filter", "int8"),
                f("resource_name_filter", "string", nullable="0+"),
                f("pattern_type_filter", "int8", "1+", default=3),
                f("principal_filter", "string", nullable="0+"),
                f("host_filter", "string", nullable="0+"),
                f("operation", "int8"),
                f("permission_type", "int8"),
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "filter_results",
            array(
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+"),
                f(
                    "matching_acls",
                    array(
                        f("error_code", "int16"),
                        f("error_message", "string", nullable="0+"),
                        f("resource_type", "int8"),
                        f("resource_name", "string"),
                        f("pattern_type", "int8", "1+", default=3),
                        f("principal", "string"),
                        f("host", "string"),
                        f("operation", "int8"),
                        f("permission_type", "int8"),
                    ),
                ),
            ),
        ),
    ],
)
