"""The ASSOCIATED subject name strategy: the subject the registry associates with the topic.

With explicit topic-subject associations the registry, not a naming rule, says which subject a
topic's keys or values are written under. It is a serde's default, as confluent-kafka's (2.16):
with no association (or a registry answering 404 there, one without the API) the subject is
TOPIC's, unless ``subject.name.strategy.fallback.type`` names RECORD, TOPIC_RECORD or NONE (an
error). The strategy asks once per (topic, key or value, record name) and keeps up to 1,000
answers, so only a serde's first record of a topic costs a request. The resource namespace asked
is ``subject.name.strategy.kafka.cluster.id``, else the cluster id of the SerializingProducer or
DeserializingConsumer the serde runs in (its resolver), else every cluster's ("-").

``subject_name_options`` reads a serde's subject naming options, this strategy's included.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from cachetools import LRUCache

from ...serialization import MessageField, SerializationContext, SerializationError
from ..common.serde import (
    SubjectNameStrategyType,
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)
from ..error import SchemaRegistryError
from .schema_registry_client import SchemaRegistryClient

__all__ = ["FALLBACK_TYPE", "KAFKA_CLUSTER_ID", "AssociatedNameStrategy", "subject_name_options"]

# Keys of ``subject.name.strategy.conf``.
KAFKA_CLUSTER_ID = "subject.name.strategy.kafka.cluster.id"
# Topics whose associated subject a strategy remembers.
DEFAULT_CACHE_CAPACITY = 1000
FALLBACK_TYPE = "subject.name.strategy.fallback.type"
# The resource namespace matching every cluster, used when no cluster id is configured.
NAMESPACE_WILDCARD = "-"

StrategyFunc = Callable[[SerializationContext | None, str | None], str | None]

STRATEGY_TYPE_MAP: dict[SubjectNameStrategyType, StrategyFunc] = {
    SubjectNameStrategyType.TOPIC: topic_subject_name_strategy,
    SubjectNameStrategyType.RECORD: record_subject_name_strategy,
    SubjectNameStrategyType.TOPIC_RECORD: topic_record_subject_name_strategy,
}


def strategy_type(value: Any, key: str) -> SubjectNameStrategyType:
    """``value`` (a SubjectNameStrategyType or its name, any case) as the enum; else a ValueError naming ``key``."""
    if isinstance(value, SubjectNameStrategyType):
        return value
    try:
        return SubjectNameStrategyType(str(value).upper())
    except ValueError:
        names = ", ".join(t.value for t in SubjectNameStrategyType)
        raise ValueError(f"Invalid value for {key}: {value!r}; valid values are: {names}") from None


def fallback_strategy(conf: dict[str, Any] | None) -> StrategyFunc | None:
    """The strategy naming the subject of a topic without an association; None for NONE (no subject)."""
    kind = strategy_type((conf or {}).get(FALLBACK_TYPE, SubjectNameStrategyType.TOPIC), FALLBACK_TYPE)
    if kind is SubjectNameStrategyType.ASSOCIATED:
        raise ValueError(f"Invalid value for {FALLBACK_TYPE}: ASSOCIATED cannot be its own fallback")
    return STRATEGY_TYPE_MAP.get(kind)


def subject_name_options(conf: dict[str, Any]) -> tuple[Callable[..., Any], dict[str, Any] | None]:
    """Pops a serde's subject naming options from ``conf``: the strategy (``subject.name.strategy``,
    a callable, wins over ``subject.name.strategy.type``; ASSOCIATED when neither is set) and
    ``subject.name.strategy.conf``. Bad values fail here, when the serde is made."""
    strategy_conf = conf.pop("subject.name.strategy.conf", None)
    if strategy_conf is not None and not isinstance(strategy_conf, dict):
        raise ValueError("subject.name.strategy.conf must be a dict value")
    kind = conf.pop("subject.name.strategy.type", None)
    func = conf.pop("subject.name.strategy", None)
    if func is not None:
        if not callable(func):
            # same text as confluent-kafka: its tests match on it
            raise ValueError("subject.name.strategy must be callable")
        return func, strategy_conf
    kind = strategy_type(SubjectNameStrategyType.ASSOCIATED if kind is None else kind, "subject.name.strategy.type")
    if kind is SubjectNameStrategyType.ASSOCIATED:
        fallback_strategy(strategy_conf)
        return AssociatedNameStrategy(), strategy_conf
    if kind is SubjectNameStrategyType.NONE:
        raise ValueError("subject.name.strategy.type NONE names no subject: it is only a fallback type")
    return STRATEGY_TYPE_MAP[kind], strategy_conf


class AssociatedNameStrategy:
    """``strategy(ctx, record_name, client, conf)``: the topic's associated subject, looked up under
    the namespace ``conf[KAFKA_CLUSTER_ID]`` (else the resolver's cluster id, else every cluster's,
    "-") and remembered; more than one association is ambiguous and a SerializationError.

    ``epoch`` grows whenever a remembered answer is forgotten (evicted, or `clear_cache`): a serde
    that keeps what an answer led to keeps it only while the epoch stays."""

    def __init__(self, cache_capacity: int = DEFAULT_CACHE_CAPACITY) -> None:
        self._cache: LRUCache[tuple[str, bool, str | None], str] = LRUCache(cache_capacity)
        self._lock = threading.Lock()
        self._cluster_id_resolver: Callable[[], Any] | None = None
        self.epoch = 0

    def set_cluster_id_resolver(self, resolver: Callable[[], Any]) -> None:
        """How to learn the Kafka cluster id (the namespace) when the conf names none: called on a
        look-up, never here, so making a client never waits on a broker. The latest one given wins."""
        self._cluster_id_resolver = resolver

    def __call__(
        self,
        ctx: SerializationContext | None,
        record_name: str | None,
        schema_registry_client: SchemaRegistryClient | None,
        conf: dict[str, Any] | None = None,
    ) -> str | None:
        return self._lookup(ctx, record_name, schema_registry_client, conf, self._cluster_id_resolver)

    def _cached(self, ctx: SerializationContext | None, record_name: str | None) -> bool:
        if ctx is None or ctx.topic is None:
            return False
        with self._lock:
            return (ctx.topic, ctx.field == MessageField.KEY, record_name) in self._cache

    def _lookup(
        self,
        ctx: SerializationContext | None,
        record_name: str | None,
        client: SchemaRegistryClient | None,
        conf: dict[str, Any] | None,
        resolver: Callable[[], Any] | None,
    ) -> str | None:
        """The subject, remembered or asked with ``resolver`` as the cluster id's source."""
        if ctx is None:
            raise ValueError("the associated subject name strategy needs a SerializationContext (the topic)")
        if ctx.topic is None:
            return None
        key = (ctx.topic, ctx.field == MessageField.KEY, record_name)
        with self._lock:
            subject = self._cache.get(key)
        if subject is None:
            subject = self._load(ctx, record_name, client, conf, resolver)
            if subject is not None:
                with self._lock:
                    held = len(self._cache)
                    self._cache[key] = subject
                    if len(self._cache) <= held:  # another answer made room
                        self.epoch += 1
        return subject

    def clear_cache(self) -> None:
        """Forgets every answer: the next record of each topic asks the registry again."""
        with self._lock:
            self._cache.clear()
            self.epoch += 1

    def _namespace(self, conf: dict[str, Any] | None, resolver: Callable[[], Any] | None) -> str:
        configured = (conf or {}).get(KAFKA_CLUSTER_ID)
        if configured:
            return str(configured)
        if resolver is None:
            return NAMESPACE_WILDCARD
        try:
            cluster_id = resolver()
        except Exception as e:
            raise SerializationError(
                f"the associated subject name strategy could not learn the Kafka cluster id (no broker "
                f"reached yet?); {KAFKA_CLUSTER_ID} names it: {e}"
            ) from e
        if not cluster_id:
            raise SerializationError(
                f"the associated subject name strategy got no Kafka cluster id; {KAFKA_CLUSTER_ID} names it"
            )
        return str(cluster_id)

    def _load(
        self,
        ctx: SerializationContext,
        record_name: str | None,
        client: SchemaRegistryClient | None,
        conf: dict[str, Any] | None,
        resolver: Callable[[], Any] | None,
    ) -> str | None:
        if client is None:  # nothing to ask: TOPIC's subject
            return topic_subject_name_strategy(ctx, record_name)
        otherwise = fallback_strategy(conf)
        namespace = self._namespace(conf, resolver)
        field = "key" if ctx.field == MessageField.KEY else "value"
        try:
            found = client.get_associations_by_resource_name(ctx.topic, namespace, "topic", [field])
        except SchemaRegistryError as e:
            if e.http_status_code != 404:  # a registry without the association API: no association
                raise
            found = []
        if len(found) > 1:
            subjects = [a.subject for a in found]
            raise SerializationError(
                f"Multiple associated subjects found for topic {ctx.topic!r} ({field}): {subjects}"
            )
        if found:
            return found[0].subject
        if otherwise is None:
            raise SerializationError(f"No associated subject found for topic {ctx.topic!r} ({field})")
        return otherwise(ctx, record_name)
