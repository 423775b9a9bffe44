"""What every Schema Registry serializer and deserializer shares: options, subject and schema choice.

A serializer picks its writer schema per subject: ``use.schema.id`` (that id), else
``use.latest.with.metadata`` / ``use.latest.version`` (the registry's), else its own schema,
registered (``auto.register.schemas``, default) or looked up. The registry client caches every
answer, so a steady stream of records costs no request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...serialization import Deserializer, MessageField, SerializationContext, SerializationError, Serializer
from ..common.rules import ErrorAction as ErrorAction
from ..common.rules import NoneAction as NoneAction
from ..common.rules import RuleAction as RuleAction
from ..common.rules import RuleContext as RuleContext
from ..common.schema_registry_client import RegisteredSchema, Schema
from ..common.schemas import Rule as Rule
from ..common.schemas import RuleKind as RuleKind
from ..common.schemas import RuleMode as RuleMode
from ..common.schemas import RulePhase as RulePhase
from ..common.schemas import RuleSet as RuleSet
from ..common.serde import DLQ_RULE_NAME_HEADER as DLQ_RULE_NAME_HEADER
from ..common.serde import (
    ORIGINAL_KEY,
    SchemaId,
    dual_schema_id_deserializer,
    prefix_schema_id_serializer,
)
from ..common.serde import RuleConditionError as RuleConditionError
from ..common.serde import RuleError as RuleError
from ..common.serde import SubjectNameStrategyType as SubjectNameStrategyType
from ..common.serde import get_original_key as get_original_key
from ..common.serde import topic_subject_name_strategy as topic_subject_name_strategy
from ..common.validation_options import ValidationOptions, raise_violations
from ..common.validation_options import default_validation_rule_executor as default_validation_rule_executor
from ..common.validation_rules import ValidationRuleError
from ..common.validation_rules import ValidationRuleExecutor as ValidationRuleExecutor
from ..common.validation_rules import ValidationRulesExecution as ValidationRulesExecution
from ..error import SchemaRegistryError
from .associated_name_strategy import DEFAULT_CACHE_CAPACITY as DEFAULT_CACHE_CAPACITY
from .associated_name_strategy import FALLBACK_TYPE, KAFKA_CLUSTER_ID, AssociatedNameStrategy, subject_name_options
from .associated_name_strategy import NAMESPACE_WILDCARD as NAMESPACE_WILDCARD
from .associated_name_strategy import STRATEGY_TYPE_MAP as STRATEGY_TYPE_MAP
from .rule_runner import Migration as Migration
from .rule_runner import RuleRunner
from .schema_registry_client import SchemaRegistryClient
from .serde_builder import build_serde as build_serde

__all__ = [
    "FALLBACK_TYPE",
    "KAFKA_CLUSTER_ID",
    "AssociatedNameStrategy",
    "BaseDeserializer",
    "BaseSerde",
    "BaseSerializer",
]


def _bool(conf: dict[str, Any], key: str, default: bool) -> bool:
    value = conf.pop(key, default)
    if not isinstance(value, bool):
        # same text as confluent-kafka: its tests match on it
        raise ValueError(f"{key} must be a boolean value")
    return value


def _callable(conf: dict[str, Any], key: str, default: Callable[..., Any]) -> Callable[..., Any]:
    value: Callable[..., Any] = conf.pop(key, default)
    if not callable(value):
        # same text as confluent-kafka: its tests match on it
        raise ValueError(f"{key} must be callable")
    return value


class BaseSerde:
    """What a serializer and a deserializer of every format share: options, subject and schema
    choice, rules, and what ``close`` releases."""

    _registry: SchemaRegistryClient
    _owns_registry = False
    _rules: RuleRunner
    _subject_name_func: Callable[..., Any]
    _use_latest_version: bool
    _use_latest_with_metadata: dict[str, str] | None
    # The form schemas are asked of the registry in (its ``format`` parameter): None for the
    # registered text; Protobuf asks for ``serialized`` (a base64 FileDescriptorProto), since a
    # registry keeps .proto text and gives that unless asked.
    _schema_format: str | None = None

    def _common_conf(self, conf: dict[str, Any]) -> None:
        self._use_latest_version = _bool(conf, "use.latest.version", False)
        md = conf.pop("use.latest.with.metadata", None)
        if md is not None and not isinstance(md, dict):
            raise ValueError(f"use.latest.with.metadata must be a dict, not {type(md).__name__}")
        self._use_latest_with_metadata = md
        self._subject_name_func, self._subject_name_conf = subject_name_options(conf)
        # The associated strategy (the default) asks the registry: it is called with the client
        # and its conf too.
        func = self._subject_name_func
        self._associated = func if isinstance(func, AssociatedNameStrategy) else None
        self._strategy_accepts_client = self._associated is not None
        self._asked_topics: set[tuple[str | None, Any]] = set()
        self._asked_epoch = 0

    def set_cluster_id_resolver(self, resolver: Callable[[], Any]) -> None:
        """The Kafka cluster id's source (a SerializingProducer's or DeserializingConsumer's), for
        the associated strategy's namespace; other strategies need none."""
        if self._associated is not None:
            self._associated.set_cluster_id_resolver(resolver)

    def own_schema_registry_client(self) -> None:
        """Close the registry client with the serde: a builder made that client for it alone."""
        self._owns_registry = True

    def close(self) -> None:
        """Release what is this serde's alone: a dedicated rule registry's members and a client a
        builder made for it (never the application's client or the process-wide registry).
        Calling it again does nothing."""
        try:
            self._rules.close()
        finally:
            if self._owns_registry:
                self._owns_registry = False
                if self._registry is not None:
                    self._registry.close()

    def _rules_conf(self, rule_conf: dict[str, Any] | None, rule_registry: Any) -> None:
        """The data-contract rules this serde runs: the executors of ``rule_registry`` (else the
        process-wide one), configured with the registry client's settings and ``rule_conf``."""
        self._rules = RuleRunner(self._registry, rule_conf, rule_registry)

    def _asked(self, ctx: SerializationContext | None) -> bool:
        """Whether the associated strategy holds this topic's and field's answer already (so asking
        it again would cost no request): what a serde may skip it on. True with no such strategy."""
        assoc = self._associated
        if assoc is None or ctx is None:
            return True
        if assoc.epoch != self._asked_epoch:  # it forgot something: ask it again
            self._asked_topics.clear()
            self._asked_epoch = assoc.epoch
            return False
        return (ctx.topic, ctx.field) in self._asked_topics

    def _note_asked(self, ctx: SerializationContext | None) -> None:
        if self._associated is not None and ctx is not None:
            self._asked_topics.add((ctx.topic, ctx.field))

    def _subject(self, ctx: SerializationContext | None, record_name: str | None) -> str | None:
        if self._strategy_accepts_client:
            return self._subject_name_func(ctx, record_name, self._registry, self._subject_name_conf)  # type: ignore[no-any-return]
        return self._subject_name_func(ctx, record_name)  # type: ignore[no-any-return]

    def _latest(self, subject: str) -> RegisteredSchema | None:
        if self._use_latest_with_metadata is not None:
            return self._registry.get_latest_with_metadata(
                subject, self._use_latest_with_metadata, deleted=True, fmt=self._schema_format
            )
        if self._use_latest_version:
            return self._registry.get_latest_version(subject, self._schema_format)
        return None


