"""Bearer authentication for the Schema Registry: where the token and the Confluent Cloud
``target-sr-cluster``/``Confluent-Identity-Pool-Id`` headers come from.

Sources (``bearer.auth.credentials.source``): STATIC_TOKEN (``bearer.auth.token``), OAUTHBEARER
(OAuth 2 client credentials at ``bearer.auth.issuer.endpoint.url``), OAUTHBEARER_AZURE_IMDS (Azure's
instance metadata endpoint) and CUSTOM (a user function returning the fields). The two fetched
tokens come through the package's token client (`kafkawire.security.oauth`, urllib, trusting the CAs httpx
would), fetched again once 80% of their life has passed (`_AbstractOAuthClient`); the registry's own
requests stay on httpx. Providers and their builders carry confluent-kafka's names and arguments.
Secrets never appear in errors or reprs.
"""

from __future__ import annotations

import abc
import asyncio
import functools
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, ClassVar

import httpx

from ...security.oauth import ClientCredentials, request_token
from ..error import OAuthTokenError
from .bearer_fields import _AsyncBearerFieldProvider as _AsyncBearerFieldProvider
from .bearer_fields import _BearerFieldProvider as _BearerFieldProvider
from .bearer_fields import _static_fields, _StaticFieldProvider
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
# The lifetime of a token whose answer says none (no expires_in, not a JWT with an exp claim).
DEFAULT_LIFETIME = 3600.0
# Each token request's bound, in seconds, when the registry's ``timeout`` is not set.
DEFAULT_TIMEOUT = 30.0


class _AbstractOAuthClient(_BearerFieldProvider):
    """A provider whose token is fetched on first use and again once ``token_expired()`` (80% of
    its lifetime passed); each fetch is tried ``max_retries`` more times, full-jitter waits between,
    then `OAuthTokenError` (confluent-kafka's names and arguments). One thread fetches at a time."""

    # the field of ``token_object`` holding the token's end (epoch seconds)
    expires_field = "expires_at"

    def __init__(
        self,
        logical_cluster: str,
        identity_pool: str | None,
        max_retries: int,
        retries_wait_ms: int,
        retries_max_wait_ms: int,
    ) -> None:
        self.logical_cluster = logical_cluster
        self.identity_pool = identity_pool
        self.max_retries = max_retries
        self.retries_wait_ms = retries_wait_ms
        self.retries_max_wait_ms = retries_max_wait_ms
        self.token = ""
        self.token_object: dict[str, Any] = {}
        self.token_expiry_threshold = 0.8
        self.token_endpoint = ""
        self._lock = threading.Lock()

    def get_bearer_fields(self) -> dict[str, Any]:
        return _static_fields(self.get_access_token(), self.logical_cluster, self.identity_pool)

    def get_access_token(self) -> str:
        with self._lock:
            if not self.token or self.token_expired():
                self.generate_access_token()
            return self.token

    def token_expired(self) -> bool:
        """Whether the token is in the last 20% of its life (KeyError before the first fetch)."""
        window = float(self.token_object["expires_in"]) * (1 - self.token_expiry_threshold)
        return float(self.token_object[self.expires_field]) < time.time() + window

    def _fetched(self, token: str, lifetime: float) -> str:
        self.token_object = {"access_token": token, "expires_in": lifetime, self.expires_field: time.time() + lifetime}
        return token

    @abc.abstractmethod
    def fetch_token(self) -> str:
        """One request for a token: its value, ``token_object`` filled in."""
        raise NotImplementedError

    def generate_access_token(self) -> None:
        attempt = 0
        while True:
            try:
                self.token = self.fetch_token()
                return
            except Exception as e:
                if attempt >= self.max_retries:
                    # same text as confluent-kafka
                    raise OAuthTokenError(
                        f"Failed to retrieve token after {self.max_retries} attempts due to error: {e}"
                    ) from e
                time.sleep(full_jitter(self.retries_wait_ms, self.retries_max_wait_ms, attempt) / 1000)
                attempt += 1

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(token_endpoint={self.token_endpoint!r}, logical_cluster={self.logical_cluster!r})"
        )


