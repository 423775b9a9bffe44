"""AsyncProtobufSerializer and AsyncProtobufDeserializer: the synchronous ones (`_sync/protobuf.py`), awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from ..._util.asyncinit import asyncinit as asyncinit
from ...serialization import DeserializerBuilder, SerializerBuilder
from ...serialization import MessageField as MessageField
from ...serialization import SerializationContext as SerializationContext
from ...serialization import SerializationError as SerializationError
from .._sync import protobuf as _sync_protobuf
from .._sync.protobuf import ProtobufDeserializer, ProtobufSerializer
from .._sync.protobuf import reference_subject_name_strategy as reference_subject_name_strategy
from ..common.parsed_schema_cache import ParsedSchemaCache as ParsedSchemaCache
from ..common.protobuf_fields import transform as transform
from ..common.protobuf_fields import validate_message as validate_message
from ..common.schemas import PROTOBUF_TYPE as PROTOBUF_TYPE
from ..common.schemas import RuleMode as RuleMode
from ..common.schemas import RulePhase as RulePhase
from ..common.schemas import Schema as Schema
from ..common.schemas import SchemaReference as SchemaReference
from ..common.serde import SchemaId as SchemaId
from ..common.serde import clear_original_key as clear_original_key
from ..common.serde import dual_schema_id_deserializer as dual_schema_id_deserializer
from ..common.serde import prefix_schema_id_serializer as prefix_schema_id_serializer
from ..common.serde import set_original_key as set_original_key
from ..common.validation_rules import ValidationRulesExecution as ValidationRulesExecution
from ..rule_registry import RuleRegistry
from .schema_registry_client import AsyncSchemaRegistryClient
from .serde import AsyncBaseDeserializer, AsyncBaseSerializer
from .serde_builder import AsyncRegistrySerdeBuilder
from .serde_builder import async_build_serde as async_build_serde

__all__ = [
    "AsyncProtobufDeserializer",
    "AsyncProtobufDeserializerBuilder",
    "AsyncProtobufSerializer",
    "AsyncProtobufSerializerBuilder",
]


async def _resolve_named_schema(
    schema: Schema, schema_registry_client: AsyncSchemaRegistryClient, pool: Any, visited: set[str] | None = None
) -> None:
    """The synchronous ``_resolve_named_schema`` on the client's synchronous client, awaited
    (in a worker thread, as every call of the asyncio client)."""
    sync_client = schema_registry_client.sync_client()
    await asyncio.to_thread(_sync_protobuf._resolve_named_schema, schema, sync_client, pool, visited)


class AsyncProtobufSerializer(AsyncBaseSerializer):
    """``await AsyncProtobufSerializer(client, ...)``: ProtobufSerializer's arguments."""

    _sync_type = ProtobufSerializer


class AsyncProtobufDeserializer(AsyncBaseDeserializer):
    """``await AsyncProtobufDeserializer(client, ...)``: ProtobufDeserializer's arguments."""

    _sync_type = ProtobufDeserializer


@dataclass(eq=False, repr=False)
class AsyncProtobufSerializerBuilder(AsyncRegistrySerdeBuilder, SerializerBuilder):  # type: ignore[misc]  # build returns a coroutine
    """AsyncProtobufSerializer's arguments, the serde made when an asyncio client is (``key.serializer.builder`` or
    ``value.serializer.builder``); see the module `serde_builder`."""

    _init_field = "serializer_init"
    _serde_type = AsyncProtobufSerializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: AsyncSchemaRegistryClient | None = None
    message_type: type[Message] | None = None
    serializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    serializer_init: Callable[[AsyncProtobufSerializer], Awaitable[None]] | None = None

    def _check(self) -> None:
        if self.message_type is None:
            # same text as confluent-kafka
            raise ValueError("Protobuf serializer requires a message type; call set_message_type()")


@dataclass(eq=False, repr=False)
class AsyncProtobufDeserializerBuilder(AsyncRegistrySerdeBuilder, DeserializerBuilder):  # type: ignore[misc]  # build returns a coroutine
    """AsyncProtobufDeserializer's arguments, the serde made when an asyncio client is (``key.deserializer.builder`` or
    ``value.deserializer.builder``); see the module `serde_builder`."""

    _init_field = "deserializer_init"
    _serde_type = AsyncProtobufDeserializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: AsyncSchemaRegistryClient | None = None
    message_type: type[Message] | None = None
    deserializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    deserializer_init: Callable[[AsyncProtobufDeserializer], Awaitable[None]] | None = None

    def _check(self) -> None:
        if self.message_type is None:
            # same text as confluent-kafka
            raise ValueError("Protobuf deserializer requires a message type; call set_message_type()")
