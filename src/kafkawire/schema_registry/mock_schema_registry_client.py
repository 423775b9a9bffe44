"""The in-process registry that ``url: mock://...`` gives."""

from ._sync.mock_schema_registry_client import MockSchemaRegistryClient

__all__ = ["MockSchemaRegistryClient"]