_KEY = MessageField.KEY


class BaseSerializer(BaseSerde, Serializer):
    """Options shared by the formats: auto.register.schemas, normalize.schemas, use.schema.id,
    use.latest.version, use.latest.with.metadata, subject.name.strategy (.type, .conf), schema.id.serializer,
    validation.rules.execution (.fail.fast, .executor)."""

    _schema_type = ""

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
        try:
            return self._call(obj, ctx)
        finally:  # the key as written, for the value's rule actions (a DLQ record carries it)
            if ctx is not None and ctx.field is _KEY:
                ORIGINAL_KEY.set(obj)
            elif ORIGINAL_KEY.get() is not None:  # a value-only producer only reads it
                ORIGINAL_KEY.set(None)

    def _call(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        raise NotImplementedError

    def _serializer_conf(self, conf: dict[str, Any]) -> None:
        self._auto_register = _bool(conf, "auto.register.schemas", True)
        self._normalize_schemas = _bool(conf, "normalize.schemas", False)
        use_id = conf.pop("use.schema.id", None)
        if use_id is not None and (isinstance(use_id, bool) or not isinstance(use_id, int)):
            raise ValueError(f"use.schema.id must be an int (a schema id), not {use_id!r}")
        self._use_schema_id: int | None = use_id
        self._common_conf(conf)
        if self._use_latest_version and self._auto_register:
            raise ValueError(
                "use.latest.version writes with the registry's schema, auto.register.schemas with ours: set only one"
            )
        self._schema_id_serializer = _callable(conf, "schema.id.serializer", prefix_schema_id_serializer)
        self._validation = ValidationOptions(conf)
        self._known: dict[str, tuple[SchemaId, Schema]] = {}  # subject -> immutable (id, schema)
        if conf:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(f"Unrecognized properties: {', '.join(conf)}")

    def _writer(self, subject: str, schema: Schema | None) -> tuple[SchemaId, Schema]:
        """The schema to write with and its id for ``subject``. Ids the registry gave for a schema
        (registered, looked up, or ``use.schema.id``) never change: remembered per subject, so a
        record costs a dict look-up; "latest" answers are asked of the client (its TTL cache)."""
        known = self._known.get(subject)
        if known is not None:
            return known
        if self._use_schema_id is not None:
            found = self._registry.get_schema(self._use_schema_id, subject, self._schema_format)
            answer = SchemaId(self._schema_type, self._use_schema_id), found
            self._known[subject] = answer
            return answer
        registered = self._latest(subject)
        if registered is not None:
            return SchemaId(self._schema_type, registered.schema_id, registered.guid), registered.schema
        if schema is None:
            raise SerializationError("no schema to write with: give one or set use.latest.version")
        if self._auto_register:
            registered = self._registry.register_schema_full_response(subject, schema, self._normalize_schemas)
        else:
            registered = self._registry.lookup_schema(subject, schema, self._normalize_schemas)
        answer = SchemaId(self._schema_type, registered.schema_id, registered.guid), schema
        self._known[subject] = answer
        return answer

    def _check_inline_rules(self, phase: ValidationRulesExecution, domain_rules: bool, schema: Any, value: Any) -> None:
        """The schema's inline validation rules on the record, when they run at ``phase`` (before or
        after the domain rules, which ``domain_rules`` says the record has): a SerializationError
        listing the violations."""
        options = self._validation
        if options.executor is not None and options.runs(phase, domain_rules):
            raise_violations(self._inline_violations(options.executor, schema, value, options.fail_fast))

    def _inline_violations(
        self, executor: ValidationRuleExecutor, schema: Any, value: Any, fail_fast: bool
    ) -> list[ValidationRuleError]:
        """The format's walk of ``value`` against ``schema`` (its parsed form) for inline rules."""
        raise NotImplementedError

    def _frame(self, payload: bytes, ctx: SerializationContext | None, schema_id: SchemaId) -> bytes:
        return self._schema_id_serializer(payload, ctx, schema_id)  # type: ignore[no-any-return]


class BaseDeserializer(BaseSerde, Deserializer):
    """Options shared by the formats: use.latest.version, use.latest.with.metadata,
    subject.name.strategy (.type, .conf), schema.id.deserializer."""

    _schema_type = ""

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        try:
            return self._call(data, ctx)
        finally:  # the key's bytes as read, for the value's rule actions (a DLQ record carries them)
            if ctx is not None and ctx.field is _KEY:
                ORIGINAL_KEY.set(data)
            elif ORIGINAL_KEY.get() is not None:
                ORIGINAL_KEY.set(None)

    def _call(self, data: bytes | None, ctx: SerializationContext | None) -> Any:
        raise NotImplementedError

    def _deserializer_conf(self, conf: dict[str, Any]) -> None:
        self._common_conf(conf)
        self._schema_id_deserializer = _callable(conf, "schema.id.deserializer", dual_schema_id_deserializer)
        if conf:
            # same text as confluent-kafka: its tests match on it
            raise ValueError(f"Unrecognized properties: {', '.join(conf)}")

    def _reader_subject(
        self, ctx: SerializationContext | None, needed: bool, writer_name: Callable[[], str | None]
    ) -> str | None:
        """The subject a payload is read under, asked as confluent-kafka asks (the strategy without
        a record name, then with the writer's): when the reading needs it (a "latest" reader
        schema, rules) and of the associated strategy always, whose look-up (and its failure) the
        first record of a topic costs on confluent-kafka too."""
        if not needed and (self._associated is None or ctx is None or self._registry is None):
            return None
        subject = self._subject(ctx, None)
        if subject is None:
            subject = self._subject(ctx, writer_name())
        self._note_asked(ctx)
        return subject

    def _unframe(self, data: bytes, ctx: SerializationContext | None) -> tuple[SchemaId, Any]:
        schema_id = SchemaId(self._schema_type)
        payload = self._schema_id_deserializer(data, ctx, schema_id)
        return schema_id, payload

    def _writer_schema(
        self, schema_id: SchemaId, ctx: SerializationContext | None, subject: str | None = None
    ) -> Schema:
        """The schema the payload names (asked as registered under ``subject``, when known); one
        the registry does not know is a SerializationError."""
        try:
            if schema_id.id is not None:
                return self._registry.get_schema(schema_id.id, subject, self._schema_format)
            if schema_id.guid is not None:
                return self._registry.get_schema_by_guid(str(schema_id.guid), self._schema_format)
        except SchemaRegistryError as e:
            if e.http_status_code != 404:
                raise
            raise SerializationError(f"unknown schema {schema_id.id or schema_id.guid}{where(ctx)}: {e}") from e
        raise SerializationError(f"the payload names no schema{where(ctx)}")


def where(ctx: SerializationContext | None) -> str:
    """``topic 'x' (value)`` for error messages."""
    return "" if ctx is None else f" (topic {ctx.topic!r}, {ctx.field})"
