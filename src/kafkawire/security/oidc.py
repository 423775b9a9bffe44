"""``sasl.oauthbearer.method=oidc``: OAUTHBEARER tokens from an identity provider's token endpoint
with the OAuth 2.0 client-credentials grant (RFC 6749 4.4), or the JWT-bearer grant (RFC 7523, a
signed assertion instead of a secret: ``sasl.oauthbearer.grant.type``), over HTTPS, as librdkafka does.

The HTTP exchange (`oauth.py`) runs on a worker thread, never on the IO thread: a connection that
needs a token asks `OidcTokenSource.token()`, which answers the token in hand, or None after starting
a fetch and noting the caller's ``on_ready`` (called from the worker thread when the fetch ends,
either way). The token is renewed once 80% of its lifetime has passed (`token_renewer.py`; the old
one used meanwhile only when the renewal fails). The client secret and the tokens never appear in
an error or a log line.
"""

from __future__ import annotations

import ssl
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from .jwt_assertion import JwtAssertion
from .oauth import JWT_BEARER, ClientCredentials, JwtBearer
from .token_renewer import TokenRenewer, from_lifetime


def parse_extensions(text: str | None) -> dict[str, str]:
    """``sasl.oauthbearer.extensions``: comma-separated ``key=value`` pairs (KIP-342)."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.strip().partition("=")
        if not sep or not key or not key.isalpha() or key == "auth":
            raise ValueError(
                f"expected comma-separated key=value pairs with alphabetic keys other than auth, not {key!r}"
            )
        out[key] = value
    return out


class OidcTokenSource:
    """Tokens for one client's connections, from ``sasl.oauthbearer.token.endpoint.url``."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        """ValueError names the option that is missing or wrong (never quoting the secret)."""
        url: str = config["sasl.oauthbearer.token.endpoint.url"] or ""
        client_id: str = config["sasl.oauthbearer.client.id"] or ""
        secret: str = config["sasl.oauthbearer.client.secret"] or ""
        if not url:
            raise ValueError('"sasl.oauthbearer.token.endpoint.url" is required')
        if urllib.parse.urlsplit(url).scheme != "https" or not urllib.parse.urlsplit(url).hostname:
            raise ValueError('"sasl.oauthbearer.token.endpoint.url" must be an https:// URL')
        jwt_bearer = config["sasl.oauthbearer.grant.type"] == JWT_BEARER
        if not jwt_bearer and (not client_id or not secret):
            raise ValueError('"sasl.oauthbearer.client.id" and "sasl.oauthbearer.client.secret" are required')
        self.extensions = parse_extensions(config["sasl.oauthbearer.extensions"])
        try:
            tls = ssl.create_default_context(cafile=config["https.ca.location"], cadata=config["https.ca.pem"])
        except (OSError, ssl.SSLError, ValueError):
            raise ValueError('"https.ca.location"/"https.ca.pem": no CA certificate could be read') from None
        scope = config["sasl.oauthbearer.scope"]
        grant: ClientCredentials | JwtBearer
        if jwt_bearer:
            grant = JwtBearer(url, JwtAssertion(config).make, scope, tls)
        else:
            grant = ClientCredentials(url, client_id, secret, scope, tls)
        self._tokens = TokenRenewer(from_lifetime(grant.fetch), "kafkawire-oidc")

    def token(self, now: float, on_ready: Callable[[], None]) -> str | None:
        """A valid token, or None: a fetch is under way and ``on_ready()`` follows its end.

        Raises TokenEndpointError once for a fetch that failed (the next call fetches again).
        ``now``: wall-clock seconds. Past 80% of its life a token is renewed before use: a session
        started with it would end too soon after (the broker caps a session at the token's expiry)."""
        return self._tokens.current_or_fetch_aside(now, on_ready)
