"""Bearer authentication for the Schema Registry: where the token and the Confluent Cloud
``target-sr-cluster``/``Confluent-Identity-Pool-Id`` headers come from.

Sources (``bearer.auth.credentials.source``): STATIC_TOKEN (``bearer.auth.token``), OAUTHBEARER
(OAuth 2 client credentials at ``bearer.auth.issuer.endpoint.url``), OAUTHBEARER_AZURE_IMDS (Azure's
instance metadata endpoint) and CUSTOM (a user function returning the fields). The two fetched
tokens come through the package's token client (`kafkawire.security.oauth`, urllib, trusting the CAs httpx
would) and its renewer (`kafkawire.security.token_renewer`, renewed once 80% of their life has passed); the
registry's own requests stay on httpx. Secrets never appear in errors or reprs.
"""

from __future__ import annotations

import abc
import functools
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import httpx

from ...security.oauth import ClientCredentials, request_token
from ...security.token_renewer import TokenRenewer, from_lifetime
from ..error import OAuthTokenError
from .schema_registry_client import full_jitter, normalize_identity_pool

__all__ = ["bearer_field_provider"]

BEARER_KEYS = (
    "bearer.auth.credentials.source",
    "bearer.auth.token",
    "bearer.auth.logical.cluster",
    "bearer.auth.identity.pool.id",
    "bearer.auth.client.id",
    "bearer.auth.client.secret",
    "bearer.auth.scope",
    "bearer.auth.issuer.endpoint.url",
    "bearer.auth.issuer.endpoint.query",
    "bearer.auth.custom.provider.function",
    "bearer.auth.custom.provider.config",
)
AZURE_IMDS_ENDPOINT = "http://169.254.169.254/metadata/identity/oauth2/token"
Fetch = Callable[[], tuple[str, float]]  # a token and its lifetime in seconds
# The lifetime of a token whose answer says none (no expires_in, not a JWT with an exp claim).
DEFAULT_LIFETIME = 3600.0


def _str(conf: dict[str, Any], key: str) -> str:
    value = conf.get(key)
    if not isinstance(value, str):
        # same text as confluent-kafka: its tests match on it
        raise TypeError(f"{key} must be a str, not {type(value)}")
    return value


class _BearerFieldProvider(abc.ABC):
    """What the registry client asks for each request's bearer fields (confluent-kafka's base of
    its providers, which a program's own provider may derive from)."""

    @abc.abstractmethod
    def get_bearer_fields(self) -> dict[str, Any]:
        raise NotImplementedError


class _StaticFieldProvider(_BearerFieldProvider):
    """STATIC_TOKEN: a fixed token plus the cluster and identity pool headers (confluent-kafka's
    name and arguments)."""

    def __init__(self, token: str, logical_cluster: str, identity_pool: str | None = None) -> None:
        self.token = token
        self.logical_cluster = logical_cluster
        self.identity_pool = identity_pool

    def get_bearer_fields(self) -> dict[str, Any]:
        fields = {"bearer.auth.token": self.token, "bearer.auth.logical.cluster": self.logical_cluster}
        if self.identity_pool is not None:
            fields["bearer.auth.identity.pool.id"] = self.identity_pool
        return fields

    def __repr__(self) -> str:
        return f"{type(self).__name__}(logical_cluster={self.logical_cluster!r})"


class _Refreshing(_StaticFieldProvider):
    """A token fetched on first use, and again once 80% of its lifetime has passed."""

    def __init__(
        self, fetch: Fetch, token_endpoint: str, logical_cluster: str, identity_pool: str | None, client: Any = None
    ) -> None:
        # not the static provider's __init__: ``token`` is fetched, never set
        self.logical_cluster = logical_cluster
        self.identity_pool = identity_pool
        self.token_endpoint = token_endpoint
        self.client = client  # the grant (client_id, client_secret, scope), as confluent-kafka's provider has it
        self._tokens = TokenRenewer(from_lifetime(fetch))

    @property
    def token(self) -> str:  # type: ignore[override]
        return self._tokens.current(time.monotonic())


class _CustomOAuthClient(_BearerFieldProvider):
    """CUSTOM: ``bearer.auth.custom.provider.function(config)`` returns the fields each request."""

    def __init__(self, custom_function: Callable[[dict[str, Any]], dict[str, Any]], custom_config: Any) -> None:
        self.custom_function = custom_function
        self.custom_config = custom_config

    def get_bearer_fields(self) -> dict[str, Any]:
        return self.custom_function(self.custom_config)


def _cluster_and_pool(conf: dict[str, Any]) -> tuple[str, str | None]:
    """The logical cluster (required) and the identity pool (optional, as confluent-kafka's)."""
    if "bearer.auth.logical.cluster" not in conf:
        # same text as confluent-kafka: its tests match on it
        raise ValueError("Missing required bearer configuration properties: bearer.auth.logical.cluster")
    cluster = conf["bearer.auth.logical.cluster"]
    if not isinstance(cluster, str):
        # same text as confluent-kafka: its tests match on it
        raise TypeError(f"logical cluster must be a str, not {type(cluster)}")
    return cluster, normalize_identity_pool(conf.get("bearer.auth.identity.pool.id"))


