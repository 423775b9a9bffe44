"""AsyncMockSchemaRegistryClient: the in-process registry behind the asyncio client's calls."""

from __future__ import annotations

from typing import Any

from .._sync.mock_schema_registry_client import MockSchemaRegistryClient
from .._sync.schema_registry_client import SchemaRegistryClient
from ..common.associations import Association as Association
from ..common.associations import AssociationCreateOrUpdateRequest as AssociationCreateOrUpdateRequest
from ..common.associations import AssociationInfo as AssociationInfo
from ..common.associations import AssociationResponse as AssociationResponse
from ..common.schemas import RegisteredSchema as RegisteredSchema
from ..common.schemas import Schema as Schema
from ..common.schemas import ServerConfig as ServerConfig
from ..error import SchemaRegistryError as SchemaRegistryError
from .schema_registry_client import AsyncSchemaRegistryClient

__all__ = ["AsyncMockSchemaRegistryClient"]


class AsyncMockSchemaRegistryClient(AsyncSchemaRegistryClient):
    """``await`` MockSchemaRegistryClient's calls; one store per ``mock://`` URL, shared with the
    synchronous mocks of that URL."""

    @staticmethod
    def _blocking_client(conf: dict[str, Any]) -> SchemaRegistryClient:
        return MockSchemaRegistryClient(conf)
