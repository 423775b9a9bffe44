"""When a bearer token is renewed: once REFRESH_AT of its lifetime has passed (librdkafka's choice,
and the Schema Registry clients'), early enough that a session started with the old token does not
end soon after (a broker caps a SASL session at its token's expiry, KIP-368)."""

from __future__ import annotations

REFRESH_AT = 0.8


def renewal_time(obtained: float, expires: float) -> float:
    """When a token obtained at ``obtained`` and expiring at ``expires`` (one clock) is renewed; an
    already expired one at once."""
    return obtained + max(0.0, expires - obtained) * REFRESH_AT


def renewal_due(now: float, renew_at: float, expires: float, renewed_ahead: bool) -> bool:
    """Must the caller fetch a new token before using this one? At its renewal time, unless a
    renewer works ahead of the callers: then they keep the token until it expires (the renewer
    is retrying meanwhile)."""
    return now >= (expires if renewed_ahead else renew_at)
