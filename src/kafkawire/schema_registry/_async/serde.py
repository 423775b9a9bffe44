"""The asyncio serdes' bases: each asyncio serde is the synchronous serde of its format, run off
the event loop, so framing, schema choice and data-contract rules stay one implementation.

``await AsyncAvroSerializer(client, ...)`` (and the other formats) builds the format's synchronous
serde with the same arguments, with the synchronous client under an
`AsyncSchemaRegistryClient` (or its mock) in its place. ``await serde(data, ctx)`` runs
it in a worker thread: it may ask the registry (look-ups, registration) or a rule's key service.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, ClassVar

from ...serialization import Deserializer, SerializationContext, Serializer
from ...serialization import MessageField as MessageField
from ...serialization import SerializationError as SerializationError
from .._sync.associated_name_strategy import DEFAULT_CACHE_CAPACITY as DEFAULT_CACHE_CAPACITY
from .._sync.associated_name_strategy import FALLBACK_TYPE as FALLBACK_TYPE
from .._sync.associated_name_strategy import KAFKA_CLUSTER_ID as KAFKA_CLUSTER_ID
from .._sync.associated_name_strategy import NAMESPACE_WILDCARD as NAMESPACE_WILDCARD
from .._sync.associated_name_strategy import STRATEGY_TYPE_MAP as STRATEGY_TYPE_MAP
from .._sync.associated_name_strategy import AssociatedNameStrategy
from .._sync.rule_runner import Migration as Migration
from .._sync.schema_registry_client import SchemaRegistryClient
from ..common.rules import ErrorAction as ErrorAction
from ..common.rules import NoneAction as NoneAction
from ..common.rules import RuleAction as RuleAction
from ..common.rules import RuleContext as RuleContext
from ..common.schemas import RegisteredSchema as RegisteredSchema
from ..common.schemas import Rule as Rule
from ..common.schemas import RuleKind as RuleKind
from ..common.schemas import RuleMode as RuleMode
from ..common.schemas import RulePhase as RulePhase
from ..common.schemas import RuleSet as RuleSet
from ..common.schemas import Schema as Schema
from ..common.serde import DLQ_RULE_NAME_HEADER as DLQ_RULE_NAME_HEADER
from ..common.serde import RuleConditionError as RuleConditionError
from ..common.serde import RuleError as RuleError
from ..common.serde import SchemaId as SchemaId
from ..common.serde import SubjectNameStrategyType as SubjectNameStrategyType
from ..common.serde import get_original_key as get_original_key
from ..common.serde import topic_subject_name_strategy as topic_subject_name_strategy
from ..common.validation_options import default_validation_rule_executor as default_validation_rule_executor
from ..common.validation_rules import ValidationRuleError as ValidationRuleError
from ..common.validation_rules import ValidationRuleExecutor as ValidationRuleExecutor
from ..common.validation_rules import ValidationRulesExecution as ValidationRulesExecution
from ..error import SchemaRegistryError as SchemaRegistryError
from .schema_registry_client import AsyncSchemaRegistryClient
from .serde_builder import async_build_serde as async_build_serde

__all__ = ["AsyncAssociatedNameStrategy", "AsyncBaseDeserializer", "AsyncBaseSerde", "AsyncBaseSerializer"]


def blocking_client(value: Any) -> SchemaRegistryClient | Any:
    """An argument as the synchronous serde takes it: the synchronous client under an asyncio
    client, anything else as it is."""
    return value.sync_client() if isinstance(value, AsyncSchemaRegistryClient) else value


class AsyncBaseSerde:
    """An asyncio serde over ``_sync_type``, the synchronous serde of its format."""

    _sync_type: ClassVar[type[Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The synchronous serde's arguments, in its order (JSON's take the schema first)."""
        args = tuple(blocking_client(a) for a in args)
        kwargs = {k: blocking_client(v) for k, v in kwargs.items()}
        self._serde = self._sync_type(*args, **kwargs)

    def __await__(self) -> Generator[Any, None, Any]:
        """``await AsyncAvroSerializer(...)`` gives the serde, as confluent-kafka's (built already)."""
        return self._built().__await__()

    async def _built(self) -> AsyncBaseSerde:
        return self

    def own_schema_registry_client(self) -> None:
        """Close the registry client with the serde (a builder made it for this serde alone)."""
        self._serde.own_schema_registry_client()

    async def aclose(self) -> None:
        """The synchronous serde's ``close``, off the event loop."""
        await asyncio.to_thread(self._serde.close)

    async def _run(self, data: Any, ctx: SerializationContext | None) -> Any:
        return await asyncio.to_thread(self._serde, data, ctx)


class AsyncBaseSerializer(AsyncBaseSerde, Serializer):
    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> Coroutine[Any, Any, bytes | None]:  # type: ignore[override]
        """A coroutine of the framed bytes (None for None)."""
        return self._run(obj, ctx)


class AsyncBaseDeserializer(AsyncBaseSerde, Deserializer):
    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Coroutine[Any, Any, Any]:
        """A coroutine of the decoded object (None for None)."""
        return self._run(data, ctx)


def _settled(cluster_id: Any, failure: Exception | None) -> Callable[[], Any]:
    """A resolver giving what an asyncio resolver gave (or raising what it raised)."""

    def resolved() -> Any:
        if failure is not None:
            raise failure
        return cluster_id

    return resolved


class AsyncAssociatedNameStrategy(AssociatedNameStrategy):
    """`AssociatedNameStrategy` for asyncio programs: ``await strategy(ctx, record_name, client,
    conf)`` with an `AsyncSchemaRegistryClient`. The Kafka cluster id comes from a coroutine function
    (`set_async_cluster_id_resolver`), awaited on the loop only when a look-up needs it; the
    registry is asked in a worker thread."""

    _async_resolver: Callable[[], Awaitable[Any]] | None = None

    def set_async_cluster_id_resolver(self, resolver: Callable[[], Awaitable[Any]]) -> None:
        self._async_resolver = resolver

    async def __call__(  # type: ignore[override]
        self,
        ctx: SerializationContext | None,
        record_name: str | None,
        schema_registry_client: Any,
        conf: dict[str, Any] | None = None,
    ) -> str | None:
        resolver = self._cluster_id_resolver
        asks = ctx is not None and ctx.topic is not None and schema_registry_client is not None
        needs_id = asks and not (conf or {}).get(KAFKA_CLUSTER_ID) and not self._cached(ctx, record_name)
        if self._async_resolver is not None and needs_id:
            try:
                resolver = _settled(await self._async_resolver(), None)
            except Exception as e:
                resolver = _settled(None, e)
        client = blocking_client(schema_registry_client)
        return await asyncio.to_thread(self._lookup, ctx, record_name, client, conf, resolver)

    async def clear_cache(self) -> None:  # type: ignore[override]
        super().clear_cache()
