"""OAuth 2.0 access tokens over HTTP(S), the package's one token client: the client-credentials grant
(RFC 6749 4.4) of ``sasl.oauthbearer.method=oidc`` and of the Schema Registry's OAUTHBEARER source,
the JWT-bearer grant (RFC 7523 2.1) of ``sasl.oauthbearer.grant.type``, and the plain GET of Azure's
instance metadata endpoint.

It is urllib (the standard library), so that the client needs no HTTP package: httpx is the Schema
Registry's optional extra. A client secret never appears in an error, nor does a token.
"""

from __future__ import annotations

import base64
import binascii
import json
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import urllib.error

# How long one token request may take (connect + answer), in seconds, unless the caller says.
REQUEST_TIMEOUT = 30.0
MAX_ANSWER_BYTES = 1 << 20


class TokenEndpointError(OSError):
    """The endpoint gave no token; the message says why (never the secret)."""


class ClientCredentials:
    """The client-credentials grant at one token endpoint; `fetch()` asks for a token."""

    def __init__(
        self,
        url: str,
        client_id: str,
        secret: str,
        scope: str | None = None,
        tls: ssl.SSLContext | None = None,
        timeout: float = REQUEST_TIMEOUT,
        default_lifetime: float | None = None,
    ) -> None:
        """``tls``: how an https:// endpoint is verified (None: the system's CAs); ``default_lifetime``:
        the lifetime of a token whose answer says none (None: such an answer is an error)."""
        self.url = url
        self.client_id = client_id
        self._secret = secret
        self._scope = scope
        self._tls = tls
        self._timeout = timeout
        self._default_lifetime = default_lifetime

    @property
    def client_secret(self) -> str:
        """(confluent-kafka's registry client exposes its grant's fields; programs and tests read them)"""
        return self._secret

    @property
    def scope(self) -> str | None:
        return self._scope

    def fetch(self) -> tuple[str, float]:
        """(access token, lifetime in seconds); TokenEndpointError says why there is none."""
        form = {"grant_type": "client_credentials", **({"scope": self._scope} if self._scope else {})}
        # RFC 6749 2.3.1: the id and the secret are form-encoded before going into Basic auth.
        basic = f"{urllib.parse.quote_plus(self.client_id)}:{urllib.parse.quote_plus(self._secret)}"
        headers = {
            "Authorization": "Basic " + base64.b64encode(basic.encode()).decode(),
            "Content-Type": "application/x-www-form-urlencoded",
        }
        body = urllib.parse.urlencode(form).encode()
        try:
            return request_token(self.url, headers, body, self._tls, self._timeout, self._default_lifetime)
        except TokenEndpointError as exc:
            if not self._secret:
                raise
            raise TokenEndpointError(str(exc).replace(self._secret, "(hidden)")) from None

    def __repr__(self) -> str:
        return f"ClientCredentials(url={self.url!r}, client_id={self.client_id!r})"


JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class JwtBearer:
    """The JWT-bearer grant at one token endpoint: each request carries a fresh ``assertion(now)``
    (a signed JWT, `kafkawire.security.jwt_assertion`) instead of a client secret."""

    def __init__(
        self,
        url: str,
        assertion: Callable[[float], str],
        scope: str | None = None,
        tls: ssl.SSLContext | None = None,
        timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        self.url = url
        self._assertion = assertion
        self._scope = scope
        self._tls = tls
        self._timeout = timeout

    def fetch(self) -> tuple[str, float]:
        """(access token, lifetime in seconds); TokenEndpointError says why there is none."""
        try:
            assertion = self._assertion(time.time())
        except ValueError as exc:  # an assertion file gone or emptied since construction
            raise TokenEndpointError(str(exc)) from None
        form = {"grant_type": JWT_BEARER, "assertion": assertion, **({"scope": self._scope} if self._scope else {})}
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        body = urllib.parse.urlencode(form).encode()
        # Some providers (GCP) answer an id_token instead, as librdkafka allows for this grant.
        return request_token(self.url, headers, body, self._tls, self._timeout, fields=("access_token", "id_token"))

    def __repr__(self) -> str:
        return f"JwtBearer(url={self.url!r})"


def request_token(
    url: str,
    headers: Mapping[str, str],
    form: bytes | None,
    tls: ssl.SSLContext | None,
    timeout: float,
    default_lifetime: float | None = None,
    fields: tuple[str, ...] = ("access_token",),
) -> tuple[str, float]:
    """POST ``form`` (GET without one) to ``url``; the answer's token (the first of ``fields`` it
    has) and its lifetime in seconds: ``expires_in``, else the token's JWT ``exp`` claim, else
    ``default_lifetime``."""
    import urllib.error  # here, not at import: urllib.request brings http.client and email (13 ms)
    import urllib.request

    request = urllib.request.Request(
        url, data=form, headers={**headers, "Accept": "application/json"}, method="GET" if form is None else "POST"
    )
    where = f"token endpoint {url}"
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=tls) as answer:
            body = answer.read(MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise TokenEndpointError(f"{where}: HTTP {exc.code} {exc.reason}{_oauth_error(exc)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise TokenEndpointError(f"{where}: {reason}") from None
    if len(body) > MAX_ANSWER_BYTES:
        raise TokenEndpointError(f"{where}: the answer is larger than {MAX_ANSWER_BYTES} bytes")
    try:
        answer_json = json.loads(body)
    except ValueError:
        raise TokenEndpointError(f"{where}: the answer is not JSON") from None
    given = answer_json if isinstance(answer_json, dict) else {}
    token = next((given[f] for f in fields if isinstance(given.get(f), str) and given[f]), None)
    if token is None:
        raise TokenEndpointError(f"{where}: the answer has no {' or '.join(fields)}")
    lifetime = _seconds(answer_json.get("expires_in"))
    if lifetime is not None:
        return token, lifetime
    exp = _jwt_expiry(token)
    if exp is not None:
        return token, max(0.0, exp - time.time())
    if default_lifetime is not None:
        return token, default_lifetime
    raise TokenEndpointError(f"{where}: the answer has neither expires_in nor a JWT with an exp claim")


def _seconds(value: Any) -> float | None:
    """A positive ``expires_in``: a JSON number, or a string of one (Azure's)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


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