def _retrying(fetch: Fetch, retries: tuple[int, int, int]) -> Fetch:
    """``fetch`` tried ``max_retries`` more times after a failure (full-jitter waits, as the
    registry's requests), then `OAuthTokenError` naming the last failure."""
    max_retries, wait_ms, max_wait_ms = retries

    def fetch_with_retries() -> tuple[str, float]:
        attempt = 0
        while True:
            try:
                return fetch()
            except Exception as e:
                if attempt >= max_retries:
                    # same text as confluent-kafka
                    raise OAuthTokenError(
                        f"Failed to retrieve token after {max_retries} attempts due to error: {e}"
                    ) from e
                time.sleep(full_jitter(wait_ms, max_wait_ms, attempt) / 1000)
                attempt += 1

    return fetch_with_retries


def bearer_field_provider(
    conf: dict[str, Any], timeout: float, retries: tuple[int, int, int] = (3, 1000, 20000)
) -> Any:
    """The provider for ``bearer.auth.credentials.source``; None when bearer auth is not configured."""
    source = conf.get("bearer.auth.credentials.source")
    if source is None:
        return None
    if source == "CUSTOM":
        missing = [
            k for k in ("bearer.auth.custom.provider.function", "bearer.auth.custom.provider.config") if k not in conf
        ]
        if missing:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(f"Missing required custom OAuth configuration properties: {', '.join(missing)}")
        function = conf["bearer.auth.custom.provider.function"]
        if not callable(function):
            raise TypeError("bearer.auth.custom.provider.function must be callable")
        return _CustomOAuthClient(function, conf["bearer.auth.custom.provider.config"])
    if source not in ("STATIC_TOKEN", "OAUTHBEARER", "OAUTHBEARER_AZURE_IMDS"):
        raise ValueError(f"Invalid value for bearer.auth.credentials.source: {source!r}")
    cluster, pool = _cluster_and_pool(conf)
    if source == "STATIC_TOKEN":
        if "bearer.auth.token" not in conf:
            # same text as confluent-kafka: its tests match on it
            raise ValueError("Missing bearer.auth.token")
        return _StaticFieldProvider(_str(conf, "bearer.auth.token"), cluster, pool)
    if source == "OAUTHBEARER":
        keys = (
            "bearer.auth.client.id",
            "bearer.auth.client.secret",
            "bearer.auth.scope",
            "bearer.auth.issuer.endpoint.url",
        )
        missing = [k for k in keys if k not in conf]
        if missing:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(f"Missing required OAuth configuration properties: {', '.join(missing)}")
        cid, secret, scope, endpoint = (_str(conf, k) for k in keys)
        grant = ClientCredentials(endpoint, cid, secret, scope, httpx.create_ssl_context(), timeout, DEFAULT_LIFETIME)
        return _Refreshing(_retrying(grant.fetch, retries), endpoint, cluster, pool, grant)
    endpoint = conf.get("bearer.auth.issuer.endpoint.url", AZURE_IMDS_ENDPOINT)
    if not isinstance(endpoint, str):
        # same text as confluent-kafka: its tests match on it
        raise TypeError(f"bearer.auth.issuer.endpoint.url must be a str, not {type(endpoint)}")
    try:
        urllib.parse.urlsplit(endpoint)
    except ValueError as e:
        # same text as confluent-kafka: its tests match on it
        raise ValueError(f"Failed to parse token endpoint URL: {e}") from None
    if "bearer.auth.issuer.endpoint.query" not in conf:
        # same text as confluent-kafka: its tests match on it
        raise ValueError("bearer.auth.issuer.endpoint.query must be provided for OAUTHBEARER_AZURE_IMDS")
    query = _str(conf, "bearer.auth.issuer.endpoint.query")
    endpoint = f"{endpoint}?{query}"
    imds = functools.partial(request_token, endpoint, {"Metadata": "true"}, None, None, timeout, DEFAULT_LIFETIME)
    return _Refreshing(_retrying(imds, retries), endpoint, cluster, pool)


def bearer_headers(provider: Any) -> dict[str, str]:
    """The HTTP headers for one request from the provider's fields."""
    fields = provider.get_bearer_fields()
    missing = [k for k in ("bearer.auth.token", "bearer.auth.logical.cluster") if k not in fields]
    if missing:
        # same text as confluent-kafka
        raise ValueError(
            f"Missing required bearer auth fields, needs to be set in config or custom function: {', '.join(missing)}"
        )
    headers = {"Authorization": f"Bearer {fields['bearer.auth.token']}"}
    if fields.get("bearer.auth.logical.cluster") is not None:
        headers["target-sr-cluster"] = fields["bearer.auth.logical.cluster"]
    if fields.get("bearer.auth.identity.pool.id") is not None:
        headers["Confluent-Identity-Pool-Id"] = fields["bearer.auth.identity.pool.id"]
    return headers
