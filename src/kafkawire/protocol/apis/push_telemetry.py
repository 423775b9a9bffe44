"""PushTelemetry (key 72, KIP-714): one push of client metrics, an OTLP ``MetricsData`` message.

Flexible from v0. ``metrics`` is the protobuf (core/otlp.py), compressed with ``compression_type``
(a record batch code the subscription accepted; 0: none). ``terminating`` marks the last push of
a client that is closing.
"""

from ..schema import api, f

PUSH_TELEMETRY = api(
    72,
    "PushTelemetry",
    versions="0",
    flexible="0+",
    request=[
        f("client_instance_id", "uuid"),
        f("subscription_id", "int32"),
        f("terminating", "bool"),
        f("compression_type", "int8"),
        f("metrics", "bytes"),
    ],
    response=[
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
    ],
)
