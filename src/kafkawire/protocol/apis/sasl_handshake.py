"""SaslHandshake (key 17): pick a SASL mechanism; v1 means the SASL tokens follow as SaslAuthenticate requests."""

from ..schema import api, array, f

SASL_HANDSHAKE = api(
    17,
    "SaslHandshake",
    versions="0-1",
    flexible="none",
    request=[
        f("mechanism", "string"),
    ],
    response=[
        f("error_code", "int16"),
        f("mechanisms", array("string")),
    ],
)
