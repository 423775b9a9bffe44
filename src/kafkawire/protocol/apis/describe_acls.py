"""DescribeAcls (key 29): the access-control entries matching one filter, from any broker.

A null name, principal or host matches any; the answer groups entries by resource.
"""

from ..schema import api, array, f

DESCRIBE_ACLS = api(
    29,
    "DescribeAcls",
    versions="1-3",
    flexible="2+",
    request=[
        f("resource_type_filter", "int8"),
        f("resource_name_filter", "string", nullable="0+"),
        f("pattern_type_filter", "int8", "1+", default=3),
        f("principal_filter", "string", nullable="0+"),
        f("host_filter", "string", nullable="0+"),
        f("operation", "int8"),
        f("permission_type", "int8"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+"),
        f(
            "resources",
            array(
                f("resource_type", "int8"),
                f("resource_name", "string"),
                f("pattern_type", "int8", "1+", default=3),
                f(
                    "acls",
                    array(
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
