"""``sasl.oauthbearer.method=oidc``: OAUTHBEARER tokens from an identity provider's token endpoint
with the OAuth 2.0 client-credentials grant (RFC 6749 4.4) over HTTPS, as librdkafka does.

The HTTP exchange runs on a worker thread, never on the IO thread: a connection that needs a token
asks `OidcTokenSource.token()`, which answers the cached token, or None after starting a fetch and
noting the caller's ``on_ready`` (called from the worker thread when the fetch ends, either way).
A token is refreshed once 80% of its lifetime has passed (the old one used meanwhile only when the
refresh fails). The client secret and the tokens never appear in an error or a log line.
"""

from __future__ import annotations

import base64
import binascii
import json
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import urllib.error

# A token is renewed when this share of its lifetime has passed (librdkafka's choice).
REFRESH_AT = 0.8
# How long one token request may take (connect + answer), in seconds.
REQUEST_TIMEOUT = 30.0
MAX_ANSWER_BYTES = 1 << 20


class OidcError(Exception):
    """The token endpoint could not give a token; the message says why (never the secret)."""


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


def _jwt_expiry(token: str) -> float | None:
    """The ``exp`` claim of a JWT (seconds since the epoch), when the token is one."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None


class OidcTokenSource:
    """Tokens for one client's connections, from ``sasl.oauthbearer.token.endpoint.url``."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        """ValueError names the option that is missing or wrong (never quoting the secret)."""
        self._url: str = config["sasl.oauthbearer.token.endpoint.url"] or ""
        self._client_id: str = config["sasl.oauthbearer.client.id"] or ""
        self._secret: str = config["sasl.oauthbearer.client.secret"] or ""
        if not self._url:
            raise ValueError('"sasl.oauthbearer.token.endpoint.url" is required')
        if urllib.parse.urlsplit(self._url).scheme != "https" or not urllib.parse.urlsplit(self._url).hostname:
            raise ValueError('"sasl.oauthbearer.token.endpoint.url" must be an https:// URL')
        if not self._client_id or not self._secret:
            raise ValueError('"sasl.oauthbearer.client.id" and "sasl.oauthbearer.client.secret" are required')
        self._scope: str | None = config["sasl.oauthbearer.scope"]
        self.extensions = parse_extensions(config["sasl.oauthbearer.extensions"])
        try:
            self._tls = ssl.create_default_context(cafile=config["https.ca.location"], cadata=config["https.ca.pem"])
        except (OSError, ssl.SSLError, ValueError):
            raise ValueError('"https.ca.location"/"https.ca.pem": no CA certificate could be read') from None
        self._lock = threading.Lock()
        self._token: tuple[str, float, float] | None = None  # (token, renew at, expires at)
        self._fetching = False
        self._failure: str | None = None  # why the last fetch failed, until a caller hears it
        self._waiting: list[Callable[[], None]] = []

    def token(self, now: float, on_ready: Callable[[], None]) -> str | None:
        """A valid token, or None: a fetch is under way and ``on_ready()`` follows its end.

        Raises OidcError once for a fetch that failed (the next call fetches again). ``now``:
        wall-clock seconds."""
        with self._lock:
            current = self._token
            if current is not None and now < current[1]:
                return current[0]
            if self._failure is not None and not self._fetching:
                failure, self._failure = self._failure, None
                if current is not None and now < current[2]:
                    return current[0]  # the refresh failed; the token in hand still works meanwhile
                raise OidcError(failure)
            # Past 80% of its life a token is renewed before use: a session started with it would end
            # too soon after (the broker caps a session at the token's expiry, KIP-368).
            self._waiting.append(on_ready)
            self._start_fetch()
            return None

    def _start_fetch(self) -> None:
        if not self._fetching:
            self._fetching = True
            threading.Thread(target=self._fetch, name="kafkawire-oidc", daemon=True).start()

    def _fetch(self) -> None:
        started = time.time()
        token: tuple[str, float, float] | None = None
        failure: str | None = None
        try:
            value, lifetime = self._request()
            token = (value, started + lifetime * REFRESH_AT, started + lifetime)
        except OidcError as exc:
            failure = str(exc).replace(self._secret, "(hidden)")
        with self._lock:
            self._fetching = False
            if token is not None:
                self._token, self._failure = token, None
            else:
                self._failure = failure
            waiting, self._waiting = self._waiting, []
        for on_ready in waiting:
            on_ready()

    def _request(self) -> tuple[str, float]:
        """POST the grant; return (access token, lifetime in seconds)."""
        import urllib.error  # here, not at import: urllib.request brings http.client and email (13 ms)
        import urllib.request

        form = {"grant_type": "client_credentials", **({"scope": self._scope} if self._scope else {})}
        # RFC 6749 2.3.1: the id and the secret are form-encoded before going into Basic auth.
        basic = f"{urllib.parse.quote_plus(self._client_id)}:{urllib.parse.quote_plus(self._secret)}"
        request = urllib.request.Request(
            self._url,
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Authorization": "Basic " + base64.b64encode(basic.encode()).decode(),
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            method="POST",
        )
        where = f"token endpoint {self._url}"
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT, context=self._tls) as answer:
                body = answer.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise OidcError(f"{where}: HTTP {exc.code} {exc.reason}{_oauth_error(exc)}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise OidcError(f"{where}: {reason}") from None
        if len(body) > MAX_ANSWER_BYTES:
            raise OidcError(f"{where}: the answer is larger than {MAX_ANSWER_BYTES} bytes")
        try:
            answer_json = json.loads(body)
        except ValueError:
            raise OidcError(f"{where}: the answer is not JSON") from None
        token = answer_json.get("access_token") if isinstance(answer_json, dict) else None
        if not isinstance(token, str) or not token:
            raise OidcError(f"{where}: the answer has no access_token")
        expires_in = answer_json.get("expires_in")
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
            return token, float(expires_in)
        exp = _jwt_expiry(token)
        if exp is None:
            raise OidcError(f"{where}: the answer has neither expires_in nor a JWT with an exp claim")
        return token, max(0.0, exp - time.time())


def _oauth_error(exc: urllib.error.HTTPError) -> str:
    """RFC 6749 5.2's ``error`` (and description) from an error answer, when it has them."""
    try:
        detail = json.loads(exc.read(MAX_ANSWER_BYTES))
    except (ValueError, OSError):
        return ""
    if not isinstance(detail, dict) or not isinstance(detail.get("error"), str):
        return ""
    description = detail.get("error_description")
    return f": {detail['error']}" + (f" ({description})" if isinstance(description, str) else "")
