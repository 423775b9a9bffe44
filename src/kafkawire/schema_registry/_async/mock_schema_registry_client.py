"""AsyncMockSchemaRegistryClient: the in-process registry behind the asyncio client's calls."""

from __future__ import annotations

from typing import Any

from .._sync.mock_schema_registry_client import MockSchemaRegistryClient
from .._sync.schema_registry_client import SchemaRegistryClient
from .schema_registry_client import AsyncSchemaRegistryClient

__all__ = ["AsyncMockSchemaRegistryClient"]


class AsyncMockSchemaRegistryClient(AsyncSchemaRegistryClient):
    """``await`` MockSchemaRegistryClient's calls; one store per ``mock://`` URL, shared with the
    synchronous mocks of that URL."""

    @staticmethod
    def _blocking_client(conf: dict[str, Any]) -> SchemaRegistryClient:
        return MockSchemaRegistryClient(conf)
