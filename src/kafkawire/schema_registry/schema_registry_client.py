"""confluent_kafka.schema_registry.schema_registry_client's names: the client and its values."""

from ._async.schema_registry_client import AsyncSchemaRegistryClient
from ._sync.schema_registry_client import SchemaRegistryClient
from .common.schema_registry_client import *  # noqa: F403
from .common.schema_registry_client import __all__ as _values
from .error import SchemaRegistryError

__all__ = ["AsyncSchemaRegistryClient", "SchemaRegistryClient", "SchemaRegistryError", *_values]
