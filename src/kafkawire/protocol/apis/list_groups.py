"""ListGroups (key 16): the groups one broker coordinates; an admin lists a cluster by asking every broker.

Filters are empty for "all": ``states_filter`` (v4+) by state, ``types_filter`` (v5+) by group type
(classic, consumer, share, ...).
"""

from ..schema import api, array, f

LIST_GROUPS = api(
    16,
    "ListGroups",
    versions="0-5",
    flexible="3+",
    request=[
        f("states_filter", array("string"), "4+"),
        f("types_filter", array("string"), "5+"),
    ],
    response=[
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f("error_code", "int16"),
        f(
            "groups",
            array(
                f("group_id", "string"),
                f("protocol_type", "string"),
                f("group_state", "string", "4+", ignorable=True),
                f("group_type", "string", "5+", ignorable=True),
            ),
        ),
    ],
)
