"""DeleteGroups (key 42): delete empty consumer groups (and their offsets), at each group's coordinator."""

from ..schema import api, array, f

DELETE_GROUPS = api(
    42,
    "DeleteGroups",
    versions="0-2",
    flexible="2+",
    request=[
        f("groups_names", array("string")),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "results",
            array(
                f("group_id", "string"),
                f("error_code", "int16"),
            ),
        ),
    ],
)
