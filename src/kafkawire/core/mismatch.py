"""Naming a security.protocol that does not match the listener, from what the connection saw.

A client and a listener that disagree on TLS or SASL never get an error answer: one side reads the
other's bytes as garbage and hangs up. Without a diagnosis the user hears only "all brokers are
down". Each function here looks at one sign and returns the message to fail the connection with,
naming the likely fix, or None when the sign is absent. The caller reports such a failure once per
address (a reconnect cannot mend it), as it does a refused certificate or password; a close, which
a broker going down could also cause, only once the same close happened on two attempts running
(`lasting`).
"""

from __future__ import annotations

# The first bytes of a TLS record: content type (change_cipher_spec, alert, handshake,
# application_data), then the major version 3 and a minor version 0 (SSL 3) .. 4 (TLS 1.3).
_TLS_CONTENT_TYPES = frozenset({20, 21, 22, 23})

ANSWERED_IN_TLS = (
    "the broker answered in TLS: this is a TLS listener; set security.protocol=SSL (or SASL_SSL), "
    "or connect to the PLAINTEXT port"
)
CLOSED_DURING_TLS_HANDSHAKE = (
    "the broker closed the connection during the TLS handshake: connecting to a PLAINTEXT broker "
    "listener? Set security.protocol=PLAINTEXT (or SASL_PLAINTEXT), or connect to the SSL port"
)
CLOSED_AFTER_API_VERSIONS = (
    "the broker closed the connection after ApiVersions, before answering anything else: does this "
    "listener require SASL? Set security.protocol=SASL_PLAINTEXT (or SASL_SSL) with sasl.mechanism"
)
LISTENER_WITHOUT_SASL = (
    "the broker refused the SASL handshake (it offers no mechanism here): this listener does not use "
    "SASL; set security.protocol=PLAINTEXT (or SSL), or connect to the SASL port"
)


def looks_like_tls(prefix: bytes | memoryview) -> bool:
    """Whether the first bytes of an answer are a TLS record header rather than a Kafka size."""
    return len(prefix) >= 3 and prefix[0] in _TLS_CONTENT_TYPES and prefix[1] == 3 and prefix[2] <= 4


def first_answer_mismatch(prefix: bytes | memoryview, answers_before: int) -> str | None:
    """A plaintext connection's first answer that is a TLS record (the listener speaks TLS)."""
    return ANSWERED_IN_TLS if answers_before == 0 and looks_like_tls(prefix) else None


def close_mismatch(*, during_tls_handshake: bool, answered_since_ready: int | None, sasl: bool) -> str | None:
    """A close by the broker that a matching listener would not make: during our TLS handshake (a
    plaintext listener reads the ClientHello as an absurd frame size), or, on a connection without
    SASL, right after the handshake with the first request unanswered (a SASL listener accepts
    only ApiVersions and SaslHandshake before authentication). ``answered_since_ready``: answers
    since the handshake finished, None while it has not."""
    if during_tls_handshake:
        return CLOSED_DURING_TLS_HANDSHAKE
    if not sasl and answered_since_ready == 0:
        return CLOSED_AFTER_API_VERSIONS
    return None


def lasting(message: str, previous: str | None) -> bool:
    """Whether a mismatch is sure enough to report per address: an answer's bytes or a refused
    SASL handshake are; a close is when the previous attempt ended with the same close."""
    return message in (ANSWERED_IN_TLS, LISTENER_WITHOUT_SASL) or message == previous
