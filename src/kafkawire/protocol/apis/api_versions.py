"""ApiVersions (key 18): which versions of which APIs a broker speaks; the first request on a connection."""

from ..schema import api, array, f

API_VERSIONS = api(
    18,
    "ApiVersions",
    versions="0-4",
    flexible="3+",
    request=[
        f("client_software_name", "string", "3+", ignorable=True),
        f("client_software_version", "string", "3+", ignorable=True),
    ],
    response=[
        f("error_code", "int16"),
        f(
            "api_keys",
            array(
                f("api_key", "int16"),
                f("min_version", "int16"),
                f("max_version", "int16"),
            ),
        ),
        f("throttle_time_ms", "int32", "1+", ignorable=True),
        f(
            "supported_features",
            array(
                f("name", "string", "3+"),
                f("min_version", "int16", "3+"),
                f("max_version", "int16", "3+"),
            ),
            "3+",
            tag=0,
            ignorable=True,
        ),
        f("finalized_features_epoch", "int64", "3+", tag=1, default=-1, ignorable=True),
        f(
            "finalized_features",
            array(
                f("name", "string", "3+"),
                f("max_version_level", "int16", "3+"),
                f("min_version_level", "int16", "3+"),
            ),
            "3+",
            tag=2,
            ignorable=True,
        ),
        f("zk_migration_ready", "bool", "3+", tag=3, ignorable=True),
    ],
)
