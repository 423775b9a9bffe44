"""Confluent Schema Registry support (confluent_kafka.schema_registry's API; optional extra).

Install with ``pip install kafkawire[schemaregistry]`` (the client) plus ``[avro]``, ``[json]``,
``[protobuf]`` for the formats, or ``[serdes]`` for all. The core client never imports this package.
"""

from ..serialization import MessageField, SerializationContext, SerializationError
from ._async.schema_registry_client import AsyncSchemaRegistryClient
from ._sync import mock_schema_registry_client  # noqa: F401  (serves mock:// URLs)
from ._sync.schema_registry_client import SchemaRegistryClient
from .common.schema_registry_client import (
    Association,
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    AssociationInfo,
    AssociationResponse,
    ConfigCompatibilityLevel,
    Metadata,
    MetadataProperties,
    MetadataTags,
    RegisteredSchema,
    Rule,
    RuleKind,
    RuleMode,
    RuleParams,
    RuleSet,
    Schema,
    SchemaReference,
    ServerConfig,
)
from .common.serde import (
    dual_schema_id_deserializer,
    header_schema_id_serializer,
    prefix_schema_id_deserializer,
    prefix_schema_id_serializer,
    record_subject_name_strategy,
    reference_subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)
from .error import SchemaRegistryError

__all__ = [
    "Association",
    "AssociationCreateOrUpdateInfo",
    "AssociationCreateOrUpdateRequest",
    "AssociationInfo",
    "AssociationResponse",
    "AsyncSchemaRegistryClient",
    "ConfigCompatibilityLevel",
    "MessageField",
    "Metadata",
    "MetadataProperties",
    "MetadataTags",
    "RegisteredSchema",
    "Rule",
    "RuleKind",
    "RuleMode",
    "RuleParams",
    "RuleSet",
    "Schema",
    "SchemaReference",
    "SchemaRegistryClient",
    "SchemaRegistryError",
    "SerializationContext",
    "SerializationError",
    "ServerConfig",
    "dual_schema_id_deserializer",
    "header_schema_id_serializer",
    "prefix_schema_id_deserializer",
    "prefix_schema_id_serializer",
    "record_subject_name_strategy",
    "reference_subject_name_strategy",
    "topic_record_subject_name_strategy",
    "topic_subject_name_strategy",
]
