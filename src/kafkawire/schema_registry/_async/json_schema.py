"""AsyncJSONSerializer and AsyncJSONDeserializer: the synchronous ones (`_sync/json_schema.py`), awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from referencing import Registry

from ..._util.asyncinit import asyncinit as asyncinit
from ...serialization import DeserializerBuilder, SerializationContext, SerializerBuilder
from ...serialization import MessageField as MessageField
from ...serialization import SerializationError as SerializationError
from .._sync import json_schema as _sync_json_schema
from .._sync.json_schema import JSONDeserializer, JSONSerializer
from ..common.json_fields import transform as transform
from ..common.json_fields import validate_message as validate_message
from ..common.parsed_schema_cache import ParsedSchemaCache as ParsedSchemaCache
from ..common.schema_registry_client import Schema
from ..common.schemas import JSON_TYPE as JSON_TYPE
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

__all__ = ["AsyncJSONDeserializer", "AsyncJSONDeserializerBuilder", "AsyncJSONSerializer", "AsyncJSONSerializerBuilder"]


async def _resolve_named_schema(
    schema: Schema, schema_registry_client: AsyncSchemaRegistryClient, ref_registry: Registry[Any] | None = None
) -> Registry[Any]:
    """The synchronous ``_resolve_named_schema`` on the client's synchronous client, awaited
    (in a worker thread, as every call of the asyncio client)."""
    sync_client = schema_registry_client.sync_client()
    return await asyncio.to_thread(_sync_json_schema._resolve_named_schema, schema, sync_client, ref_registry)


class AsyncJSONSerializer(AsyncBaseSerializer):
    """``await AsyncJSONSerializer(client, ...)``: JSONSerializer's arguments."""

    _sync_type = JSONSerializer


class AsyncJSONDeserializer(AsyncBaseDeserializer):
    """``await AsyncJSONDeserializer(client, ...)``: JSONDeserializer's arguments."""

    _sync_type = JSONDeserializer


@dataclass(eq=False, repr=False)
class AsyncJSONSerializerBuilder(AsyncRegistrySerdeBuilder, SerializerBuilder):  # type: ignore[misc]  # build returns a coroutine
    """AsyncJSONSerializer's arguments, the serde made when an asyncio client is (``key.serializer.builder`` or
    ``value.serializer.builder``); see the module `serde_builder`."""

    _init_field = "serializer_init"
    _serde_type = AsyncJSONSerializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: AsyncSchemaRegistryClient | None = None
    schema: str | Schema | None = None
    to_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    serializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    json_encode: Callable[[Any], str | bytes] | None = None
    serializer_init: Callable[[AsyncJSONSerializer], Awaitable[None]] | None = None


@dataclass(eq=False, repr=False)
class AsyncJSONDeserializerBuilder(AsyncRegistrySerdeBuilder, DeserializerBuilder):  # type: ignore[misc]  # build returns a coroutine
    """AsyncJSONDeserializer's arguments, the serde made when an asyncio client is (``key.deserializer.builder`` or
    ``value.deserializer.builder``); see the module `serde_builder`."""

    _init_field = "deserializer_init"
    _serde_type = AsyncJSONDeserializer
    schema_registry_config: dict[str, Any] | None = None
    schema_registry_client: AsyncSchemaRegistryClient | None = None
    schema: str | Schema | None = None
    from_dict: Callable[[Any, SerializationContext | None], Any] | None = None
    deserializer_config: dict[str, Any] | None = None
    rule_config: dict[str, Any] | None = None
    rule_registry: RuleRegistry | None = None
    json_decode: Callable[[bytes], Any] | None = None
    deserializer_init: Callable[[AsyncJSONDeserializer], Awaitable[None]] | None = None
