"""AsyncSchemaRegistryClient: SchemaRegistryClient's calls as coroutines.

A thin bridge: each call runs the synchronous client's method in a worker thread
(``asyncio.to_thread``), so caches, retries, fail-over and auth stay one implementation and the
event loop never blocks on the registry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from ..._version import version as version
from .._sync.schema_registry_client import SchemaRegistryClient, _BaseRestClient, _RestClient
from .._sync.schema_registry_client import _urlencode as _urlencode
from ..common.associations import Association as Association
from ..common.associations import AssociationCreateOrUpdateRequest as AssociationCreateOrUpdateRequest
from ..common.associations import AssociationResponse as AssociationResponse
from ..common.auth import _AsyncCustomOAuthClient as _AsyncCustomOAuthClient
from ..common.auth import _AsyncOAuthClient as _AsyncOAuthClient
from ..common.schema_registry_client import full_jitter as full_jitter
from ..common.schema_registry_client import is_retriable as is_retriable
from ..common.schema_registry_client import is_success as is_success
from ..common.schemas import RegisteredSchema as RegisteredSchema
from ..common.schemas import Schema as Schema
from ..common.schemas import SchemaVersion as SchemaVersion
from ..common.schemas import ServerConfig as ServerConfig
from ..error import OAuthTokenError as OAuthTokenError
from ..error import SchemaRegistryError as SchemaRegistryError

__all__ = ["AsyncSchemaRegistryClient"]


class _AsyncBaseRestClient(_BaseRestClient):
    """`_BaseRestClient` (the parsed configuration) with confluent-kafka's coroutine methods."""

    async def get(self, url: str, query: Any = None) -> Any:
        raise NotImplementedError()

    async def post(self, url: str, body: Any, query: Any = None) -> Any:
        raise NotImplementedError()

    async def put(self, url: str, body: Any = None, query: Any = None) -> Any:
        raise NotImplementedError()

    async def delete(self, url: str, query: Any = None) -> Any:
        raise NotImplementedError()


class _AsyncRestClient(_AsyncBaseRestClient):
    """The registry's REST calls as coroutines: each runs the synchronous `_RestClient` (same
    parsed configuration, so one bearer provider) in a worker thread, as AsyncSchemaRegistryClient
    runs its calls, so retries and fail-over stay one implementation."""

    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        self._blocking = _RestClient(conf, self.config)
        self.session = self._blocking.session

    async def handle_bearer_auth(self, headers: dict[str, str]) -> None:
        await asyncio.to_thread(self._blocking.handle_bearer_auth, headers)

    async def get(self, url: str, query: Any = None) -> Any:
        return await asyncio.to_thread(self._blocking.get, url, query)

    async def post(self, url: str, body: Any, query: Any = None) -> Any:
        return await asyncio.to_thread(self._blocking.post, url, body, query)

    async def put(self, url: str, body: Any = None, query: Any = None) -> Any:
        return await asyncio.to_thread(self._blocking.put, url, body, query)

    async def delete(self, url: str, query: Any = None) -> Any:
        return await asyncio.to_thread(self._blocking.delete, url, query)

    async def send_request(self, url: str, method: str, body: Any = None, query: Any = None) -> Any:
        return await asyncio.to_thread(self._blocking.send_request, url, method, body, query)

    async def aclose(self) -> None:
        await asyncio.to_thread(self._blocking.close)


_METHODS = (
    "register_schema", "register_schema_full_response", "get_schema", "get_schema_by_guid",
    "get_schema_types", "get_subjects_by_schema_id", "get_schema_versions", "lookup_schema",
    "get_subjects", "delete_subject", "get_latest_version", "get_latest_with_metadata", "get_version",
    "get_referenced_by", "get_versions", "delete_version", "set_compatibility", "get_compatibility",
    "test_compatibility", "test_compatibility_all_versions", "set_config", "delete_config", "get_config",
    "get_global_mode", "update_global_mode", "get_mode", "update_mode", "delete_mode", "get_contexts",
    "get_associations_by_resource_name", "create_association", "delete_associations",
)  # fmt: skip


class AsyncSchemaRegistryClient:
    """``await client.register_schema(...)`` and every other SchemaRegistryClient call; ``mock://``
    URLs give the in-process registry, shared with sync clients of the same URL."""

    def __init__(self, conf: dict[str, Any]) -> None:
        self._client = self._blocking_client(conf)

    @staticmethod
    def _blocking_client(conf: dict[str, Any]) -> SchemaRegistryClient:
        """The synchronous client every call runs on (AsyncMockSchemaRegistryClient: the mock)."""
        return SchemaRegistryClient.new_client(conf)

    def sync_client(self) -> SchemaRegistryClient:
        """The synchronous client underneath: what the asyncio serdes run their format's serde
        over (`kafkawire.schema_registry._async.serde`)."""
        return self._client

    @staticmethod
    def new_client(conf: dict[str, Any]) -> AsyncSchemaRegistryClient:
        return AsyncSchemaRegistryClient(conf)

    def config(self) -> dict[str, Any]:
        return self._client.config()

    def clear_latest_caches(self) -> None:
        self._client.clear_latest_caches()

    def clear_caches(self) -> None:
        self._client.clear_caches()

    async def close(self) -> None:
        await asyncio.to_thread(self._client.close)

    async def __aenter__(self) -> AsyncSchemaRegistryClient:
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()


def _bridge(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    async def call(self: AsyncSchemaRegistryClient, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self._client, name), *args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"SchemaRegistryClient.{name}, awaited (runs in a worker thread)."
    return call


for _name in _METHODS:
    setattr(AsyncSchemaRegistryClient, _name, _bridge(_name))