class _OAuthClient(_AbstractOAuthClient):
    """OAUTHBEARER: the client credentials grant at ``token_endpoint`` (``client`` makes it);
    ``timeout`` (kafkawire's) bounds each request, as the registry's own ``timeout`` does."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scope: str,
        token_endpoint: str,
        logical_cluster: str,
        max_retries: int,
        retries_wait_ms: int,
        retries_max_wait_ms: int,
        identity_pool: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(logical_cluster, identity_pool, max_retries, retries_wait_ms, retries_max_wait_ms)
        tls = httpx.create_ssl_context()
        self.client = ClientCredentials(token_endpoint, client_id, client_secret, scope, tls, timeout, DEFAULT_LIFETIME)
        self.token_endpoint = token_endpoint

    def fetch_token(self) -> str:
        return self._fetched(*self.client.fetch())


class _OAuthAzureIMDSClient(_AbstractOAuthClient):
    """OAUTHBEARER_AZURE_IMDS: a GET of ``token_endpoint`` with the ``Metadata: true`` header."""

    expires_field = "expires_on"  # Azure's name for it

    def __init__(
        self,
        token_endpoint: str,
        logical_cluster: str,
        identity_pool: str | None,
        max_retries: int,
        retries_wait_ms: int,
        retries_max_wait_ms: int,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(logical_cluster, identity_pool, max_retries, retries_wait_ms, retries_max_wait_ms)
        self.token_endpoint = token_endpoint
        self._timeout = timeout

    def fetch_token(self) -> str:
        headers = {"Metadata": "true"}
        return self._fetched(*request_token(self.token_endpoint, headers, None, None, self._timeout, DEFAULT_LIFETIME))


class _CustomOAuthClient(_BearerFieldProvider):
    """CUSTOM: ``bearer.auth.custom.provider.function(config)`` returns the fields each request."""

    def __init__(self, custom_function: Callable[[dict[str, Any]], dict[str, Any]], custom_config: Any) -> None:
        self.custom_function = custom_function
        self.custom_config = custom_config

    def get_bearer_fields(self) -> dict[str, Any]:
        return self.custom_function(self.custom_config)


class _AsyncCustomOAuthClient(_AsyncBearerFieldProvider):
    """`_CustomOAuthClient` for the asyncio client: ``custom_function(config)`` is awaited."""

    def __init__(self, custom_function: Callable[[dict[str, Any]], Any], custom_config: Any) -> None:
        self.custom_function = custom_function
        self.custom_config = custom_config

    async def get_bearer_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = await self.custom_function(self.custom_config)
        return fields


class _AsyncOAuthClient(_AsyncBearerFieldProvider):
    """`_OAuthClient` for the asyncio client (the same arguments): its token requests run in a
    worker thread, awaited; what it holds (``token``, ``token_object``, ...) is the sync one's."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scope: str,
        token_endpoint: str,
        logical_cluster: str,
        max_retries: int,
        retries_wait_ms: int,
        retries_max_wait_ms: int,
        identity_pool: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._sync = _OAuthClient(
            client_id,
            client_secret,
            scope,
            token_endpoint,
            logical_cluster,
            max_retries,
            retries_wait_ms,
            retries_max_wait_ms,
            identity_pool,
            timeout,
        )

    def __getattr__(self, name: str) -> Any:
        if name == "_sync":  # not set yet (a copy being made): no attribute to delegate to
            raise AttributeError(name)
        return getattr(self._sync, name)

    def token_expired(self) -> bool:
        return self._sync.token_expired()

    async def get_bearer_fields(self) -> dict[str, Any]:
        return await asyncio.to_thread(self._sync.get_bearer_fields)

    async def get_access_token(self) -> str:
        return await asyncio.to_thread(self._sync.get_access_token)

    async def fetch_token(self) -> str:
        return await asyncio.to_thread(self._sync.fetch_token)

    async def generate_access_token(self) -> None:
        await asyncio.to_thread(self._sync.generate_access_token)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._sync!r})"


def _require_str(value: Any, key: str) -> None:
    if not isinstance(value, str):
        # same text as confluent-kafka: its tests match on it
        raise TypeError(f"{key} must be a str, not {type(value)}")


def _missing(conf: dict[str, Any], required: list[str], what: str) -> None:
    missing = [key for key in required if key not in conf]
    if missing:
        # same text as confluent-kafka: its tests match on it
        raise ValueError(f"Missing required {what} properties: {', '.join(missing)}")


