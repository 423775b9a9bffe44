"""DescribeConfigs (key 32): read the configuration of topics, brokers, broker loggers and more.

``resource_type`` is Kafka's ConfigResource type code (2 topic, 4 broker, 8 broker logger, ...);
``configuration_keys`` null means every key. Irregular: the response's ``is_default`` exists only in
v0, which Kafka 4 removed from its specs (we start at v1 like it does); it is declared so the
field list matches Kafka's and never travels. From v1 ``config_source`` says where a value comes from.
"""

from ..schema import api, array, f

DESCRIBE_CONFIGS = api(
    32,
    "DescribeConfigs",
    versions="1-4",
    flexible="4+",
    request=[
        f(
            "resources",
            array(
                f("resource_type", "int8"),
                f("resource_name", "string"),
                f("configuration_keys", array("string"), nullable="0+"),
            ),
        ),
        f("include_synonyms", "bool", "1+", default=False),
        f("include_documentation", "bool", "3+", default=False),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f(
            "results",
            array(
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+"),
                f("resource_type", "int8"),
                f("resource_name", "string"),
                f(
                    "configs",
                    array(
                        f("name", "string"),
                        f("value", "string", nullable="0+"),
                        f("read_only", "bool"),
                        f("config_source", "int8", "1+", default=-1, ignorable=True),
                        f("is_default", "bool", "0"),
                        f("is_sensitive", "bool"),
                        f(
                            "synonyms",
                            array(
                                f("name", "string", "1+"),
                                f("value", "string", "1+", nullable="0+"),
                                f("source", "int8", "1+"),
                            ),
                            "1+",
                            ignorable=True,
                        ),
                        f("config_type", "int8", "3+", default=0, ignorable=True),
                        f("documentation", "string", "3+", nullable="0+", ignorable=True),
                    ),
                ),
            ),
        ),
    ],
)
