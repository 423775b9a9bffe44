"""GetTelemetrySubscriptions (key 71, KIP-714): which client metrics the broker wants, and how often.

Flexible from v0. The first request carries the zero ``client_instance_id``; the broker assigns
one, which every later request repeats. ``subscription_id`` names this answer's subscription: a
PushTelemetry must carry it. ``requested_metrics`` are name prefixes (one empty string: every
metric; none: no push). ``accepted_compression_types`` uses the record batch codes (empty: none).
"""

from ..schema import api, array, f

GET_TELEMETRY_SUBSCRIPTIONS = api(
    71,
    "GetTelemetrySubscriptions",
    versions="0",
    flexible="0+",
    request=[
        f("client_instance_id", "uuid"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("client_instance_id", "uuid"),
        f("subscription_id", "int32"),
        f("accepted_compression_types", array("int8")),
        f("push_interval_ms", "int32"),
        f("telemetry_max_bytes", "int32"),
        f("delta_temporality", "bool"),
        f("requested_metrics", array("string")),
    ],
)