class _AbstractOAuthBearerFieldProviderBuilder(abc.ABC):
    """Builds a bearer field provider from ``conf``'s ``bearer.auth.*`` keys, taking each out of
    ``conf`` as `_validate` checks it (confluent-kafka's builders: a key left over is one nobody
    read). The logical cluster is required, the identity pool (a str or a list of them) not."""

    required_properties: ClassVar[list[str]] = ["bearer.auth.logical.cluster"]

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.logical_cluster = ""
        self.identity_pool: str | None = None

    def _validate(self) -> None:
        _missing(self.conf, _AbstractOAuthBearerFieldProviderBuilder.required_properties, "bearer configuration")
        self.logical_cluster = self.conf.pop("bearer.auth.logical.cluster")
        if not isinstance(self.logical_cluster, str):
            # same text as confluent-kafka: its tests match on it
            raise TypeError(f"logical cluster must be a str, not {type(self.logical_cluster)}")
        self.identity_pool = normalize_identity_pool(self.conf.pop("bearer.auth.identity.pool.id", None))

    @abc.abstractmethod
    def build(self, max_retries: int, retries_wait_ms: int, retries_max_wait_ms: int) -> Any:
        raise NotImplementedError


class _AbstractOAuthBearerOIDCFieldProviderBuilder(_AbstractOAuthBearerFieldProviderBuilder):
    """OAUTHBEARER: the client credentials grant's client id, secret, scope and token endpoint."""

    required_properties: ClassVar[list[str]] = [
        "bearer.auth.client.id",
        "bearer.auth.client.secret",
        "bearer.auth.scope",
        "bearer.auth.issuer.endpoint.url",
    ]

    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        self.client_id = ""
        self.client_secret = ""
        self.scope = ""
        self.token_endpoint = ""

    def _validate(self) -> None:
        super()._validate()
        _missing(self.conf, _AbstractOAuthBearerOIDCFieldProviderBuilder.required_properties, "OAuth configuration")
        self.client_id = self.conf.pop("bearer.auth.client.id")
        _require_str(self.client_id, "bearer.auth.client.id")
        self.client_secret = self.conf.pop("bearer.auth.client.secret")
        _require_str(self.client_secret, "bearer.auth.client.secret")
        self.scope = self.conf.pop("bearer.auth.scope")
        _require_str(self.scope, "bearer.auth.scope")
        self.token_endpoint = self.conf.pop("bearer.auth.issuer.endpoint.url")
        _require_str(self.token_endpoint, "bearer.auth.issuer.endpoint.url")


class _AbstractOAuthBearerOIDCAzureIMDSFieldProviderBuilder(_AbstractOAuthBearerFieldProviderBuilder):
    """OAUTHBEARER_AZURE_IMDS: the instance metadata endpoint (or the one configured), its query
    replaced by ``bearer.auth.issuer.endpoint.query``, which only an endpoint of one's own may
    leave out."""

    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        self.token_endpoint = AZURE_IMDS_ENDPOINT

    def _validate(self) -> None:
        super()._validate()
        overridden = "bearer.auth.issuer.endpoint.url" in self.conf
        self.token_endpoint = self.conf.pop("bearer.auth.issuer.endpoint.url", self.token_endpoint)
        _require_str(self.token_endpoint, "bearer.auth.issuer.endpoint.url")
        try:
            parts = urllib.parse.urlparse(self.token_endpoint)
        except Exception as e:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(f"Failed to parse token endpoint URL: {e}") from None
        query = self.conf.pop("bearer.auth.issuer.endpoint.query", None)
        if query:
            if not isinstance(query, str):
                # same text as confluent-kafka: its tests match on it
                raise TypeError(f"bearer.auth.issuer.endpoint.query must be a str, not {type(query)}")
            self.token_endpoint = urllib.parse.urlunparse(parts._replace(query=query, fragment=""))
        elif not overridden:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(
                "bearer.auth.issuer.endpoint.query must be provided when bearer.auth.issuer.endpoint.url isn't overridden"
            )


