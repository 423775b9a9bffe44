"""AsyncAvroSerializer and AsyncAvroDeserializer: the synchronous ones (`_sync/avro.py`), awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..._util.asyncinit import asyncinit as asyncinit
from ...serialization import DeserializerBuilder, SerializationContext, SerializerBuilder
from ...serialization import MessageField as MessageField
from ...serialization import SerializationError as SerializationError
from .._sync import avro as _sync_avro
from .._sync.avro import AvroDeserializer, AvroSerializer
from ..common.avro_fields import AvroSchema
from ..common.avro_fields import get_inline_tags as get_inline_tags
from ..common.avro_fields import transform as transform
from ..common.avro_fields import validate_message as validate_message
from ..common.avro_repository import parse_schema_with_repo as parse_schema_with_repo
from ..common.parsed_schema_cache import ParsedSchemaCache as ParsedSchemaCache
from ..common.schema_registry_client import Schema
from ..common.schemas import AVRO_TYPE as AVRO_TYPE
from ..common.schemas import RuleMode as RuleMode
from ..common.schemas import RulePhase as RulePhase
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

__all__ = ["AsyncAvroDeserializer", "AsyncAvroDeserializerBuilder", "AsyncAvroSerializer", "AsyncAvroSerializerBuilder"]


async def _resolve_named_schema(
    schema: Schema, schema_registry_client: AsyncSchemaRegistryClient
) -> dict[str, AvroSchema]:
    """The synchronous ``_resolve_named_schema`` on the client's synchronous client, awaited
    (in a worker thread, as every call of the asyncio client)."""
    return await asyncio.to_thread(_sync_avro._resolve_named_schema, schema, schema_registry_client.sync_client())


class AsyncAvroSerializer(AsyncBaseSerializer):
    """``await AsyncAvroSerializer(client, ...)``: AvroSerializer's arguments."""

    _sync_type = AvroSerializer


class AsyncAvroDeserializer(AsyncBaseDeserializer):
    """``await AsyncAvroDeserializer(client, ...)``: AvroDeserializer's arguments."""

    _sync_type = AvroDeserializer


@dataclass(eq=False, repr=False)
class AsyncAvroSerializerBuilder(AsyncRegistrySerdeBuilder, SerializerBuilder):  # type: ignore[misc]  # build returns a coroutine
    """AsyncAvroSerializer's arguments, the serde made when an asyncio client is (``key.serializer.builder`` or
    ``value.serializer.builder``); see the module `serde_builder`."""

    _init_field = "serializer_init"
    _serde_type = AsyncAvroSerializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: AsyncSchemaRegistryClient | None = None
    schema: str | Schema | None = None
    to_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    serializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    serializer_init: Callable[[AsyncAvroSerializer], Awaitable[None]] | None = None


@dataclass(eq=False, repr=False)
class AsyncAvroDeserializerBuilder(AsyncRegistrySerdeBuilder, DeserializerBuilder):  # type: ignore[misc]  # build returns a coroutine
    """AsyncAvroDeserializer's arguments, the serde made when an asyncio client is (``key.deserializer.builder`` or
    ``value.deserializer.builder``); see the module `serde_builder`."""

    _init_field = "deserializer_init"
    _serde_type = AsyncAvroDeserializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: AsyncSchemaRegistryClient | None = None
    schema: str | Schema | None = None
    from_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    return_record_name: bool = False
    deserializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    deserializer_init: Callable[[AsyncAvroDeserializer], Awaitable[None]] | None = None
