"""CreatePartitions (key 37): grow existing topics to a new total partition ``count``.

``assignments`` (null = let the controller place them) lists the replicas of each new partition
only, not of the existing ones. ``validate_only`` checks without changing anything.
"""

from ..schema import api, array, f

CREATE_PARTITIONS = api(
    37,
    "CreatePartitions",
    versions="0-3",
    flexible="2+",
    request=[
        f(
            "topics",
            array(
                f("name", "string"),
                f("count", "int32"),
                f(
                    "assignments",
                    array(
                        f("broker_ids", array("int32")),
                    ),
                    nullable="0+",
                ),
            ),
        ),
        f("timeout_ms", "int32"),
        f("validate_only", "bool"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "results",
            array(
                f("name", "string"),
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+", default=None),
            ),
        ),
    ],
)