class _StaticOAuthBearerFieldProviderBuilder(_AbstractOAuthBearerFieldProviderBuilder):
    """STATIC_TOKEN: ``bearer.auth.token``."""

    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        self.static_token = ""

    def _validate(self) -> None:
        super()._validate()
        if "bearer.auth.token" not in self.conf:
            # same text as confluent-kafka: its tests match on it
            raise ValueError("Missing bearer.auth.token")
        self.static_token = self.conf.pop("bearer.auth.token")
        _require_str(self.static_token, "bearer.auth.token")

    def build(self, max_retries: int, retries_wait_ms: int, retries_max_wait_ms: int) -> _StaticFieldProvider:
        self._validate()
        return _StaticFieldProvider(self.static_token, self.logical_cluster, self.identity_pool)


class _AbstractCustomOAuthBearerFieldProviderBuilder:
    """CUSTOM: a function and the dict it is called with for each request's fields."""

    required_properties: ClassVar[list[str]] = [
        "bearer.auth.custom.provider.function",
        "bearer.auth.custom.provider.config",
    ]

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.custom_function: Any = None
        self.custom_config: Any = None

    def _validate(self) -> None:
        required = _AbstractCustomOAuthBearerFieldProviderBuilder.required_properties
        _missing(self.conf, required, "custom OAuth configuration")
        self.custom_function = self.conf.pop("bearer.auth.custom.provider.function")
        if not callable(self.custom_function):
            # same text as confluent-kafka: its tests match on it
            raise TypeError(
                f"bearer.auth.custom.provider.function must be a callable, not {type(self.custom_function)}"
            )
        self.custom_config = self.conf.pop("bearer.auth.custom.provider.config")
        if not isinstance(self.custom_config, dict):
            # same text as confluent-kafka: its tests match on it
            raise TypeError(f"bearer.auth.custom.provider.config must be a dict, not {type(self.custom_config)}")


class _CustomOAuthBearerFieldProviderBuilder(_AbstractCustomOAuthBearerFieldProviderBuilder):
    def build(self, max_retries: int, retries_wait_ms: int, retries_max_wait_ms: int) -> _CustomOAuthClient:
        self._validate()
        return _CustomOAuthClient(self.custom_function, self.custom_config)


class _OAuthBearerOIDCFieldProviderBuilder(_AbstractOAuthBearerOIDCFieldProviderBuilder):
    def __init__(self, conf: dict[str, Any], timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(conf)
        self.timeout = timeout

    def build(self, max_retries: int, retries_wait_ms: int, retries_max_wait_ms: int) -> _OAuthClient:
        self._validate()
        return _OAuthClient(
            self.client_id,
            self.client_secret,
            self.scope,
            self.token_endpoint,
            self.logical_cluster,
            max_retries,
            retries_wait_ms,
            retries_max_wait_ms,
            self.identity_pool,
            self.timeout,
        )


class _OAuthBearerOIDCAzureIMDSFieldProviderBuilder(_AbstractOAuthBearerOIDCAzureIMDSFieldProviderBuilder):
    def __init__(self, conf: dict[str, Any], timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(conf)
        self.timeout = timeout

    def build(self, max_retries: int, retries_wait_ms: int, retries_max_wait_ms: int) -> _OAuthAzureIMDSClient:
        self._validate()
        return _OAuthAzureIMDSClient(
            self.token_endpoint,
            self.logical_cluster,
            self.identity_pool,
            max_retries,
            retries_wait_ms,
            retries_max_wait_ms,
            self.timeout,
        )


def bearer_field_provider(
    conf: dict[str, Any], timeout: float, retries: tuple[int, int, int] = (3, 1000, 20000)
) -> Any:
    """The provider for ``bearer.auth.credentials.source``; None when bearer auth is not configured.
    ``conf`` is left as it was (its builder takes keys out of a copy)."""
    source = conf.get("bearer.auth.credentials.source")
    if source is None:
        return None
    builders: dict[str, Callable[[dict[str, Any]], Any]] = {
        "STATIC_TOKEN": _StaticOAuthBearerFieldProviderBuilder,
        "CUSTOM": _CustomOAuthBearerFieldProviderBuilder,
        "OAUTHBEARER": functools.partial(_OAuthBearerOIDCFieldProviderBuilder, timeout=timeout),
        "OAUTHBEARER_AZURE_IMDS": functools.partial(_OAuthBearerOIDCAzureIMDSFieldProviderBuilder, timeout=timeout),
    }
    if source not in builders:
        raise ValueError(f"Invalid value for bearer.auth.credentials.source: {source!r}")
    return builders[source](dict(conf)).build(*retries)


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
