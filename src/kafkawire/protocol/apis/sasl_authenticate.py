"""SaslAuthenticate (key 36): carry one SASL token each way.

From v1 the broker also says how long the session lasts, so the client knows when to re-authenticate.
"""

from ..schema import api, f

SASL_AUTHENTICATE = api(
    36,
    "SaslAuthenticate",
    versions="0-2",
    flexible="2+",
    request=[
        f("auth_bytes", "bytes"),
    ],
    response=[
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+"),
        f("auth_bytes", "bytes"),
        f("session_lifetime_ms", "int64", "1+", ignorable=True),
    ],
)
